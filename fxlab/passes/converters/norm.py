"""Softmax and normalization converters.

``_softmax``/``_safe_softmax`` → ``SoftmaxV2``, ``_log_softmax`` → ``LogSoftmaxV2``,
``native_layer_norm`` → ``LayerNormV4``, ``native_group_norm`` → ``GroupNorm`` (+ ``Add``,
``Rsqrt`` to turn its variance into the rstd ATen returns), inference batch norm →
``BNInfer`` (4-D, NCHW; lower ranks are unsqueezed to 4-D first), vector norms →
``LpNormV2``. Where TorchAir picks another op on the newest SoCs (``GroupNormV2``,
``BatchNormV3``), fxlab shows the Atlas A2/A3 form.

``GroupNorm`` and ``BNInfer`` carry TorchAir's NCHW ``input_layout_info`` /
``output_layout_info`` attrs (:mod:`fxlab.passes.converters.layouts`).
"""

from __future__ import annotations

import math
from typing import Any
from collections.abc import Sequence

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType, ge_dtype
from fxlab.passes.converters.layouts import input_layout, output_layout
from fxlab.passes.converters.registry import Sample, register_converter
from fxlab.passes.converters.promotion import dtype_promote, index_input
from fxlab.passes.converters.shape import fold_trailing_dims, gather_dim, shape_of, squeeze, unsqueeze

aten = torch.ops.aten
_INT32_MAX = 2147483647
_INT32_MIN = -2147483648


def softmax_v2(x: ge.Tensor, dim: int, half_to_float: bool = False, dtype: DataType | None = None) -> ge.Tensor:
    return ge.op1("SoftmaxV2", {"x": x}, {"axes": [dim], "half_to_float": half_to_float}, dtypes=dtype)


def _softmax_samples() -> list[Sample]:
    # half_to_float=True has no CPU kernel in eager, so no sample can check it.
    return [Sample((torch.randn(2, 5), -1, False)), Sample((torch.randn(2, 3, 4), 1, False)), Sample((torch.randn(2, 5).half(), 1, False))]


@register_converter(aten._softmax.default, samples=_softmax_samples)
def convert_softmax(self: ge.Tensor, dim: int, half_to_float: bool, *, meta_outputs: Any = None) -> ge.Tensor:
    """_softmax(Tensor self, int dim, bool half_to_float) -> Tensor"""
    if half_to_float and self.dtype != DataType.DT_FLOAT16:
        raise ValueError("_softmax with half_to_float=True needs a float16 input")
    return softmax_v2(self, dim, half_to_float, DataType.DT_FLOAT if half_to_float else None)


@register_converter(
    aten._safe_softmax.default, samples=lambda: [Sample((torch.randn(3, 4), -1)), Sample((torch.randn(3, 4), 0, torch.float64))]
)
def convert_safe_softmax(self: ge.Tensor, dim: int, dtype: torch.dtype | None = None, *, meta_outputs: Any = None) -> ge.Tensor:
    """_safe_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor"""
    # SoftmaxV2 gives NaN where a whole row is -inf; ATen's "safe" variant gives 0 there.
    # TorchAir maps it to SoftmaxV2 all the same, and so does fxlab.
    target = ge_dtype(dtype) if dtype is not None else ge_dtype(meta_outputs.dtype)
    return softmax_v2(ge.cast_to(self, target), dim)


@register_converter(
    aten._log_softmax.default, samples=lambda: [Sample((torch.randn(2, 5), -1, False)), Sample((torch.randn(2, 3, 4), 1, False))]
)
def convert_log_softmax(self: ge.Tensor, dim: int, half_to_float: bool, *, meta_outputs: Any = None) -> ge.Tensor:
    """_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor"""
    logits = ge.cast_to(self, ge_dtype(meta_outputs.dtype))
    return ge.op("LogSoftmaxV2", {"logits": logits}, {"axes": [dim]}, outputs=("logsoftmax",))[0]


def _fill(dims: ge.Tensor, value: ge.Tensor, dtype: DataType) -> ge.Tensor:
    return ge.op1("Fill", {"dims": dims, "value": value}, dtypes=dtype)


def _layer_norm_default(param: ge.Tensor | None, normalized_shape: Any, value: float, dtype: DataType) -> ge.Tensor:
    """A missing weight or bias as TorchAir makes it: ``Fill(shape, value)``."""
    if param is not None:
        return param
    if isinstance(normalized_shape, ge.Tensor):
        dtype_promote(DataType.DT_INT32, normalized_shape)  # TorchAir casts here and never uses the result
        dims = normalized_shape
    else:
        dims = ge.const(list(normalized_shape), DataType.DT_INT32)
    return _fill(dims, ge.const(value, dtype), dtype)


def _layer_norm_samples() -> list[Sample]:
    return [
        Sample((torch.randn(2, 3, 8), [8], torch.randn(8), torch.randn(8), 1e-5)),
        Sample((torch.randn(2, 3, 4), [3, 4], None, None, 1e-6)),
    ]


@register_converter(aten.native_layer_norm.default, samples=_layer_norm_samples)
def convert_native_layer_norm(
    input: ge.Tensor, normalized_shape: Any, weight: ge.Tensor | None, bias: ge.Tensor | None, eps: float, *, meta_outputs: Any = None
) -> list[ge.Tensor]:
    """native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)"""
    gamma = _layer_norm_default(weight, normalized_shape, 1.0, input.dtype)
    beta = _layer_norm_default(bias, normalized_shape, 0.0, input.dtype)
    shape = normalized_shape if isinstance(normalized_shape, ge.Tensor) else index_input(list(normalized_shape))
    inputs = {"x": input, "normalized_shape": shape, "gamma": gamma, "beta": beta}
    return ge.op("LayerNormV4", inputs, {"epsilon": float(eps)}, outputs=("y", "mean", "rstd"))


