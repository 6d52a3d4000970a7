"""Kernels of element-wise GE ops."""
from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.execute import register_kernel
from fxlab.ir.model import IrOp


@register_kernel("Add")
def add(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [torch.add(inputs[0], inputs[1])]


@register_kernel("Mul")
def mul(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [torch.mul(inputs[0], inputs[1])]
