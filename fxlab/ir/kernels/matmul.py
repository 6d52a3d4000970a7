"""Kernels of GE matrix-product ops."""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.registry import register_kernel
from fxlab.ir.model import IrOp


def _transposed(x: torch.Tensor, flag: bool) -> torch.Tensor:
    return x.transpose(-1, -2) if flag else x


@register_kernel("MatMul", "MatMulV2")
def matmul(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x1, x2, bias = inputs[0], inputs[1], inputs[2] if len(inputs) > 2 else None
    x1, x2 = _transposed(x1, attrs.get("transpose_x1", False)), _transposed(x2, attrs.get("transpose_x2", False))
    if bias is None:
        return [torch.matmul(x1, x2)]
    if x1.dim() == 2 and x2.dim() == 2:
        # The bias joins the product before it is rounded (as addmm, and the cube unit,
        # add it): rounding the product first differs in float16 by an ulp.
        return [torch.addmm(bias, x1, x2)]
    return [torch.matmul(x1, x2) + bias]


@register_kernel("BatchMatMul")
def batch_matmul(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x1 = _transposed(inputs[0], attrs.get("adj_x1", False))
    x2 = _transposed(inputs[1], attrs.get("adj_x2", False))
    return [torch.matmul(x1, x2)]


@register_kernel("AxpyV2")
def axpy_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """``y = x1 + alpha * x2``."""
    x1, x2, alpha = inputs
    return [x1 + alpha * x2]
