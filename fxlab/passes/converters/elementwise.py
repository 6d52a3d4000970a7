"""Element-wise arithmetic converters."""
from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import ge_dtype
from fxlab.passes.converters.registry import Sample, register_converter

aten = torch.ops.aten


def _binary_samples() -> list[Sample]:
    return [Sample((torch.randn(2, 3), torch.randn(2, 3))), Sample((torch.randn(2, 3), 2.5))]


@register_converter(aten.add.Tensor, samples=_binary_samples)
def convert_add(self: ge.Tensor, other: Any, *, alpha: Any = 1, meta_outputs: Any = None) -> ge.Tensor:
    """add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""
    target = ge_dtype(meta_outputs.dtype)
    x1, x2 = ge.promote(target, self, other)
    if alpha != 1:
        x2 = ge.op1("Mul", {"x1": x2, "x2": ge.const(alpha, target)})
    return ge.op1("Add", {"x1": x1, "x2": x2})
