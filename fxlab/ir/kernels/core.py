"""Kernels of the ops every graph has: constants, casts, copies and assignment."""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.registry import register_kernel
from fxlab.ir.model import DTYPE_FROM_TORCHAIR_NUMBER, IrOp, torch_dtype


@register_kernel("Const")
def const(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [attrs["value"]]


@register_kernel("Cast")
def cast(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [inputs[0].to(torch_dtype(DTYPE_FROM_TORCHAIR_NUMBER[attrs["dst_type"]]))]


@register_kernel("TensorMove")
def tensor_move(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [inputs[0].clone()]


@register_kernel("Identity")
def identity(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [inputs[0]]


@register_kernel("Assign")
def assign(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """``Assign(ref, value)``: write ``value`` into ``ref`` in place; output is ``ref``."""
    ref, value = inputs
    with torch.no_grad():
        ref.copy_(value)
    return [ref]
