"""Shape and view converters: reshape-like views, transposes, broadcasts, squeezes,
strided views and symbolic sizes.

GE tensors have no strides, so every ATen view becomes a real GE op (``Reshape``,
``Transpose``, ``BroadcastTo``, ...). Integer lists (sizes, permutations, axes) enter as
``Const`` inputs of type int64, as TorchAir's ``dtype_promote`` and its raw-op wrappers
make them; a list holding symbolic sizes becomes a ``Pack`` of its items, as TorchAir's
``parse_symlist`` does before a converter runs. Every op is written with all the attrs
of its GE prototype, defaults included, because TorchAir's generated op builders do so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.builder import current_builder
from fxlab.ir.model import TORCHAIR_DTYPE_NUMBER, DataType, ge_dtype
from fxlab.passes.converters import promotion
from fxlab.passes.converters.promotion import index_input
from fxlab.passes.converters.registry import Sample, register_converter
from fxlab.passes.optimize_views import view_reshape, view_sizes
from fxlab.passes.symbolic_lists import ALL_SYM_ATTR, is_host_size

aten = torch.ops.aten
VIEW_SIZES_STATE = "view_sizes"  # graph state: symbol -> the GE value rebuilt views use for it


# -- argument helpers shared by this family's converters ------------------------------
def _reshape(x: ge.Tensor, shape: ge.Tensor) -> ge.Tensor:
    return ge.op1("Reshape", {"x": x, "shape": shape}, {"axis": 0, "num_axes": -1})


def transpose(x: ge.Tensor, perm: Sequence[int]) -> ge.Tensor:
    """``Transpose(x, perm)`` with the permutation as an int64 ``Const``."""
    return ge.op1("Transpose", {"x": x, "perm": ge.const(list(perm), DataType.DT_INT64)})


def squeeze(x: ge.Tensor, axis: Sequence[int] = ()) -> ge.Tensor:
    return ge.op1("Squeeze", {"x": x}, {"axis": list(axis)})


def unsqueeze(x: ge.Tensor, axes: Sequence[int]) -> ge.Tensor:
    return ge.op1("Unsqueeze", {"x": x}, {"axes": list(axes)})


def identity(x: ge.Tensor) -> ge.Tensor:
    return ge.op1("Identity", {"x": x})


def shape_of(x: ge.Tensor, dtype: DataType = DataType.DT_INT32) -> ge.Tensor:
    """``Shape(x)``; its ``dtype`` attr is an int in TorchAir's dtype numbering."""
    return ge.op1("Shape", {"x": x}, {"dtype": TORCHAIR_DTYPE_NUMBER[dtype]}, dtypes=dtype, shapes=[(x.rank,)])


def gather_dim(shape: ge.Tensor, index: int) -> ge.Tensor:
    """One element of a ``Shape`` output, as TorchAir's ``ge.Gather(shape, index)``."""
    attrs = {"validate_indices": True, "batch_dims": 0, "is_preprocessed": False, "negative_index_support": False}
    return ge.op1("Gather", {"x": shape, "indices": ge.const(index, DataType.DT_INT64)}, attrs, dtypes=shape.dtype, shapes=[()])


def fold_trailing_dims(x: ge.Tensor, shape: ge.Tensor, kept: int) -> ge.Tensor:
    """``x`` reshaped to its first ``kept`` dims and one more holding the rest, as
    TorchAir writes it: ``Reshape(x, Pack([Gather(shape, 0), ..., -1]))``."""
    dims = [gather_dim(shape, i) for i in range(kept)]
    # Pack's op wrapper types the -1 from its inputs' known types: the Gathers are fresh
    # (unknown), so it is the default int64.
    parts = dims + [promotion.scalar_input(-1, *dims)]
    packed = ge.op1("Pack", {f"x{i}": p for i, p in enumerate(parts)}, {"axis": 0, "N": kept + 1}, dtypes=DataType.DT_INT32)
    return ge.op1("Reshape", {"x": x, "shape": packed}, {"axis": 0, "num_axes": -1})


# -- samples ----------------------------------------------------------------------------
def _view_samples() -> list[Sample]:
    return [Sample((torch.randn(2, 3, 4), [6, 4])), Sample((torch.randn(2, 3, 4), [-1, 12]))]


def _permute_samples() -> list[Sample]:
    return [Sample((torch.randn(2, 3, 4), [2, 0, 1])), Sample((torch.randn(2, 1, 4), [1, 0, 2])), Sample((torch.randn(2, 3), [-1, 0]))]


