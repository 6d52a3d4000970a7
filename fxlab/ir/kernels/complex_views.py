"""Kernels of ``Real``, ``Imag``, ``Complex``, ``InplaceIndexAdd``, ``EmbeddingBag`` and
``RightShift``."""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.registry import register_kernel
from fxlab.ir.kernels.elementwise import same_type
from fxlab.ir.model import IrOp

aten = torch.ops.aten
MODES = {"sum": 0, "mean": 1, "max": 2}


@register_kernel("Real")
def real(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [torch.real(inputs[0]).clone()]


@register_kernel("Imag")
def imag(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [torch.imag(inputs[0]).clone()]


@register_kernel("Complex")
def complex_(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    real_part, imag_part = inputs
    same_type(op, real_part, imag_part)
    return [torch.complex(real_part, imag_part)]


@register_kernel("InplaceIndexAdd")
def inplace_index_add(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """Adds ``alpha * updates`` into ``var`` along ``axis`` in place; returns ``var``."""
    var, indices, updates, alpha = inputs
    scale = 1 if alpha is None else alpha.reshape(()).item()
    var.index_add_(attrs["axis"], indices.long(), updates, alpha=scale)
    return [var]


@register_kernel("EmbeddingBag")
def embedding_bag(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    weight, indices, offsets, per_sample_weights = inputs
    args = (attrs.get("scale_grad_by_freq", False), MODES[attrs.get("mode", "mean")], attrs.get("sparse", False), per_sample_weights)
    return list(
        aten._embedding_bag(
            weight, indices.long(), offsets.long(), *args, attrs.get("include_last_offset", False), attrs.get("padding_idx", -1)
        )
    )


@register_kernel("RightShift")
def right_shift(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, y = inputs
    same_type(op, x, y)
    return [torch.bitwise_right_shift(x, y)]
