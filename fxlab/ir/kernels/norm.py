"""Kernels of GE softmax and normalization ops."""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.registry import KERNELS, register_kernel
from fxlab.ir.model import IrOp

_INT32_MAX = 2147483647
_INT32_MIN = -2147483648


@register_kernel("SoftmaxV2")
def softmax_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x = inputs[0].float() if attrs.get("half_to_float", False) else inputs[0]
    return [torch.softmax(x, attrs.get("axes", [-1])[0])]


@register_kernel("LogSoftmaxV2")
def log_softmax_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [torch.log_softmax(inputs[0], attrs.get("axes", [-1])[0])]


@register_kernel("LayerNormV4")
def layer_norm_v4(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, shape, gamma, beta = inputs
    y, mean, rstd = torch.native_layer_norm(x, [int(v) for v in shape.tolist()], gamma, beta, attrs.get("epsilon", 1e-5))
    return [y, mean, rstd]


@register_kernel("GroupNorm")
def group_norm(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """Outputs y, mean and the (biased) variance per (batch, group)."""
    x, gamma, beta = inputs
    groups, eps = attrs["num_groups"], attrs.get("eps", 1e-4)
    n, c = x.shape[0], x.shape[1]
    hw = x.numel() // (n * c) if n * c else 0
    y, mean, rstd = torch.native_group_norm(x, gamma, beta, n, c, hw, groups, eps)
    variance = rstd.pow(-2) - eps
    return [y, mean, variance]


@register_kernel("BNInfer")
def bn_infer(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, scale, offset, mean, variance = inputs
    view = [1, -1] + [1] * (x.dim() - 2)
    normalized = (x - mean.reshape(view)) * torch.rsqrt(variance.reshape(view) + attrs["epsilon"])
    return [(normalized * scale.reshape(view) + offset.reshape(view)).to(x.dtype)]


@register_kernel("LpNormV2")
def lp_norm_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    p = attrs.get("p", 2.0)
    order = torch.inf if p == _INT32_MAX else -torch.inf if p == _INT32_MIN else p
    axes = list(attrs.get("axes", [])) or None
    return [torch.linalg.vector_norm(inputs[0], order, axes, attrs.get("keepdim", False))]


def _rsqrt(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [torch.rsqrt(inputs[0])]


# GroupNorm's rstd needs Rsqrt; the element-wise family owns that type, so this one is
# registered only when that family has not (it is imported before this module).
if "Rsqrt" not in KERNELS:
    register_kernel("Rsqrt")(_rsqrt)
