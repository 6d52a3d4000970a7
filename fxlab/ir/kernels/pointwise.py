"""Kernels of the point-wise GE ops behind ATen's inverse trig and hyperbolic functions,
``erfinv``, ``lerp``, ``addcmul``/``addcdiv``, ``nan_to_num``, ``threshold``, ``prelu``,
``glu``, ``log_sigmoid`` and ``logsumexp``."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from fxlab.ir.kernels.registry import register_kernel
from fxlab.ir.kernels.elementwise import FLOATS, _unary, require, same_type
from fxlab.ir.model import IrOp

register_kernel("Acos")(_unary(torch.acos, FLOATS))
register_kernel("Acosh")(_unary(torch.acosh, FLOATS))
register_kernel("Asin")(_unary(torch.asin, FLOATS))
register_kernel("Asinh")(_unary(torch.asinh, FLOATS))
register_kernel("Atan")(_unary(torch.atan, FLOATS))
register_kernel("Atanh")(_unary(torch.atanh, FLOATS))
register_kernel("Cosh")(_unary(torch.cosh, FLOATS))
register_kernel("Sinh")(_unary(torch.sinh, FLOATS))
register_kernel("Erfinv")(_unary(torch.erfinv, {torch.float16, torch.float32}))
register_kernel("LogSigmoid")(_unary(F.logsigmoid, {torch.float16, torch.float32}))


@register_kernel("PRelu")
def prelu(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """Per-channel slope along dim 1 (one slope: shared), whatever shape the weight has."""
    x, weight = inputs
    same_type(op, x, weight)
    slope = weight.reshape(-1)
    if slope.numel() > 1:
        slope = slope.reshape([1, -1] + [1] * (x.dim() - 2))
    return [torch.where(x >= 0, x, x * slope)]


@register_kernel("Lerp")
def lerp(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    start, end, weight = inputs
    same_type(op, start, end, weight)
    return [torch.lerp(start, end, weight)]


@register_kernel("Addcmul")
def addcmul(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, t1, t2, value = inputs
    same_type(op, x, t1, t2, value)
    return [x + value * t1 * t2]


@register_kernel("Addcdiv")
def addcdiv(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, t1, t2, value = inputs
    same_type(op, x, t1, t2, value)
    return [x + value * (t1 / t2)]


@register_kernel("NanToNum")
def nan_to_num(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    require(op, inputs[0], {torch.float16, torch.bfloat16, torch.float32})
    return [torch.nan_to_num(inputs[0], attrs["nan"], attrs["posinf"], attrs["neginf"])]


@register_kernel("ThresholdV2")
def threshold_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """``y = x if x > threshold else value`` (``value`` absent: 0)."""
    x, threshold, value = inputs
    value = torch.zeros((), dtype=x.dtype) if value is None else value
    same_type(op, x, threshold, value)
    return [torch.where(x > threshold, x, value)]


@register_kernel("GLU")
def glu(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    require(op, inputs[0], FLOATS)
    return [F.glu(inputs[0], attrs.get("dim", -1))]


@register_kernel("ReduceLogSumExp")
def reduce_log_sum_exp(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, axes = inputs
    dims = [int(a) for a in axes.reshape(-1).tolist()] or list(range(x.dim()))
    return [torch.logsumexp(x, dims, attrs.get("keep_dims", False))]
