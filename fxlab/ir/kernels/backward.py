"""Kernels of GE's gradient ops (``*Grad``) and ``MseLoss``: each computed with the ATen
backward it stands for, operands taken in GE's order."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from fxlab.ir.kernels.registry import register_kernel
from fxlab.ir.kernels.rng import unpack_mask
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
    # The derivative of GE's Gelu, which is the tanh approximation.
    return [aten.gelu_backward(dy, x, approximate="tanh")]


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


@register_kernel("DropOutDoMask")
def drop_out_do_mask(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """``x * mask / keep_prob``, the mask given one element per value (ATen's bool mask)
    or bit-packed as ``StatelessDropOutGenMask`` makes it (uint8)."""
    x, mask, keep_prob = inputs
    if mask.dtype == torch.uint8:
        mask = unpack_mask(mask, x.numel()).reshape(x.shape)
    return [x * mask.to(x.dtype) / keep_prob.to(x.dtype)]


@register_kernel("PadV3Grad")
def pad_v3_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """The gradient of ``PadV3`` (reflect / edge), by autograd through ``F.pad``."""
    grad, paddings = inputs
    pads = [int(p) for p in paddings.reshape(-1).tolist()][-2 * grad.dim() :]
    before, after = pads[0::2], pads[1::2]
    source = torch.zeros([s - b - a for s, b, a in zip(grad.shape, before, after)], dtype=grad.dtype, requires_grad=True)
    padded_dims = [i for i in range(grad.dim()) if before[i] or after[i]]
    first = min(padded_dims) if padded_dims else grad.dim()
    torch_pads = [v for i in reversed(range(first, grad.dim())) for v in (before[i], after[i])]
    mode = {"reflect": "reflect", "edge": "replicate"}[attrs.get("mode", "reflect")]
    with torch.enable_grad():
        F.pad(source, torch_pads, mode=mode).backward(grad)
    return [source.grad]


@register_kernel("LayerNormGradV3")
def layer_norm_grad_v3(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    dy, x, rstd, mean, gamma = inputs
    # A bias of zeros: ATen needs one to return the bias gradient (GE always does).
    return list(aten.native_layer_norm_backward(dy, x, list(gamma.shape), mean, rstd, gamma, torch.zeros_like(gamma), [True, True, True]))


@register_kernel("AdaptiveAvgPool2dGrad")
def adaptive_avg_pool2d_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    grad = inputs[0]
    return [aten._adaptive_avg_pool2d_backward(grad, torch.empty(attrs["orig_input_shape"], dtype=grad.dtype))]


@register_kernel("AvgPoolV2Grad")
def avg_pool_v2_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    shape, grad = inputs
    source = torch.empty([int(s) for s in shape.tolist()], dtype=grad.dtype)
    ksize, strides, pads = attrs["ksize"][2:], attrs["strides"][2:], attrs.get("pads", [0, 0, 0, 0])
    divisor = attrs.get("divisor_override", 0) or None
    args = (list(ksize), list(strides), [pads[0], pads[2]], attrs.get("ceil_mode", False), not attrs.get("exclusive", True), divisor)
    return [aten.avg_pool2d_backward(grad, source, *args)]


@register_kernel("MaxPoolGradWithArgmaxV1")
def max_pool_grad_with_argmax_v1(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """``argmax`` as fxlab's MaxPoolWithArgmaxV1 kernel gives it: ATen's flat indices."""
    x, grad, argmax = inputs
    ksize, strides, pads, dilation = (list(attrs[k])[1:3] for k in ("ksize", "strides", "pads", "dilation"))
    return [aten.max_pool2d_with_indices_backward(grad, x, ksize, strides, pads, dilation, attrs.get("ceil_mode", False), argmax.long())]


@register_kernel("ResizeNearestNeighborV2Grad")
def resize_nearest_neighbor_v2_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    grads, size = inputs
    input_size = [grads.shape[0], grads.shape[1], *[int(s) for s in size.tolist()]]
    return [aten.upsample_nearest2d_backward(grads, list(grads.shape[2:]), input_size)]


def _conv_args(attrs: dict[str, Any]) -> tuple[list[int], list[int], list[int], int]:
    pads = list(attrs["pads"])
    return list(attrs["strides"])[2:], [pads[0], pads[2]], list(attrs.get("dilations", [1, 1, 1, 1]))[2:], attrs.get("groups", 1)


@register_kernel("Conv2DBackpropInput")
def conv2d_backprop_input(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    size, weight, grad = inputs
    stride, padding, dilation, groups = _conv_args(attrs)
    source = torch.empty([int(s) for s in size.tolist()], dtype=grad.dtype)
    out = aten.convolution_backward(grad, source, weight, None, stride, padding, dilation, False, [0, 0], groups, [True, False, False])
    return [out[0]]


@register_kernel("Conv2DBackpropFilter")
def conv2d_backprop_filter(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, filter_size, grad = inputs
    stride, padding, dilation, groups = _conv_args(attrs)
    weight = torch.empty([int(s) for s in filter_size.tolist()], dtype=x.dtype)
    out = aten.convolution_backward(grad, x, weight, None, stride, padding, dilation, False, [0, 0], groups, [False, True, False])
    return [out[1].float()]


@register_kernel("FlattenV2")
def flatten_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [torch.flatten(inputs[0], attrs.get("axis", 1), attrs.get("end_axis", -1))]
