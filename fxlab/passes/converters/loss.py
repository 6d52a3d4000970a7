"""Loss converters: ``nll_loss_forward`` → ``NLLLoss`` (int64 targets cast to int32, as
TorchAir does), ``nll_loss_backward`` → ``NLLLossGrad`` (a missing weight made of ones)."""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType, ge_dtype
from fxlab.passes.converters.index import gather_v2
from fxlab.passes.converters.promotion import dtype_promote, scalar_input
from fxlab.passes.converters.registry import Sample, register_converter
from fxlab.passes.converters.shape import shape_of

aten = torch.ops.aten
REDUCTIONS = ("none", "mean", "sum")


def _nll_samples() -> list[Sample]:
    logits = torch.log_softmax(torch.randn(4, 5), -1)
    target = torch.tensor([0, 3, 4, 1])
    return [
        Sample((logits, target, None, 1, -100)),
        Sample((logits, target, torch.rand(5) + 0.5, 2, 3)),
        Sample((logits, target, None, 0, -100)),
    ]


@register_converter(aten.nll_loss_forward.default, samples=_nll_samples)
def convert_nll_loss_forward(
    self: ge.Tensor, target: ge.Tensor, weight: ge.Tensor | None, reduction: int, ignore_index: Any, meta_outputs: Any = None
) -> list[ge.Tensor]:
    """nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) -> (Tensor output, Tensor total_weight)"""
    self = dtype_promote(ge_dtype(meta_outputs[0].dtype), self)
    if target.dtype == DataType.DT_INT64:
        target = dtype_promote(DataType.DT_INT32, target)
    attrs = {"reduction": REDUCTIONS[reduction], "ignore_index": int(ignore_index)}
    return ge.op("NLLLoss", {"x": self, "target": target, "weight": weight}, attrs, outputs=("y", "total_weight"))


def _nll_backward_samples() -> list[Sample]:
    logits = torch.log_softmax(torch.randn(4, 5), -1)
    target = torch.tensor([0, 3, 4, 1])
    weight = torch.rand(5) + 0.5
    total = torch.tensor(4.0)
    return [
        Sample((torch.tensor(1.0), logits, target, None, 1, -100, total)),
        Sample((torch.tensor(0.5), logits, target, weight, 2, 3, weight[target].sum())),
        Sample((torch.randn(4), logits, target, None, 0, -100, torch.tensor(0.0))),
    ]


@register_converter(aten.nll_loss_backward.default, samples=_nll_backward_samples)
def convert_nll_loss_backward(
    grad_output: ge.Tensor,
    self: ge.Tensor,
    target: ge.Tensor,
    weight: ge.Tensor | None,
    reduction: int,
    ignore_index: Any,
    total_weight: ge.Tensor,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index, Tensor total_weight) -> Tensor"""
    if weight is None:
        classes = gather_v2(shape_of(self), scalar_input(1), scalar_input(0))
        weight = ge.op1("Fill", {"dims": classes, "value": scalar_input(1.0)}, dtypes=DataType.DT_FLOAT)
    self, grad_output, weight, total_weight = dtype_promote(ge_dtype(meta_outputs.dtype), self, grad_output, weight, total_weight)
    target = dtype_promote(DataType.DT_INT32, target)
    inputs = {"x": self, "y_grad": grad_output, "target": target, "weight": weight, "total_weight": total_weight}
    attrs = {"reduction": REDUCTIONS[reduction], "ignore_index": int(ignore_index)}
    return ge.op("NLLLossGrad", inputs, attrs, outputs=("x_grad",))[0]
