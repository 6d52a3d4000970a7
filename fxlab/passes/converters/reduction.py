"""Reduction converters: sum, mean, max (whole tensor and ``dim``), argmax/argmin,
std (correction), any/all, cumsum, topk and sort.

Axes reach GE as ``DT_INT64`` ``Const`` inputs, as TorchAir's op builders make them.
TorchAir has no working converter for ``amax``, ``amin``, ``prod``, ``var``/``var_mean``
and ``min.dim`` (they raise "not implemented"), so fxlab registers none either: such nodes
show as unsupported, which is what a user of TorchAir meets. Paths TorchAir takes only for
empty tensors (a ``Fill`` of the reduced shape) are not reproduced.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType, ge_dtype
from fxlab.passes.converters.promotion import cast_scalar, dtype_promote, index_input, output_dtype, scalar_input
from fxlab.passes.converters.registry import Sample, register_converter

aten = torch.ops.aten
INT64 = DataType.DT_INT64


def _reduce(op_type: str, x: ge.Tensor, axes: Any, keep_dims: bool, **attrs: Any) -> ge.Tensor:
    return ge.op1(op_type, {"x": x, "axes": index_input(axes)}, {"keep_dims": keep_dims, **attrs})


def _dim_samples() -> list[Sample]:
    x = torch.randn(2, 3, 4)
    return [
        Sample((x, [1])),
        Sample((x, [0, 2], True)),
        Sample((x, [-1])),
        Sample((x, None)),
        Sample((torch.randint(-5, 5, (3, 4)), [1])),
        Sample((x, [1]), {"dtype": torch.float64}),
    ]


@register_converter(aten.sum.dim_IntList, samples=_dim_samples)
def convert_sum_dim(
    self: ge.Tensor, dim: list[int] | None, keepdim: bool = False, *, dtype: torch.dtype | None = None, meta_outputs: Any = None
) -> ge.Tensor:
    """sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    dims = list(dim) if dim else list(range(self.rank))
    x = dtype_promote(output_dtype(meta_outputs), self)
    return _reduce("ReduceSum", x, dims, keepdim)


@register_converter(
    aten.sum.default,
    samples=lambda: [
        Sample((torch.randn(3, 4),)),
        Sample((torch.randint(0, 5, (6,)),)),
        Sample((torch.rand(5) > 0.5,)),
        Sample((torch.randn(3),), {"dtype": torch.float64}),
    ],
)
def convert_sum(self: ge.Tensor, *, dtype: torch.dtype | None = None, meta_outputs: Any = None) -> ge.Tensor:
    """sum(Tensor self, *, ScalarType? dtype=None) -> Tensor"""
    x = ge.cast(self, output_dtype(meta_outputs))
    return _reduce("ReduceSum", x, list(range(self.rank)), False)


@register_converter(
    aten.mean.default,
    samples=lambda: [
        Sample((torch.randn(3, 4),)),
        Sample((torch.randn(5).half(),)),
        Sample((torch.randn(2, 2),), {"dtype": torch.float64}),
    ],
)
def convert_mean(self: ge.Tensor, *, dtype: torch.dtype | None = None, meta_outputs: Any = None) -> ge.Tensor:
    """mean(Tensor self, *, ScalarType? dtype=None) -> Tensor"""
    x = dtype_promote(dtype if dtype is not None else output_dtype(meta_outputs), self)
    return _reduce("ReduceMean", x, list(range(self.rank)), False, noop_with_empty_axes=True)