# -- converters ---------------------------------------------------------------------------
@register_converter(aten.view.default, samples=_view_samples)
def convert_view(self: ge.Tensor, size: Any, *, meta_outputs: Any = None) -> ge.Tensor:
    """view(Tensor(a) self, SymInt[] size) -> Tensor(a)"""
    return _reshape(self, index_input(size, keep_int32=True))


@register_converter(aten.reshape.default, samples=_view_samples)
def convert_reshape(self: ge.Tensor, shape: Any, *, meta_outputs: Any = None) -> ge.Tensor:
    """reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)"""
    return _reshape(self, index_input(shape, keep_int32=True))


@register_converter(aten._unsafe_view.default, samples=_view_samples)
def convert_unsafe_view(self: ge.Tensor, size: Any, *, meta_outputs: Any = None) -> ge.Tensor:
    """_unsafe_view(Tensor self, SymInt[] size) -> Tensor"""
    return _reshape(self, index_input(size))


@register_converter(aten._reshape_alias.default, samples=lambda: [Sample((torch.randn(2, 3, 4), [6, 4], [4, 1]))])
def convert_reshape_alias(self: ge.Tensor, size: Any, stride: Any, *, meta_outputs: Any = None) -> ge.Tensor:
    """_reshape_alias(Tensor(a) self, SymInt[] size, SymInt[] stride) -> Tensor(a)"""
    # The strides describe a contiguous result (that is when ATen emits this op), so a
    # Reshape is exact; TorchAir ships no converter of its own for it.
    return _reshape(self, index_input(size))


@register_converter(aten.view.dtype, samples=lambda: [Sample((torch.randn(2, 3), torch.int32))])
def convert_view_dtype(self: ge.Tensor, dtype: torch.dtype, *, meta_outputs: Any = None) -> ge.Tensor:
    """view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)"""
    target = ge_dtype(dtype)
    # keep_dim stays at its IR default (false), which TorchAir's op wrapper leaves out.
    return ge.op1("Bitcast", {"x": self}, {"type": target}, dtypes=target)


@register_converter(aten.permute.default, samples=_permute_samples)
def convert_permute(self: ge.Tensor, dims: Sequence[int], *, meta_outputs: Any = None) -> ge.Tensor:
    """permute(Tensor(a) self, int[] dims) -> Tensor(a)"""
    rank = len(dims)
    dims = [d + rank if d < 0 else d for d in dims]
    # TorchAir's shortcut: when only size-1 axes move, squeeze them all and unsqueeze at
    # their new places instead of transposing.
    ones = [i for i, size in enumerate(self.shape) if size == 1]
    kept_in = [i for i in range(len(self.shape)) if i not in ones]
    kept_out = [d for d in dims if d not in ones]
    if kept_in == kept_out:
        out_ones = [i for i, size in enumerate(meta_outputs.shape) if size == 1]
        return unsqueeze(squeeze(self), out_ones)
    return transpose(self, dims)


@register_converter(aten.transpose.int, samples=lambda: [Sample((torch.randn(2, 3, 4), 1, 2)), Sample((torch.randn(2, 3, 4), 0, -1))])
def convert_transpose(self: ge.Tensor, dim0: int, dim1: int, *, meta_outputs: Any = None) -> ge.Tensor:
    """transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)"""
    perm = list(range(self.rank))
    perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
    return transpose(self, perm)


