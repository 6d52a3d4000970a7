"""Kernels of ``NLLLoss`` and ``NLLLossGrad``."""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.registry import register_kernel
from fxlab.ir.model import IrOp

aten = torch.ops.aten
REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


@register_kernel("NLLLoss")
def nll_loss(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, target, weight = inputs
    reduction = REDUCTIONS[attrs.get("reduction", "mean")]
    return list(aten.nll_loss_forward(x, target.long(), weight, reduction, attrs.get("ignore_index", -100)))


@register_kernel("NLLLossGrad")
def nll_loss_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, y_grad, target, weight, total_weight = inputs
    reduction = REDUCTIONS[attrs.get("reduction", "mean")]
    return [aten.nll_loss_backward(y_grad, x, target.long(), weight, reduction, attrs.get("ignore_index", -100), total_weight)]
