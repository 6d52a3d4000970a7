"""Kernels of reduction GE ops: ReduceSum/Mean/Max/Any/All, ReduceMeanWithCast, arg
reductions, ReduceStdWithMean, Cumsum.

Axes come as an int tensor input (``axes``/``dimension``/``axis``). An empty ``axes``
reduces every dimension, except for ``ReduceMean`` with ``noop_with_empty_axes`` (the
default), which then returns its input unchanged.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.registry import register_kernel
from fxlab.ir.kernels.elementwise import BOOL, FLOATS, require
from fxlab.ir.model import IrOp, torch_dtype

_INDEX_TYPES = frozenset({torch.int32, torch.int64})


def _axes(op: IrOp, axes: torch.Tensor, rank: int) -> list[int]:
    require(op, axes, _INDEX_TYPES, "axes")
    values = [int(a) for a in axes.reshape(-1).tolist()]
    return values if values else list(range(rank))


def _reduce(op: IrOp, x: torch.Tensor, axes: torch.Tensor, keep: bool, fn: Any) -> torch.Tensor:
    dims = _axes(op, axes, x.dim())
    if x.dim() == 0:
        return fn(x.reshape(1), dim=[0], keepdim=False).reshape(())
    return fn(x, dim=dims, keepdim=keep)


@register_kernel("ReduceSum")
def reduce_sum(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x = inputs[0]
    return [_reduce(op, x, inputs[1], attrs.get("keep_dims", False), torch.sum).to(x.dtype)]


def _mean(op: IrOp, x: torch.Tensor, axes: torch.Tensor, attrs: dict[str, Any]) -> torch.Tensor:
    if axes.numel() == 0 and attrs.get("noop_with_empty_axes", True):
        return x
    return _reduce(op, x, axes, attrs.get("keep_dims", False), torch.mean)


@register_kernel("ReduceMean")
def reduce_mean(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    require(op, inputs[0], FLOATS)
    return [_mean(op, inputs[0], inputs[1], attrs)]


@register_kernel("ReduceMeanWithCast")
def reduce_mean_with_cast(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """The mean computed in (and returned as) the ``dtype`` attr's type."""
    x = inputs[0].to(torch_dtype(attrs["dtype"]))
    return [_mean(op, x, inputs[1], attrs)]


@register_kernel("ReduceMax")
def reduce_max(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [_reduce(op, inputs[0], inputs[1], attrs.get("keep_dims", False), torch.amax)]


@register_kernel("ReduceAny")
def reduce_any(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    require(op, inputs[0], BOOL)
    return [_reduce(op, inputs[0], inputs[1], attrs.get("keep_dims", False), torch.any)]


@register_kernel("ReduceAll")
def reduce_all(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    require(op, inputs[0], BOOL)
    return [_reduce(op, inputs[0], inputs[1], attrs.get("keep_dims", False), torch.all)]


def _arg(op: IrOp, inputs: list[Any], attrs: dict[str, Any], fn: Any) -> list[Any]:
    x, dimension = inputs
    require(op, dimension, _INDEX_TYPES, "dimension")
    dtype = attrs.get("dtype")
    out_type = torch_dtype(dtype) if dtype is not None else torch.int64
    return [fn(x, dim=int(dimension.reshape(-1)[0])).to(out_type)]


@register_kernel("ArgMaxV2")
def arg_max_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return _arg(op, inputs, attrs, torch.argmax)


@register_kernel("ArgMin")
def arg_min(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return _arg(op, inputs, attrs, torch.argmin)


def _with_value(op: IrOp, inputs: list[Any], attrs: dict[str, Any], fn: Any) -> list[Any]:
    """Outputs (indice int32, values)."""
    x = inputs[0]
    require(op, x, FLOATS)
    values, indices = fn(x, dim=attrs["dimension"], keepdim=attrs.get("keep_dims", False))
    return [indices.to(torch.int32), values]


@register_kernel("ArgMaxWithValue")
def arg_max_with_value(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return _with_value(op, inputs, attrs, torch.max)


@register_kernel("ArgMinWithValue")
def arg_min_with_value(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return _with_value(op, inputs, attrs, torch.min)


@register_kernel("ReduceStdWithMean")
def reduce_std_with_mean(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """sqrt(sum((x - mean)^2) / (N - correction)) over ``dim`` (every dim when empty);
    ``invert`` gives the reciprocal, with ``epsilon`` added to the variance first."""
    x, mean = inputs
    require(op, x, FLOATS)
    dims = list(attrs.get("dim", ())) or list(range(x.dim()))
    count = 1
    for d in dims:
        count *= x.shape[d]
    divisor = count - attrs.get("correction", 1) if attrs.get("unbiased", True) else count
    variance = ((x - mean) ** 2).sum(dim=dims, keepdim=attrs.get("keepdim", False)) / divisor
    if attrs.get("invert", False):
        return [torch.rsqrt(variance + attrs.get("epsilon", 0.001))]
    return [torch.sqrt(variance)]


@register_kernel("Cumsum")
def cumsum(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, axis = inputs
    require(op, axis, _INDEX_TYPES, "axis")
    dim = int(axis.reshape(-1)[0])
    if attrs.get("reverse", False):
        x = x.flip(dim)
    out = torch.cumsum(x, dim=dim).to(x.dtype)
    if attrs.get("exclusive", False):
        out = out - x
    return [out.flip(dim) if attrs.get("reverse", False) else out]


@register_kernel("TopKV2")
def top_k_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """Outputs (values, indices int32); ``k`` is an input tensor."""
    x, k = inputs
    values, indices = torch.topk(
        x, int(k.reshape(-1)[0]), dim=attrs.get("dim", -1), largest=attrs.get("largest", True), sorted=attrs.get("sorted", True)
    )
    return [values, indices.to(torch.int32)]


@register_kernel("Sort")
def sort(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """Outputs (y1 sorted values, y2 indices int32)."""
    values, indices = torch.sort(
        inputs[0], dim=attrs.get("axis", -1), descending=attrs.get("descending", False), stable=attrs.get("stable", False)
    )
    return [values, indices.to(torch.int32)]