@register_converter(aten.mean.dim, samples=lambda: [s for s in _dim_samples() if s.args[0].is_floating_point()])
def convert_mean_dim(
    self: ge.Tensor, dim: list[int] | None, keepdim: bool = False, *, dtype: torch.dtype | None = None, meta_outputs: Any = None
) -> ge.Tensor:
    """mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    dims = list(dim) if dim else list(range(self.rank))
    if dtype is not None:
        return _reduce("ReduceMeanWithCast", self, dims, keepdim, noop_with_empty_axes=True, dtype=ge_dtype(dtype))
    return _reduce("ReduceMean", self, dims, keepdim, noop_with_empty_axes=True)


@register_converter(aten.max.default, samples=lambda: [Sample((torch.randn(3, 4),)), Sample((torch.randint(-9, 9, (6,)),))])
def convert_max(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """max(Tensor self) -> Tensor"""
    axes = dtype_promote(INT64, list(range(self.rank)))
    x = dtype_promote(output_dtype(meta_outputs), self)
    return _reduce("ReduceMax", x, axes, False)


def _with_value(op_type: str, x: ge.Tensor, dim: int, keepdim: bool) -> tuple[ge.Tensor, ge.Tensor]:
    """``ArgMaxWithValue``/``ArgMinWithValue``: outputs (indice int32, values)."""
    indice, values = ge.op(
        op_type, {"x": x}, {"dimension": dim, "keep_dims": keepdim}, ("indice", "values"), dtypes=[DataType.DT_INT32, x.dtype]
    )
    return indice, values


@register_converter(
    aten.max.dim,
    samples=lambda: [Sample((torch.randn(3, 4), 1)), Sample((torch.randn(3, 4), 0, True)), Sample((torch.randn(2, 3, 4).half(), -1))],
)
def convert_max_dim(self: ge.Tensor, dim: int, keepdim: bool = False, meta_outputs: Any = None) -> tuple[ge.Tensor, ge.Tensor]:
    """max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"""
    indice, values = _with_value("ArgMaxWithValue", self, dim, keepdim)
    return values, dtype_promote(ge_dtype(meta_outputs[1].dtype), indice)


def _arg_samples() -> list[Sample]:
    x = torch.randn(3, 4)
    return [Sample((x,)), Sample((x, 1)), Sample((x, 0, True)), Sample((torch.randint(-9, 9, (2, 5)), 1))]


def _arg_reduce(plain: str, with_value: str, self: ge.Tensor, dim: int | None, keepdim: bool) -> ge.Tensor:
    """TorchAir's argmax/argmin: flatten for ``dim=None``; the ...WithValue op (on float
    input) when ``keepdim``; else the plain op with an int64 ``dimension``."""
    if dim is None:
        flat = ge.op1("Reshape", {"x": self, "shape": dtype_promote(INT64, (-1,))}, {"axis": 0, "num_axes": -1}, shapes=[(-1,)])
        return ge.op1(plain, {"x": flat, "dimension": index_input(0)}, {"dtype": INT64}, dtypes=INT64)
    if keepdim:
        indice, _ = _with_value(with_value, dtype_promote(DataType.DT_FLOAT, self), dim, keepdim)
        return dtype_promote(INT64, indice)
    dimension = dtype_promote(INT64, dim)
    return ge.op1(plain, {"x": self, "dimension": dimension}, {"dtype": INT64}, dtypes=INT64)


@register_converter(aten.argmax.default, samples=_arg_samples)
def convert_argmax(self: ge.Tensor, dim: int | None = None, keepdim: bool = False, meta_outputs: Any = None) -> ge.Tensor:
    """argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor"""
    return _arg_reduce("ArgMaxV2", "ArgMaxWithValue", self, dim, keepdim)


@register_converter(aten.argmin.default, samples=_arg_samples)
def convert_argmin(self: ge.Tensor, dim: int | None = None, keepdim: bool = False, meta_outputs: Any = None) -> ge.Tensor:
    """argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor"""
    return _arg_reduce("ArgMin", "ArgMinWithValue", self, dim, keepdim)


def _std_samples() -> list[Sample]:
    x = torch.randn(3, 4, 5)
    return [
        Sample((x, [1])),
        Sample((x, [2]), {"correction": 0}),
        Sample((x, [0, 2]), {"keepdim": True}),
        Sample((x, [-2])),
        Sample((x, [0, 1, 2])),
        Sample((torch.randn(3, 1), [1])),  # one element per row: NaN, from a Fill
        Sample((torch.randn(2, 3), [1]), {"correction": 5}),  # fewer elements than the correction: inf
        Sample(
            (
                torch.randn(2, 3),
                [1],
            ),
            {"correction": 1, "keepdim": True},
        ),
    ]


@register_converter(aten.std.correction, samples=_std_samples)
def convert_std(
    self: ge.Tensor, dim: list[int] | None = None, *, correction: Any = None, keepdim: bool = False, meta_outputs: Any = None
) -> ge.Tensor:
    """std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor"""
    # TorchAir's path for SoCs before arch35: the mean, broadcast back, then ReduceStdWithMean.
    # It leaves the mean un-unsqueezed for dim=[-1] without keepdim, so the Expand of a
    # rank>1 input is invalid there (reproduced as is; no sample for that case).
    correction = 1 if correction is None else correction
    dims = list(dim or [])
    special = _std_of_few_elements(self, dims, correction, keepdim, output_dtype(meta_outputs))
    if special is not None:
        return special
    mean = _reduce("ReduceMean", self, dims, keepdim, noop_with_empty_axes=True)
    if not (dims == [-1]) and len(dims) != self.rank and not keepdim:
        for d in sorted(dims):
            mean = ge.op1("Unsqueeze", {"x": mean}, {"axes": [d]})
    shape = ge.op1("Shape", {"x": self}, {"dtype": 3}, dtypes=DataType.DT_INT32, shapes=[(self.rank,)])
    mean = ge.op1("Expand", {"x": mean, "shape": shape}, shapes=[self.shape])
    attrs = {"dim": dims, "unbiased": True, "keepdim": keepdim, "invert": False, "epsilon": 0.001, "correction": int(correction)}
    return ge.op1("ReduceStdWithMean", {"x": self, "mean": mean}, attrs)


def _std_of_few_elements(self: ge.Tensor, dims: list[int], correction: Any, keepdim: bool, dtype: DataType) -> ge.Tensor | None:
    """TorchAir's check of the element count each std reduces (when the reduced sizes are
    static, whatever the others): none gives NaN, as does one with a correction of at
    least 1; at most ``correction`` (> 1) gives inf, both as a ``Fill`` of the output
    shape. The output shape is built (``Shape``, ``Gather`` per dim, ``Pack``) whatever
    the count, as TorchAir does."""
    sizes_in = self.symsize
    if sizes_in is None:
        return None
    rank = self.rank
    count = 1
    for d in dims if dims else range(rank):
        count *= sizes_in[d]
    if isinstance(count, torch.SymInt):
        return None
    shape = ge.op1("Shape", {"x": self}, {"dtype": 3}, dtypes=DataType.DT_INT32, shapes=[(rank,)])
    gather_attrs = {"validate_indices": True, "batch_dims": 0, "is_preprocessed": False, "negative_index_support": False}
    sizes: list[Any] = [
        ge.op1("Gather", {"x": shape, "indices": ge.const(i, DataType.DT_INT64)}, gather_attrs, shapes=[()]) for i in range(rank)
    ]
    for d in sorted((d % rank for d in dims), reverse=True):
        if keepdim:
            sizes[d] = 1
        else:
            del sizes[d]
    if sizes:
        parts = [s if isinstance(s, ge.Tensor) else scalar_input(s) for s in sizes]
        output_size = ge.op1("Pack", {f"x{i}": p for i, p in enumerate(parts)}, {"axis": 0, "N": len(parts)})
    correcting = not isinstance(correction, ge.Tensor)
    if count == 0 or (count == 1 and correcting and count <= correction):
        fill = float("nan")
    elif correcting and correction > 1 and count <= correction:
        fill = float("inf")
    else:
        return None
    value = cast_scalar(fill, dtype)
    dims_input = output_size if sizes else ge.const([], DataType.DT_INT32)
    return ge.op1("Fill", {"dims": dims_input, "value": value}, dtypes=dtype)


def _any_samples() -> list[Sample]:
    return [Sample((torch.rand(3, 4) > 0.8,)), Sample((torch.randint(0, 2, (5,)),)), Sample((torch.tensor(0.0),))]


@register_converter(aten.any.default, samples=_any_samples)
def convert_any(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """any(Tensor self) -> Tensor"""
    x = dtype_promote(DataType.DT_BOOL, self)
    dims = list(range(self.rank))
    if self.rank == 0:
        x = ge.op1("Unsqueeze", {"x": x}, {"axes": [0]}, shapes=[(1,)])
        dims = [0]
    return _reduce("ReduceAny", x, dims, False)


@register_converter(
    aten.any.dim,
    samples=lambda: [Sample((torch.rand(3, 4) > 0.7, 1)), Sample((torch.rand(3, 4) > 0.7, 0, True)), Sample((torch.randn(2, 3), -1))],
)
def convert_any_dim(self: ge.Tensor, dim: int, keepdim: bool = False, meta_outputs: Any = None) -> ge.Tensor:
    """any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor"""
    return _reduce("ReduceAny", dtype_promote(DataType.DT_BOOL, self), [dim], keepdim)


@register_converter(
    aten.all.default,
    samples=lambda: [Sample((torch.rand(3, 4) > 0.1,)), Sample((torch.ones(4, dtype=torch.bool),)), Sample((torch.randint(0, 3, (5,)),))],
)
def convert_all(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """all(Tensor self) -> Tensor"""
    x = dtype_promote(output_dtype(meta_outputs), self)
    return _reduce("ReduceAll", x, list(range(self.rank)), False)


@register_converter(
    aten.cumsum.default,
    samples=lambda: [
        Sample((torch.randn(3, 4), 1)),
        Sample((torch.randint(0, 5, (2, 5)), -1)),
        Sample((torch.randn(3, 4), 0), {"dtype": torch.float64}),
    ],
)
def convert_cumsum(self: ge.Tensor, dim: int, *, dtype: torch.dtype | None = None, meta_outputs: Any = None) -> ge.Tensor:
    """cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor"""
    x = dtype_promote(dtype if dtype is not None else output_dtype(meta_outputs), self)
    return ge.op1("Cumsum", {"x": x, "axis": index_input(dim)}, {"exclusive": False, "reverse": False})


# -- topk / sort ----------------------------------------------------------------------
@register_converter(
    aten.topk.default,
    samples=lambda: [Sample((torch.randn(3, 8), 3)), Sample((torch.randn(3, 8), 2, 0, False)), Sample((torch.randn(4, 5).half(), 2, -1))],
)
def convert_topk(
    self: ge.Tensor,
    k: Any,
    dim: int = -1,
    largest: bool = True,
    sorted: bool = True,
    meta_outputs: Any = None,  # noqa: A002
) -> tuple[ge.Tensor, ge.Tensor]:
    """topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)"""
    count = scalar_input(k, self)
    values, indices = ge.op(
        "TopKV2",
        {"x": self, "k": count},
        {"sorted": sorted, "dim": dim, "largest": largest, "sort_policy": 1},
        ("values", "indices"),
        dtypes=[self.dtype, DataType.DT_INT32],
    )
    return values, dtype_promote(ge_dtype(meta_outputs[1].dtype), indices)


def _transpose(x: ge.Tensor, perm: Any) -> ge.Tensor:
    return ge.op1("Transpose", {"x": x, "perm": perm})


@register_converter(
    aten.sort.default,
    samples=lambda: [Sample((torch.randn(3, 6),)), Sample((torch.randn(3, 6), 0, True)), Sample((torch.randperm(7),))],
)
def convert_sort(self: ge.Tensor, dim: int = -1, descending: bool = False, meta_outputs: Any = None) -> tuple[ge.Tensor, ge.Tensor]:
    """sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)"""
    dim = dim + self.rank if dim < 0 else dim
    last = self.rank - 1
    attrs = {"axis": last, "descending": descending, "stable": False}
    if dim == last:
        values, indices = ge.op("Sort", {"x": self}, attrs, ("y1", "y2"), dtypes=[self.dtype, DataType.DT_INT32])
    else:
        order = list(range(self.rank))
        order[dim], order[last] = order[last], order[dim]
        perm = dtype_promote(INT64, order)
        moved = _transpose(self, perm)
        values, indices = ge.op("Sort", {"x": moved}, attrs, ("y1", "y2"), dtypes=[self.dtype, DataType.DT_INT32])
        values, indices = _transpose(values, perm), _transpose(indices, perm)
    return values, dtype_promote(INT64, indices)
