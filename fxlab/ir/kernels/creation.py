"""Kernels of GE ops that make new tensors: ZerosLike, OnesLike, Empty, Range (Fill is
with the shape kernels)."""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.registry import register_kernel
from fxlab.ir.kernels.elementwise import require
from fxlab.ir.model import DTYPE_FROM_TORCHAIR_NUMBER, IrOp, torch_dtype

_INDEX_TYPES = frozenset({torch.int32, torch.int64})


def _dims(op: IrOp, value: torch.Tensor, name: str) -> list[int]:
    require(op, value, _INDEX_TYPES, name)
    return [int(d) for d in value.reshape(-1).tolist()]


@register_kernel("ZerosLike")
def zeros_like(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [torch.zeros_like(inputs[0])]


@register_kernel("OnesLike")
def ones_like(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [torch.ones_like(inputs[0])]


@register_kernel("Empty")
def empty(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """Uninitialised memory on the device; zeros here (``init`` asks for zeros anyway)."""
    require(op, inputs[0], {torch.int32}, "shape")
    dtype = torch_dtype(DTYPE_FROM_TORCHAIR_NUMBER[attrs.get("dtype", 3)])
    return [torch.zeros(_dims(op, inputs[0], "shape"), dtype=dtype)]


@register_kernel("Range")
def range_(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """[start, limit) by delta, in the type the three inputs promote to."""
    start, limit, delta = inputs
    dtype = torch.promote_types(torch.promote_types(start.dtype, limit.dtype), delta.dtype)
    return [torch.arange(start.item(), limit.item(), delta.item(), dtype=dtype)]
