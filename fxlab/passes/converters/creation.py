"""Casts, copies and tensor creation: _to_copy and prims.convert_element_type
(``Cast``), clone/detach/lift_fresh_copy (``Identity``), alias, full/zeros/ones/empty and
their ``_like``/``new_`` forms (``Fill``, ``ZerosLike``, ``OnesLike``, ``Empty``), arange
(``Range``), scalar_tensor and fill.

Sizes arrive as ``DT_INT64`` ``Const`` inputs (``Empty`` wants ``DT_INT32``); fill values
follow TorchAir's typing: a ``Const`` of the target dtype, or a default-typed ``Const``
followed by a ``Cast`` where TorchAir writes ``ge.Cast(<number>, dst_type=...)``. ``Cast``
attrs carry TorchAir's dtype numbers (``dst_type``). A symbolic size list arrives as the
``Pack`` the conversion made of it (:mod:`fxlab.passes.symbolic_lists`) and is taken as it is.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import TORCHAIR_DTYPE_NUMBER, DataType, ge_dtype
from fxlab.passes.converters.promotion import as_ge_dtype, cast_scalar, dtype_promote, index_input, output_dtype
from fxlab.passes.converters.registry import Sample, overload, register_converter

aten = torch.ops.aten


def _size_input(size: Any) -> tuple[ge.Tensor, tuple[int, ...] | None]:
    """A ``SymInt[]`` size as ``Fill``/``Empty`` take it: an int64 ``Const`` of a static
    list, or the ``Pack`` the conversion made of a symbolic one (its value known only at
    run time); with the static shape when there is one."""
    if isinstance(size, ge.Tensor):
        return size, None
    return index_input(list(size)), tuple(size)


def _fill(size: Any, value: ge.Tensor) -> ge.Tensor:
    dims, shape = _size_input(size)
    return ge.op1("Fill", {"dims": dims, "value": value}, dtypes=value.dtype, shapes=None if shape is None else [shape])


def _shape_of(x: ge.Tensor) -> ge.Tensor:
    return ge.op1("Shape", {"x": x}, {"dtype": 3}, dtypes=DataType.DT_INT32, shapes=[(x.rank,)])


def _fill_like(x: ge.Tensor, value: ge.Tensor) -> ge.Tensor:
    return ge.op1("Fill", {"dims": _shape_of(x), "value": value}, dtypes=value.dtype, shapes=[x.shape])


# -- casts and copies -----------------------------------------------------------------
@register_converter(
    aten._to_copy.default,
    samples=lambda: [
        Sample((torch.randn(2, 3),), {"dtype": torch.float16}),
        Sample((torch.randn(2, 3) * 9,), {"dtype": torch.int32}),
        Sample((torch.randint(0, 3, (4,)),), {"dtype": torch.bool}),
        Sample((torch.randn(2, 3),), {"dtype": torch.float32}),
        Sample((torch.randn(2, 3),), {"device": torch.device("cpu")}),
    ],
)
def convert_to_copy(
    self: ge.Tensor,
    *,
    dtype: torch.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    non_blocking: bool = False,
    memory_format: Any = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor"""
    if layout is not None and layout != torch.strided:
        raise NotImplementedError(f"_to_copy to layout {layout} is not supported (only torch.strided)")
    if memory_format is not None and memory_format != torch.contiguous_format:
        raise NotImplementedError(f"_to_copy to memory_format {memory_format} is not supported (only torch.contiguous_format)")
    if dtype is not None and self.dtype != ge_dtype(dtype):
        return ge.cast(self, ge_dtype(dtype))
    return ge.op1("TensorMove", {"x": self})


@register_converter(
    overload("prims.convert_element_type.default"),
    samples=lambda: [
        Sample((torch.randn(2, 3), torch.float16)),
        Sample((torch.randn(4) * 5, torch.int64)),
        Sample((torch.randn(3), torch.float32)),
    ],
)
def convert_convert_element_type(a: ge.Tensor, dtype: torch.dtype, meta_outputs: Any = None) -> ge.Tensor:
    """convert_element_type(Tensor a, ScalarType dtype) -> Tensor"""
    return ge.cast(a, ge_dtype(dtype))


def _one_tensor() -> list[Sample]:
    return [Sample((torch.randn(2, 3),)), Sample((torch.randint(0, 9, (4,)),))]


