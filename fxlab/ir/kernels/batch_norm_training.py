"""Kernels of the training batch-norm ops (``BNTrainingUpdateGrad``,
``BNTrainingReduceGrad``, ``BNInferGrad``, the SyncBatchNorm backward pieces),
``MaxPool3DWithArgmaxV2`` and ``Div``.

The gradient ops read ``batch_variance`` as GE's kernels do: a variance, normalised
with ``(variance + epsilon) ** -0.5``.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from fxlab.ir.kernels.registry import KERNELS, register_kernel
from fxlab.ir.kernels.elementwise import same_type
from fxlab.ir.model import IrOp

_CHANNEL_AXES = (0, 2, 3)


def _per_channel(v: torch.Tensor) -> torch.Tensor:
    return v.reshape(1, -1, 1, 1)


@register_kernel("BNTrainingUpdateGrad")
def bn_training_update_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    grads, x, mean, variance = inputs
    invstd = torch.rsqrt(variance + attrs.get("epsilon", 1e-4))
    centred = (x.float() - _per_channel(mean)) * _per_channel(invstd)
    return [(grads.float() * centred).sum(_CHANNEL_AXES), grads.float().sum(_CHANNEL_AXES)]


@register_kernel("BNTrainingReduceGrad")
def bn_training_reduce_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    grads, x, diff_scale, diff_offset, scale, mean, variance = inputs
    invstd = torch.rsqrt(variance + attrs.get("epsilon", 1e-4))
    count = grads.numel() // grads.shape[1]
    centred = (x - _per_channel(mean)) * _per_channel(invstd)
    inner = grads - _per_channel(diff_offset) / count - centred * _per_channel(diff_scale) / count
    return [(inner * _per_channel(scale) * _per_channel(invstd)).to(grads.dtype)]


@register_kernel("BNInferGrad")
def bn_infer_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    grads, scale, variance = inputs
    return [(grads * _per_channel(scale) * torch.rsqrt(_per_channel(variance) + attrs.get("epsilon", 1e-4))).to(grads.dtype)]


@register_kernel("SyncBatchNormBackwardReduce")
def sync_batch_norm_backward_reduce(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    sum_dy, sum_dy_x, mean, invstd = inputs
    sum_dy_xmu = sum_dy_x - mean * sum_dy
    return [sum_dy_xmu, sum_dy_xmu * invstd]


@register_kernel("SyncBatchNormBackwardElemt")
def sync_batch_norm_backward_elemt(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    grad, x, mean, invstd, weight, mean_dy, mean_dy_xmu = inputs
    return [(grad - mean_dy - (x - mean) * invstd * invstd * mean_dy_xmu) * invstd * weight]


@register_kernel("MaxPool3DWithArgmaxV2")
def max_pool3d_with_argmax_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """``argmax``: the flat index in each input volume, as ATen gives it."""
    args = (
        list(attrs["ksize"]),
        list(attrs["strides"]),
        list(attrs["pads"]),
        list(attrs.get("dilation", [1, 1, 1])),
        attrs.get("ceil_mode", False),
    )
    y, indices = F.max_pool3d(inputs[0], *args, return_indices=True)
    return [y, indices.to(torch.int32)]


def _div(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    same_type(op, inputs[0], inputs[1])
    return [torch.div(inputs[0], inputs[1])]


if "Div" not in KERNELS:  # another family may own it
    register_kernel("Div")(_div)


@register_kernel("BatchNormV3")
def batch_norm_v3(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """Outputs y, the updated running mean and variance, the batch mean and its rstd."""
    x, weight, bias, running_mean, running_var = inputs
    if not attrs.get("is_training", True):
        y = torch.nn.functional.batch_norm(x, running_mean, running_var, weight, bias, False, 0.0, attrs.get("epsilon", 1e-5))
        return [y, running_mean, running_var, running_mean, torch.rsqrt(running_var + attrs.get("epsilon", 1e-5))]
    out = torch.ops.aten._native_batch_norm_legit_functional(
        x, weight, bias, running_mean, running_var, True, attrs.get("momentum", 0.1), attrs.get("epsilon", 1e-5)
    )
    y, save_mean, save_rstd, new_mean, new_var = out
    # running_mean and running_var are ref outputs (named as their inputs): GE updates
    # the statistics it is given in place.
    running_mean.copy_(new_mean)
    running_var.copy_(new_var)
    return [y, running_mean, running_var, save_mean, save_rstd]