@register_converter(aten.t.default, samples=lambda: [Sample((torch.randn(3, 4),)), Sample((torch.randn(5),))])
def convert_t(self: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """t(Tensor(a) self) -> Tensor(a)"""
    if self.rank < 2:
        return identity(self)
    return transpose(self, [1, 0])


def _expand_samples() -> list[Sample]:
    return [
        Sample((torch.randn(3, 1), [3, 4])),
        Sample((torch.randn(4), [2, 3, 4])),
        Sample((torch.randn(2, 1), [-1, 5])),
        Sample((torch.randn(2, 3), [2, 3])),
    ]


@register_converter(aten.expand.default, samples=_expand_samples)
def convert_expand(self: ge.Tensor, size: Any, *, implicit: bool = False, meta_outputs: Any = None) -> ge.Tensor:
    """expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)"""
    if implicit:
        raise NotImplementedError("expand with implicit=True has no GE mapping (TorchAir rejects it too)")
    if meta_outputs is not None and self.symbolic_shape == str(list(meta_outputs.shape)):
        return self  # TorchAir returns the input itself when its sizes print as the output's
    return ge.op1("BroadcastTo", {"x": self, "shape": index_input(size)})


def _dims(meta: Any) -> list[int]:
    return [d if isinstance(d, int) else -1 for d in meta.shape]


@register_converter(aten.unsqueeze.default, samples=lambda: [Sample((torch.randn(2, 3), 1)), Sample((torch.randn(2, 3), -1))])
def convert_unsqueeze(self: ge.Tensor, dim: int, *, meta_outputs: Any = None) -> ge.Tensor:
    """unsqueeze(Tensor(a) self, int dim) -> Tensor(a)"""
    return unsqueeze(self, [dim])


@register_converter(aten.squeeze.default, samples=lambda: [Sample((torch.randn(2, 1, 3, 1),)), Sample((torch.randn(2, 3),))])
def convert_squeeze(self: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """squeeze(Tensor(a) self) -> Tensor(a)"""
    ones = [i for i, size in enumerate(self.shape) if size == 1]
    return squeeze(self, ones) if ones else identity(self)


@register_converter(
    aten.squeeze.dim, samples=lambda: [Sample((torch.randn(2, 1, 3), 1)), Sample((torch.randn(2, 3), 0)), Sample((torch.randn(2, 1), -1))]
)
def convert_squeeze_dim(self: ge.Tensor, dim: int, *, meta_outputs: Any = None) -> ge.Tensor:
    """squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)"""
    return squeeze(self, [dim]) if self.shape[dim] == 1 else identity(self)


@register_converter(aten.squeeze.dims, samples=lambda: [Sample((torch.randn(2, 1, 3, 1), [1, 3])), Sample((torch.randn(2, 1, 3), [0, 1]))])
def convert_squeeze_dims(self: ge.Tensor, dim: Sequence[int], *, meta_outputs: Any = None) -> ge.Tensor:
    """squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)"""
    # TorchAir has no converter for this overload; squeezing only the listed axes of
    # static size 1 is what the single-dim converter does for each of them.
    rank = self.rank
    ones = sorted({d % rank for d in dim if self.shape[d] == 1}) if rank else []
    return squeeze(self, ones) if ones else identity(self)


def _as_strided_samples() -> list[Sample]:
    return [
        Sample((torch.randn(4, 4), [2, 2], [4, 1], 1)),
        Sample((torch.randn(16), [3, 3], [1, 2])),
        Sample((torch.randn(600), [2, 2], [1, 256], 3)),
    ]


@register_converter(aten.as_strided.default, samples=_as_strided_samples)
def convert_as_strided(self: ge.Tensor, size: Any, stride: Any, storage_offset: Any = None, *, meta_outputs: Any = None) -> ge.Tensor:
    """as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)"""
    offset = 0 if storage_offset is None else storage_offset
    static = _all_ints(size) and _all_ints(stride)
    if static and stride and stride[-1] >= 256:
        return _as_strided_large_stride(self, list(size), list(stride), offset)
    inputs = {"x": self, "size": index_input(size), "stride": index_input(stride), "storage_offset": index_input(offset)}
    return ge.op1("AsStrided", inputs)


def _as_strided_large_stride(self: ge.Tensor, size: list[int], stride: list[int], offset: Any) -> ge.Tensor:
    """TorchAir's faster form when the innermost stride is large: read the axes in
    decreasing stride order with ``AsStrided``, then ``Transpose`` them back."""
    order = sorted({(stride[i], (i, size[i])) for i in range(len(stride))}, reverse=True)
    sorted_stride = [s for s, _ in order]
    sorted_size = [dim_size for _, (_, dim_size) in order]
    origin = [i for _, (i, _) in order]
    offset_t = index_input(offset)
    inputs = {"x": self, "size": index_input(sorted_size), "stride": index_input(sorted_stride), "storage_offset": offset_t}
    strided = ge.op1("AsStrided", inputs)
    perm = [0] * len(stride)
    for i, axis in enumerate(origin):
        perm[axis] = i
    return transpose(strided, perm)


def _all_ints(values: Any) -> bool:
    return isinstance(values, (list, tuple)) and all(isinstance(v, int) for v in values)


@register_converter(aten.repeat.default, samples=lambda: [Sample((torch.randn(2, 3), [2, 1])), Sample((torch.randn(3), [2, 2]))])
def convert_repeat(self: ge.Tensor, repeats: Any, *, meta_outputs: Any = None) -> ge.Tensor:
    """repeat(Tensor self, SymInt[] repeats) -> Tensor"""
    return ge.op1("Tile", {"x": self, "multiples": index_input(repeats)})


@register_converter(aten.flip.default, samples=lambda: [Sample((torch.randn(2, 3, 4), [0, 2])), Sample((torch.randn(2, 3), [-1]))])
def convert_flip(self: ge.Tensor, dims: Sequence[int], *, meta_outputs: Any = None) -> ge.Tensor:
    """flip(Tensor self, int[] dims) -> Tensor"""
    return ge.op1("ReverseV2", {"x": self, "axis": index_input(list(dims))})


# TorchAir also converts nodes whose target is the packet itself (older Dynamo graphs).
@register_converter(aten.sym_size.int, aten.sym_size, samples=lambda: [Sample((torch.randn(2, 3), 1))])
def convert_sym_size(self: ge.Tensor, dim: int, *, meta_outputs: Any = None) -> Any:
    """sym_size.int(Tensor self, int dim) -> SymInt"""
    static = _static_value(meta_outputs)
    if static is not None:
        # As TorchAir: a size known at trace time is a Python int and no op; as a graph
        # output it is returned as it is (see fxlab.ir.host_outputs).
        return static
    shape = shape_of(self, DataType.DT_INT64)
    indices = ge.const(dim, DataType.DT_INT64)
    attrs = {
        "validate_indices": True,
        "batch_dims": 0,
        "is_preprocessed": False,
        "negative_index_support": False,
        "_force_unknown_shape": True,
    }
    return ge.op1("Gather", {"x": shape, "indices": indices}, attrs, dtypes=DataType.DT_INT64, shapes=[()])


def _static_value(meta: Any) -> int | None:
    if isinstance(meta, int):
        return meta
    if isinstance(meta, torch.SymInt):
        try:
            return int(str(meta))
        except ValueError:
            return None
    return None


@register_converter(aten.sym_numel.default, aten.sym_numel, samples=lambda: [Sample((torch.randn(2, 3, 4),))])
def convert_sym_numel(self: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """sym_numel(Tensor self) -> SymInt"""
    # TorchAir has no static shortcut here: the element count is always computed.
    shape = shape_of(self)
    count = ge.op1("ReduceProdD", {"x": shape}, {"axes": [0], "keep_dims": False}, dtypes=shape.dtype, shapes=[()])
    return ge.cast(count, DataType.DT_INT64)


def _view_reshape_samples() -> list[Sample]:
    return [Sample((torch.randn(2, 6), torch.randn(2, 6), [2, 3, 2])), Sample((torch.randn(4, 3), torch.randn(3, 4), [(None, "s0", 1), 3]))]


@register_converter(view_reshape, samples=_view_reshape_samples)
def convert_view_reshape(x: ge.Tensor, base: ge.Tensor, dims: list[Any], *, meta_outputs: Any = None) -> ge.Tensor:
    """view_reshape(Tensor x, Tensor base, Any[] dims) -> Tensor"""
    # The value first found for each symbol serves the rest of the graph, as in TorchAir
    # (the key says whether it serves only the graph's first rebuilt view).
    known: dict[str, Any] = current_builder().graph_state.setdefault(VIEW_SIZES_STATE, {})
    parts = []
    for dim in dims:
        if isinstance(dim, int):
            parts.append(ge.const(dim, DataType.DT_INT64))
            continue
        given, key, base_dim = dim
        if key not in known:
            if given is None and base_dim < 0:
                raise NotImplementedError(f"the rebuilt view's size {key} is named by no view and is no size of its base")
            known[key] = given if given is not None else gather_dim(shape_of(base, DataType.DT_INT32), base_dim)
        parts.append(known[key] if isinstance(known[key], ge.Tensor) else ge.const(int(known[key]), DataType.DT_INT64))
    attrs: dict[str, Any] = {"N": len(parts), "axis": 0}
    if all(is_host_size(p) for p in parts):
        attrs[ALL_SYM_ATTR] = True
    attrs["_force_unknown_shape"] = True
    packed = ge.op1("Pack", {f"x{i}": p for i, p in enumerate(parts)}, attrs)
    return ge.op1("Reshape", {"x": x, "shape": packed}, {"axis": 0, "num_axes": -1})


@register_converter(view_sizes, samples=lambda: [Sample(([2, 3],))])
def convert_view_sizes(sizes: Any, *, meta_outputs: Any = None) -> Any:
    """view_sizes(SymInt[] sizes) -> ()"""
    return sizes  # the conversion packed a symbolic list before this runs; nothing else is made