def _group_norm_samples() -> list[Sample]:
    return [
        Sample((torch.randn(2, 4, 3, 3), torch.randn(4), torch.randn(4), 2, 4, 9, 2, 1e-5)),
        Sample((torch.randn(2, 6, 5), None, None, 2, 6, 5, 3, 1e-5)),
    ]


@register_converter(aten.native_group_norm.default, samples=_group_norm_samples)
def convert_native_group_norm(
    input: ge.Tensor,
    weight: ge.Tensor | None,
    bias: ge.Tensor | None,
    N: Any,
    C: Any,
    HxW: Any,
    group: int,
    eps: float,
    *,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)"""
    dtype = ge_dtype(meta_outputs[0].dtype)
    if weight is None:
        one = ge.const(1, dtype)
        weight = _fill(index_input([C]), one, dtype)
    if bias is None:
        zero = ge.const(0, dtype)
        bias = _fill(index_input([C]), zero, dtype)
    attrs = {"num_groups": group, "data_format": "NHWC", "eps": float(eps), "is_training": True}
    y, mean, variance = ge.op("GroupNorm", {"x": input, "gamma": weight, "beta": bias}, attrs, outputs=("y", "mean", "variance"))
    output_layout(input_layout(y, [0, 1, 2], "NCHW"), [0, 1, 2], "NCHW")
    shifted = ge.op1("Add", {"x1": variance, "x2": ge.const(eps, dtype)})
    return [y, mean, ge.op1("Rsqrt", {"x": shifted})]


def _batch_norm_samples() -> list[Sample]:
    def stats(c: int) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.randn(c), torch.rand(c) + 0.5

    return [
        Sample((torch.randn(2, 3, 4, 4), torch.randn(3), torch.randn(3), *stats(3), 0.1, 1e-5)),
        Sample((torch.randn(4, 3), None, None, *stats(3), 0.1, 1e-3)),
        Sample((torch.randn(2, 3, 2, 2, 2), torch.randn(3), torch.randn(3), *stats(3), 0.1, 1e-5)),
    ]


@register_converter(aten._native_batch_norm_legit_no_training.default, samples=_batch_norm_samples)
def convert_batch_norm_inference(
    input: ge.Tensor,
    weight: ge.Tensor | None,
    bias: ge.Tensor | None,
    running_mean: ge.Tensor,
    running_var: ge.Tensor,
    momentum: float,
    eps: float,
    *,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)"""
    rank = input.rank
    if rank < 2:
        raise ValueError("inference batch norm of an input with fewer than 2 dims has no GE mapping")
    input_size = shape_of(input, DataType.DT_INT32)
    if weight is None:
        weight = _fill(gather_dim(input_size, 1), ge.cast(ge.const(1.0), input.dtype), input.dtype)
    if bias is None:
        bias = _fill(gather_dim(input_size, 1), ge.cast(ge.const(0.0), input.dtype), input.dtype)
    # TorchAir writes ge.Fill([0], ge.Cast(0.0, ...)): the Cast is made first, then the
    # op wrapper's Const of the dims.
    zero = ge.cast(ge.const(0.0), input.dtype)
    empty = _fill(ge.const([0], DataType.DT_INT64), zero, input.dtype)
    x = input
    if rank in (2, 3):
        x = unsqueeze(x, list(range(rank, 4)))
    elif rank >= 5:
        x = fold_trailing_dims(x, input_size, 3)
    inputs = {"x": x, "scale": weight, "offset": bias, "mean": running_mean, "variance": running_var}
    out = output_layout(input_layout(ge.op1("BNInfer", inputs, {"epsilon": float(eps)}), list(range(5)), "NCHW"), 0, "NCHW")
    if rank in (2, 3):
        out = squeeze(out, list(range(3, rank - 1, -1)))
    elif rank >= 5:
        out = ge.op1("Reshape", {"x": out, "shape": input_size}, {"axis": 0, "num_axes": -1})
        output_layout(input_layout(out, [0, 1], "ND"), 0, "ND")
    return [out, empty, empty]


def _vector_norm_samples() -> list[Sample]:
    return [
        Sample((torch.randn(3, 4),)),
        Sample((torch.randn(3, 4), 2.0, [-1], True)),
        Sample((torch.randn(3, 4), 1, [0])),
        Sample((torch.randn(3, 4), math.inf, [1])),
    ]


@register_converter(aten.linalg_vector_norm.default, samples=_vector_norm_samples)
def convert_linalg_vector_norm(
    self: ge.Tensor,
    ord: Any = 2,
    dim: Sequence[int] | None = None,
    keepdim: bool = False,
    *,
    dtype: torch.dtype | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    # LpNormV2 encodes the infinity norms as the int32 extremes, as TorchAir passes them.
    p = float(_INT32_MAX if ord == math.inf else _INT32_MIN if ord == -math.inf else ord)
    attrs = {"p": p, "axes": list(dim) if dim else [], "keepdim": keepdim, "epsilon": 0.0}
    result = ge.op1("LpNormV2", {"x": self}, attrs)
    # Always a Cast, as TorchAir's dtype_promote of a result whose dtype it does not know.
    return ge.cast(result, ge_dtype(dtype) if dtype is not None else self.dtype)