@register_converter(
    aten.clone.default, samples=lambda: _one_tensor() + [Sample((torch.randn(3),), {"memory_format": torch.contiguous_format})]
)
def convert_clone(self: ge.Tensor, *, memory_format: Any = None, meta_outputs: Any = None) -> ge.Tensor:
    """clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor"""
    if memory_format is not None and memory_format is not torch.contiguous_format:
        raise NotImplementedError(f"clone to memory_format {memory_format} is not supported (only torch.contiguous_format)")
    return ge.op1("Identity", {"x": self})


@register_converter(aten.lift_fresh_copy.default, samples=_one_tensor)
def convert_lift_fresh_copy(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """lift_fresh_copy(Tensor self) -> Tensor"""
    return ge.op1("Identity", {"x": self})


@register_converter(aten.detach.default, samples=_one_tensor)
def convert_detach(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """detach(Tensor(a) self) -> Tensor(a)"""
    return ge.op1("Identity", {"x": self})


@register_converter(aten.alias.default, samples=_one_tensor)
def convert_alias(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """alias(Tensor(a) self) -> Tensor(a)"""
    shape = dtype_promote(DataType.DT_INT64, _shape_of(self))
    return ge.op1("Reshape", {"x": self, "shape": shape}, {"axis": 0, "num_axes": -1}, shapes=[self.shape])


# -- full / zeros / ones / empty ------------------------------------------------------
@register_converter(
    aten.full.default,
    samples=lambda: [
        Sample(([2, 3], 1.5)),
        Sample(([4], 7), {"dtype": torch.int32}),
        Sample(([2, 2], True)),
        Sample(([], 2.0)),
        Sample(([3], 0.5), {"dtype": torch.float16, "device": torch.device("cpu")}),
    ],
)
def convert_full(
    size: list[int],
    fill_value: Any,
    *,
    dtype: torch.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    value = dtype_promote(dtype if dtype is not None else output_dtype(meta_outputs), fill_value)
    if not isinstance(size, ge.Tensor) and len(size) == 0:
        return value
    return _fill(size, value)


@register_converter(
    aten.full_like.default,
    samples=lambda: [
        Sample((torch.randn(2, 3), 4.0)),
        Sample((torch.randn(2, 3), 3), {"dtype": torch.int64}),
        Sample((torch.randint(0, 5, (4,)), 2)),
    ],
)
def convert_full_like(
    self: ge.Tensor,
    fill_value: Any,
    *,
    dtype: torch.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    memory_format: Any = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
    dims = _shape_of(self)
    if dtype is not None and ge_dtype(dtype) != self.dtype:
        dtype_promote(dtype, self)  # TorchAir casts ``self`` here and never uses the result
    target = ge_dtype(dtype) if dtype is not None else self.dtype
    return ge.op1("Fill", {"dims": dims, "value": cast_scalar(fill_value, target)}, dtypes=target, shapes=[self.shape])


def _like_samples() -> list[Sample]:
    return [Sample((torch.randn(2, 3),)), Sample((torch.randint(0, 5, (4,)),)), Sample((torch.randn(2, 3),), {"dtype": torch.int32})]


@register_converter(aten.zeros_like.default, samples=_like_samples)
def convert_zeros_like(
    self: ge.Tensor,
    *,
    dtype: torch.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    memory_format: Any = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
    if dtype is not None:
        self = dtype_promote(dtype, self)
    return ge.op1("ZerosLike", {"x": self})


@register_converter(aten.ones_like.default, samples=_like_samples)
def convert_ones_like(
    self: ge.Tensor,
    *,
    dtype: torch.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    memory_format: Any = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
    if layout is not None and layout != torch.strided:
        raise NotImplementedError("ones_like is only converted for dense (strided) tensors")
    self = dtype_promote(dtype if dtype is not None else self.dtype, self)
    return ge.op1("OnesLike", {"x": self})


def _size_samples() -> list[Sample]:
    return [Sample(([2, 3],)), Sample(([4],), {"dtype": torch.int32}), Sample(([2, 2],), {"dtype": torch.float16})]


@register_converter(aten.zeros.default, samples=_size_samples)
def convert_zeros(
    size: list[int],
    *,
    dtype: torch.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    if dtype is None:
        # TorchAir's Fill wrapper makes the size's Const before the value's.
        dims, shape = _size_input(size)
        value = ge.const(0.0)
        return ge.op1("Fill", {"dims": dims, "value": value}, dtypes=DataType.DT_FLOAT, shapes=None if shape is None else [shape])
    return _fill(size, cast_scalar(0.0, dtype))


@register_converter(aten.ones.default, samples=_size_samples)
def convert_ones(
    size: list[int],
    *,
    dtype: torch.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _fill(size, ge.const(1, as_ge_dtype(dtype) if dtype is not None else DataType.DT_FLOAT))


@register_converter(aten.empty.memory_format, samples=_size_samples)
def convert_empty(
    size: list[int],
    *,
    dtype: torch.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    memory_format: Any = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
    if layout is not None and layout != torch.strided:
        raise NotImplementedError("empty is only converted for dense (strided) tensors")
    if memory_format is not None and memory_format != torch.contiguous_format:
        raise NotImplementedError("empty is only converted for torch.contiguous_format")
    return _fill(size, cast_scalar(0.0, output_dtype(meta_outputs)))


@register_converter(aten.empty_like.default, samples=_like_samples)
def convert_empty_like(
    self: ge.Tensor,
    *,
    dtype: torch.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    memory_format: Any = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
    if layout is not None and layout != torch.strided:
        raise NotImplementedError("empty_like is only converted for dense (strided) tensors")
    if memory_format not in (None, torch.contiguous_format, torch.preserve_format):
        raise NotImplementedError("empty_like is only converted for contiguous or preserved memory formats")
    dims = _shape_of(self)
    value = cast_scalar(0.0, output_dtype(meta_outputs))
    return ge.op1("Fill", {"dims": dims, "value": value}, dtypes=value.dtype, shapes=[self.shape])


# -- new_* ----------------------------------------------------------------------------
def _new_samples() -> list[Sample]:
    return [
        Sample((torch.randn(2), [2, 3])),
        Sample((torch.randint(0, 5, (3,)), [4])),
        Sample((torch.randn(2), [3]), {"dtype": torch.int32}),
    ]


@register_converter(
    aten.new_full.default,
    samples=lambda: [
        Sample((torch.randn(2), [2, 3], 2.5)),
        Sample((torch.randint(0, 5, (3,)), [4], 7)),
        Sample((torch.randn(2), [3], 1), {"dtype": torch.int32}),
    ],
)
def convert_new_full(
    self: ge.Tensor,
    size: list[int],
    fill_value: Any,
    *,
    dtype: torch.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """new_full(Tensor self, SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    value = dtype_promote(dtype if dtype is not None else self.dtype, fill_value)
    if layout is not None and layout != torch.strided:
        raise NotImplementedError("new_full is only converted for dense (strided) tensors")
    return _fill(size, value)


def _new_filled(self: ge.Tensor, size: list[int], number: float, dtype: torch.dtype | None, layout: Any) -> ge.Tensor:
    target = ge_dtype(dtype) if dtype is not None else self.dtype
    if layout is not None and layout != torch.strided:
        raise NotImplementedError("new_zeros/new_ones are only converted for dense (strided) tensors")
    return _fill(size, cast_scalar(number, target))


@register_converter(aten.new_zeros.default, samples=_new_samples)
def convert_new_zeros(
    self: ge.Tensor,
    size: list[int],
    *,
    dtype: torch.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _new_filled(self, size, 0.0, dtype, layout)


@register_converter(aten.new_ones.default, samples=_new_samples)
def convert_new_ones(
    self: ge.Tensor,
    size: list[int],
    *,
    dtype: torch.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _new_filled(self, size, 1.0, dtype, layout)


@register_converter(aten.new_empty.default, samples=_new_samples)
def convert_new_empty(
    self: ge.Tensor,
    size: list[int],
    *,
    dtype: torch.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """new_empty(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    target = ge_dtype(dtype) if dtype is not None else self.dtype
    shape = dtype_promote(DataType.DT_INT32, size if isinstance(size, ge.Tensor) else list(size))
    if layout is not None and layout != torch.strided:
        raise NotImplementedError("new_empty is only converted for dense (strided) tensors")
    attrs = {"dtype": TORCHAIR_DTYPE_NUMBER[target], "init": False}
    return ge.op1("Empty", {"shape": shape}, attrs, dtypes=target, shapes=None if isinstance(size, ge.Tensor) else [tuple(size)])


def _new_empty_strided_samples() -> list[Sample]:
    return [Sample((torch.randn(2, 3), [3, 4], [4, 1])), Sample((torch.randn(2), [2, 3], [1, 2]), {"dtype": torch.float16})]


@register_converter(aten.new_empty_strided.default, samples=_new_empty_strided_samples)
def convert_new_empty_strided(
    self: ge.Tensor,
    size: Any,
    stride: Any,
    *,
    dtype: torch.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """new_empty_strided(Tensor self, SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    target = self.dtype if dtype is None else ge_dtype(dtype)
    sizes = dtype_promote(DataType.DT_INT32, size if isinstance(size, ge.Tensor) else list(size))
    if layout is not None and layout != torch.strided:
        raise NotImplementedError("new_empty_strided is converted only for dense (strided) tensors")
    empty = ge.op1("Empty", {"shape": sizes}, {"dtype": TORCHAIR_DTYPE_NUMBER[target], "init": False}, dtypes=target)
    # TorchAir views the fresh buffer with the requested strides.
    inputs = {"x": empty, "size": sizes, "stride": index_input(stride), "storage_offset": index_input(0)}
    return ge.op1("AsStrided", inputs)


# -- arange / scalar_tensor / fill ----------------------------------------------------
def _range(start: ge.Tensor, limit: ge.Tensor, delta: ge.Tensor, target: DataType) -> ge.Tensor:
    """``Range`` then a ``Cast`` to the output dtype (Range's own output type is unknown
    to TorchAir, so the cast is always there)."""
    result = ge.op1("Range", {"start": start, "limit": limit, "delta": delta})
    return dtype_promote(target, result)


def _number(value: Any) -> ge.Tensor:
    """A Python number given to a GE op whose other inputs have no known dtype."""
    return value if isinstance(value, ge.Tensor) else ge.const(value)


@register_converter(
    aten.arange.default,
    samples=lambda: [
        Sample((5,)),
        Sample((6,), {"dtype": torch.float32}),
        Sample((4.0,)),
        Sample((7,), {"dtype": torch.int32, "device": torch.device("cpu")}),
    ],
)
def convert_arange(
    end: Any,
    *,
    dtype: torch.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    target = as_ge_dtype(dtype) if dtype else output_dtype(meta_outputs)
    start = ge.const(0, DataType.DT_INT32)
    step = ge.const(1, DataType.DT_INT32)
    return _range(start, _number(end), step, target)


@register_converter(
    aten.arange.start,
    samples=lambda: [Sample((2, 7)), Sample((-3, 3), {"dtype": torch.float32}), Sample((1.0, 4.0))],
)
def convert_arange_start(
    start: Any,
    end: Any,
    *,
    dtype: torch.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    target = as_ge_dtype(dtype) if dtype else output_dtype(meta_outputs)
    step = ge.const(1, DataType.DT_INT32)
    return _range(_number(start), _number(end), step, target)


@register_converter(
    aten.arange.start_step,
    samples=lambda: [Sample((0, 10, 3)), Sample((1.0, 2.0, 0.25)), Sample((10, 0, -2), {"dtype": torch.float32})],
)
def convert_arange_start_step(
    start: Any,
    end: Any,
    step: Any = 1,
    *,
    dtype: torch.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    target = as_ge_dtype(dtype) if dtype else output_dtype(meta_outputs)
    first, limit, delta = dtype_promote(target, start, end, step)
    return _range(first, limit, delta, target)


@register_converter(
    aten.scalar_tensor.default,
    samples=lambda: [
        Sample((1.5,)),
        Sample((3,), {"dtype": torch.int64}),
        Sample((2.0,), {"dtype": torch.float16}),
        Sample((True,), {"dtype": torch.bool}),
    ],
)
def convert_scalar_tensor(
    s: Any,
    *,
    dtype: torch.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    if dtype is not None:
        return dtype_promote(dtype, s)
    return s if isinstance(s, ge.Tensor) else ge.const(s)


@register_converter(
    aten.fill.Scalar,
    samples=lambda: [Sample((torch.randn(2, 3), 1.5)), Sample((torch.randint(0, 5, (4,)), 3)), Sample((torch.randn(3), 2))],
)
def convert_fill_scalar(self: ge.Tensor, value: Any, meta_outputs: Any = None) -> ge.Tensor:
    """fill.Scalar(Tensor self, Scalar value) -> Tensor"""
    dims = _shape_of(self)
    return ge.op1("Fill", {"dims": dims, "value": cast_scalar(value, self.dtype)}, shapes=[self.shape], dtypes=self.dtype)


@register_converter(
    aten.fill.Tensor,
    samples=lambda: [Sample((torch.randn(2, 3), torch.tensor(1.5))), Sample((torch.randn(3), torch.tensor(2)))],
)
def convert_fill_tensor(self: ge.Tensor, value: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """fill.Tensor(Tensor self, Tensor value) -> Tensor"""
    dims = _shape_of(self)
    return ge.op1("Fill", {"dims": dims, "value": ge.cast(value, self.dtype)}, shapes=[self.shape], dtypes=self.dtype)
