"""Kernels of GE's gradient ops (``*Grad``) and ``MseLoss``: each computed with the ATen
backward it stands for, operands taken in GE's order."""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from fxlab.ir.execute import register_kernel
from fxlab.ir.model import IrOp

aten = torch.ops.aten
REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


@register_kernel("SigmoidGrad")
def sigmoid_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    y, dy = inputs
    return [aten.sigmoid_backward(dy, y)]


@register_kernel("TanhGrad")
def tanh_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    y, dy = inputs
    return [aten.tanh_backward(dy, y)]


@register_kernel("ReluGrad")
def relu_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    gradients, features = inputs
    return [aten.threshold_backward(gradients, features, 0)]


@register_kernel("ThresholdGradV2D")
def threshold_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    gradients, features = inputs
    return [aten.threshold_backward(gradients, features, attrs["threshold"])]


@register_kernel("HardSigmoidGrad")
def hard_sigmoid_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    grads, x = inputs
    alpha, beta = attrs.get("alpha", 1 / 6), attrs.get("beta", 0.5)
    inside = (x * alpha + beta > 0) & (x * alpha + beta < 1)
    return [torch.where(inside, grads * alpha, torch.zeros_like(grads))]


@register_kernel("HardSwishGrad")
def hard_swish_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    grad, x = inputs
    return [aten.hardswish_backward(grad, x)]


@register_kernel("HardtanhGrad")
def hardtanh_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    result, grad = inputs
    return [aten.hardtanh_backward(grad, result, attrs.get("min_val", -1.0), attrs.get("max_val", 1.0))]


@register_kernel("LeakyReluGrad")
def leaky_relu_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    gradients, features = inputs
    return [aten.leaky_relu_backward(gradients, features, attrs.get("negative_slope", 0.0), False)]


@register_kernel("EluGradV2")
def elu_grad_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    grads, activations = inputs
    args = (attrs.get("alpha", 1.0), attrs.get("scale", 1.0), attrs.get("input_scale", 1.0), attrs.get("is_result", False))
    return [aten.elu_backward(grads, *args, activations)]


@register_kernel("GeluGrad")
def gelu_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    dy, x, _ = inputs
    return [aten.gelu_backward(dy, x)]


@register_kernel("GLUGrad")
def glu_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    y_grad, x = inputs
    return [aten.glu_backward(y_grad, x, attrs.get("dim", -1))]


@register_kernel("LogSigmoidGrad")
def log_sigmoid_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    grads, features = inputs
    return [grads * torch.sigmoid(-features)]


@register_kernel("PReluGrad")
def prelu_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    grads, features, weights = inputs
    return list(aten._prelu_kernel_backward(grads, features, weights))


@register_kernel("SoftmaxGrad")
def softmax_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    softmax, grad = inputs
    return [aten._softmax_backward_data(grad, softmax, attrs.get("axes", [-1])[0], softmax.dtype)]


@register_kernel("LogSoftmaxGrad")
def log_softmax_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    grad, x = inputs
    return [aten._log_softmax_backward_data(grad, x, attrs.get("axis", [-1])[0], x.dtype)]


@register_kernel("MseLoss")
def mse_loss(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    predict, label = inputs
    return [F.mse_loss(predict, label, reduction=attrs.get("reduction", "mean"))]


@register_kernel("MseLossGrad")
def mse_loss_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    predict, label, dout = inputs
    return [aten.mse_loss_backward(dout, predict, label, REDUCTIONS[attrs.get("reduction", "mean")])]


@register_kernel("EmbeddingDenseGrad")
def embedding_dense_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    grad, indices = inputs
    args = (attrs["num_weights"], attrs.get("padding_idx", -1), attrs.get("scale_grad_by_freq", False))
    return [aten.embedding_dense_backward(grad, indices.long(), *args)]
