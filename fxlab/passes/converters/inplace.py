"""In-place conversion as TorchAir does it: ``auto_functionalized_v2``, ``copy_``, and
the scatter ops functionalization leaves behind (``copy``, ``slice_scatter``,
``select_scatter``, ``as_strided_scatter``).

``auto_functionalized_v2(op, ..., _all_bases=[...])`` becomes: a ``TensorMove`` of every
mutated base; the in-place GE op applied to the moved base (or, for a mutated view of
it, to an ``AsStrided`` of the moved base); then per mutated input the updated base —
the op's ref output (the output named like the input), or for a view a ``ViewCopy`` of
the ``AsStrided`` result back into the moved base, ordered after the op by a control
edge. ``copy_(input, value)`` becomes ``Assign(input, value)``; the graph pass
:mod:`fxlab.passes.output_reuse` then turns an ``Assign`` into a graph input into an extra
graph output, as TorchAir does.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any
from collections.abc import Sequence

import torch
from torch._higher_order_ops import auto_functionalize as af
from torch._higher_order_ops.auto_functionalize import get_mutable_args, read_view_information_from_args

from fxlab.ir import ge
from fxlab.ir.builder import Tensor, current_builder
from fxlab.ir.model import DataType, IrOp, ge_dtype
from fxlab.passes.converters.auto import NotAutoConvertible, auto_converter, auto_converter_verdict
from fxlab.passes.inference_rule import attach_inference_rules
from fxlab.passes.converters.custom_reference import ascribe_torch_call
from fxlab.passes.converters.promotion import dtype_promote
from fxlab.passes.converters.registry import CONVERTERS, Sample, register_converter
from fxlab.passes.torchair_refusals import mutated_views_of_one_base

aten = torch.ops.aten
AUTO_FUNCTIONALIZED_V2 = getattr(torch.ops.higher_order, "auto_functionalized_v2", None)
_INT32_MAX = 2147483647


def _index_const(value: Any) -> Tensor:
    """An index-number operand: GE tensors pass through, Python ints become int64 ``Const``s
    (TorchAir's auto conversion of index-number inputs)."""
    return value if isinstance(value, Tensor) else ge.const(list(value) if isinstance(value, tuple) else value, DataType.DT_INT64)


# -- copy_ / copy ------------------------------------------------------------------------
def _copy_samples() -> list[Sample]:
    return [
        Sample((torch.zeros(2, 3), torch.randn(2, 3))),
        Sample((torch.zeros(4, 3), torch.randn(3))),  # broadcast into the input
    ]


@register_converter(aten.copy_.default, samples=_copy_samples)
def convert_copy_(self: Tensor, src: Tensor, non_blocking: bool = False, *, meta_outputs: Any = None) -> Tensor:
    """copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)"""
    return ge.op("Assign", {"ref": self, "value": src}, {"validate_shape": True, "use_locking": False}, ("ref",), shapes=[self.shape])[0]


def _copy_functional_samples() -> list[Sample]:
    return [
        Sample((torch.zeros(2, 3), torch.randn(2, 3))),
        Sample((torch.zeros(2, 3), torch.randn(3, dtype=torch.float16))),
    ]


@register_converter(aten.copy.default, samples=_copy_functional_samples)
def convert_copy(self: Tensor, src: Tensor, non_blocking: bool = False, *, meta_outputs: Any = None) -> Tensor:
    """copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor"""
    if self is src:
        return ge.op1("Identity", {"x": src}, shapes=[src.shape])
    cast = ge.cast_to(src, self.dtype)
    # TorchAir compares the sizes as the FX values print them; a fresh Cast has none, so
    # a copy that changes the dtype is always broadcast.
    if cast is src and src.symbolic_shape == self.symbolic_shape:
        return src  # same sizes: no broadcast needed, the value is src itself
    src = cast
    return ge.op1("BroadcastTo", {"x": src, "shape": _shape_of(self)}, shapes=[self.shape])


def _shape_of(x: Tensor) -> Tensor:
    return ge.op1("Shape", {"x": x}, {"dtype": 3}, dtypes=DataType.DT_INT32, shapes=[(len(x.shape),)])


# -- slice_scatter / select_scatter / as_strided_scatter ----------------------------------
def _slice_scatter_samples() -> list[Sample]:
    return [
        Sample((torch.zeros(4, 3), torch.randn(2, 3), 0, 1, 3)),
        Sample((torch.zeros(2, 5), torch.randn(2, 2), 1, -2)),
        Sample((torch.zeros(4, 3), torch.randn(4, 3))),
    ]


@register_converter(aten.slice_scatter.default, samples=_slice_scatter_samples)
def convert_slice_scatter(
    self: Tensor, src: Tensor, dim: int = 0, start: Any = None, end: Any = None, step: Any = 1, *, meta_outputs: Any = None
) -> Tensor:
    """slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor"""
    start = 0 if start is None else start
    end = sys.maxsize if end is None else end
    dynamic = any(isinstance(v, Tensor) for v in (start, end, step))
    if not dynamic and step == 1:
        return _slice_scatter_step1(self, src, dim, start, end)
    return _slice_scatter_by_index(self, src, dim, start, end, step)


def _slice_scatter_step1(self: Tensor, src: Tensor, dim: int, start: int, end: int) -> Tensor:
    """Keep what lies before and after the slice and concatenate ``src`` between them."""
    if start == 0 and end == sys.maxsize:
        return src
    if end != sys.maxsize and end > _INT32_MAX:
        raise NotImplementedError("StridedSliceV2 does not support bounds beyond INT32_MAX")
    dim %= len(self.shape)
    # TorchAir reads the size from the FX value: with a symbolic size a negative bound
    # becomes a symbolic expression, which its Const then holds at the traced value.
    limit = (self.symsize or list(self.shape))[dim]
    end = end % limit if end < 0 else min(end, _INT32_MAX)
    start = start % limit if start < 0 else min(start, _INT32_MAX)
    start = min(start, end)
    before = _strided_slice(self, 0, start, dim)
    after = _strided_slice(self, end, _INT32_MAX, dim)
    return ge.op1("ConcatV2", {"x0": before, "x1": src, "x2": after, "concat_dim": _index_const(dim)}, {"N": 3})


def _strided_slice(x: Tensor, begin: int, end: int, dim: int) -> Tensor:
    operands = {"x": x, "begin": _index_const(begin), "end": _index_const(end), "axes": _index_const(dim), "strides": _index_const(1)}
    masks = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": 0}
    shape = list(x.shape)
    static = shape[dim] >= 0 and type(begin) is int and type(end) is int
    shape[dim] = max(0, min(end, shape[dim]) - min(begin, shape[dim])) if static else -1
    return ge.op1("StridedSliceV2", operands, masks, shapes=[tuple(shape)])


def _slice_scatter_by_index(self: Tensor, src: Tensor, dim: int, start: Any, end: Any, step: Any) -> Tensor:
    """Scatter ``src`` at the indices ``range(start, min(size, end), step)`` along ``dim``."""
    sizes = _shape_of(self)
    if not isinstance(end, Tensor) and end == sys.maxsize:
        end = _gather(sizes, dim)
    # As TorchAir: every bound int32, a symbolic (int64) one and the fresh Shape cast.
    sizes, start, end, step = dtype_promote(DataType.DT_INT32, sizes, start, end, step)
    limit = ge.op1("Minimum", {"x1": _gather(sizes, dim), "x2": end})
    index = ge.op1("Range", {"start": start, "limit": limit, "delta": step})
    others = [d for d in range(len(src.shape)) if d != dim]
    if others:
        index = ge.op1("Unsqueeze", {"x": index}, {"axes": others})
        index = ge.op1("Expand", {"x": index, "shape": _shape_of(src)})
    return ge.op1(
        "ScatterElements", {"data": self, "indices": index, "updates": src}, {"axis": dim, "reduction": "none"}, shapes=[self.shape]
    )


def _gather(x: Tensor, index: int) -> Tensor:
    attrs = {"validate_indices": True, "batch_dims": 0, "is_preprocessed": False, "negative_index_support": False}
    return ge.op1("Gather", {"x": x, "indices": _index_const(index)}, attrs, shapes=[()])


def _select_scatter_samples() -> list[Sample]:
    return [Sample((torch.zeros(4, 3), torch.randn(3), 0, 1)), Sample((torch.zeros(2, 3, 4), torch.randn(2, 4), 1, 2))]


@register_converter(aten.select_scatter.default, samples=_select_scatter_samples)
def convert_select_scatter(self: Tensor, src: Tensor, dim: int, index: Any, *, meta_outputs: Any = None) -> Tensor:
    """select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor"""
    sizes = _shape_of(self)
    # A Python index becomes an int64 Const, as TorchAir's op builder types it.
    index_value = index if isinstance(index, Tensor) else ge.const(index, DataType.DT_INT64)
    indices = ge.op1("BroadcastTo", {"x": index_value, "shape": sizes}, shapes=[self.shape])
    expanded = ge.op1("ExpandDims", {"x": src, "axis": _index_const(dim)})
    updates = ge.op1("BroadcastTo", {"x": expanded, "shape": sizes}, shapes=[self.shape])
    return ge.op1(
        "ScatterElements", {"data": self, "indices": indices, "updates": updates}, {"axis": dim, "reduction": "none"}, shapes=[self.shape]
    )


def _as_strided_scatter_samples() -> list[Sample]:
    return [
        Sample((torch.zeros(4, 3), torch.randn(2, 3), (2, 3), (3, 1), 3)),
        Sample((torch.zeros(3, 3), torch.randn(3), (3,), (4,))),
    ]


@register_converter(aten.as_strided_scatter.default, samples=_as_strided_scatter_samples)
def convert_as_strided_scatter(
    self: Tensor, src: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: Any = None, *, meta_outputs: Any = None
) -> Tensor:
    """as_strided_scatter(Tensor self, Tensor src, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor"""
    storage_offset = 0 if storage_offset is None else storage_offset
    target = ge_dtype(meta_outputs.dtype) if meta_outputs is not None else self.dtype
    self, src = ge.cast_to(self, target), ge.cast_to(src, target)
    if isinstance(size, Tensor):
        # TorchAir's form for a symbolic size: it takes the rank of the size's Pack (1) for
        # the rank of the view, so the source strides are a Pack of one 1 whatever the rank.
        src_stride = ge.op1("Pack", {"x0": ge.const(1, DataType.DT_INT64)}, {"N": 1, "axis": 0})
        return _view_copy(self, size, _sizes(stride), storage_offset, src, size, (), src_stride)
    return _view_copy(self, list(size), _sizes(stride), storage_offset, src, list(size), ())


def _sizes(value: Any) -> Any:
    return value if isinstance(value, Tensor) else list(value)


def _contiguous_strides(size: Sequence[int]) -> list[int]:
    strides = [1] * len(size)
    for i in range(len(size) - 2, -1, -1):
        strides[i] = strides[i + 1] * size[i + 1]
    return strides


def _view_copy(
    dst: Tensor, size: Any, stride: Any, offset: Any, src: Tensor, src_size: Any, dependencies: Sequence[Tensor], src_stride: Any = None
) -> Tensor:
    """``ViewCopy``: ``src`` (dense, shaped ``src_size``; its strides ``src_stride``, by
    default the contiguous ones) written into ``dst`` seen through (size, stride, offset);
    operands in TorchAir's creation order."""
    operands = {
        "dst": dst,
        "dst_size": _index_const(size),
        "dst_stride": _index_const(stride),
        "dst_storage_offset": _index_const(offset),
        "src": src,
        "src_size": _index_const(src_size),
        "src_stride": _index_const(_contiguous_strides(src_size) if src_stride is None else src_stride),
        "src_storage_offset": _index_const(0),
    }
    return ge.op("ViewCopy", operands, None, ("dst",), shapes=[dst.shape], dependencies=list(dependencies))[0]


# -- auto_functionalized_v2 ----------------------------------------------------------------
@dataclass
class _MutatedArg:
    """A mutated argument as the op sees it: the moved base itself, or an AsStrided of it
    (``view_size`` etc. set) that must be copied back after the op."""

    base_index: int
    tensor: Tensor
    view_size: list[Any] | None = None
    view_stride: list[Any] | None = None
    view_offset: Tensor | int | None = None


def _static_meta(meta: Any, what: str) -> torch.Tensor:
    """A meta-device tensor with the layout of fake value ``meta`` (static sizes only)."""
    values = [*meta.shape, *meta.stride(), meta.storage_offset()]
    if not all(isinstance(v, int) for v in values):
        raise NotImplementedError(f"{what} has symbolic sizes or strides; mutated views with dynamic shapes are not converted")
    extent = 1 + meta.storage_offset() + sum((s - 1) * st for s, st in zip(meta.shape, meta.stride()))
    return torch.empty(max(extent, 1), device="meta", dtype=meta.dtype).as_strided(meta.shape, meta.stride(), meta.storage_offset())


def _same_layout(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.size() == b.size() and a.stride() == b.stride() and a.storage_offset() == b.storage_offset()


def _regenerate(info: Any, moved: list[Tensor], base_metas: list[Any]) -> _MutatedArg:
    """TorchAir's ``regenerate_ge_view``: the operand the op gets for one mutated input."""
    index = info.base_index
    if isinstance(info, (af.NotView, af.AliasViewInfo)):
        return _MutatedArg(index, moved[index])  # an alias has its base's layout
    base = _static_meta(base_metas[index], f"base {index}")
    if isinstance(info, af.SliceViewInfo):
        view = aten.slice.Tensor(base, info.dim, info.start, info.end)
        if _same_layout(base, view):
            return _MutatedArg(index, moved[index])
        offset = ge.const(view.storage_offset(), DataType.DT_INT64)
        return _as_strided_arg(index, moved[index], list(view.size()), list(view.stride()), offset, view)
    if isinstance(info, af.AsStridedViewInfo):
        view = torch.as_strided(base, info.size, info.stride, info.storage_offset)
        if _same_layout(base, view):
            return _MutatedArg(index, moved[index])
        return _as_strided_arg(index, moved[index], list(info.size), list(info.stride), info.storage_offset, view)
    raise NotImplementedError(f"view kind {type(info).__name__} of a mutated input is not converted")


def _as_strided_arg(index: int, base: Tensor, size: list[Any], stride: list[Any], offset: Tensor | int, fake: Any) -> _MutatedArg:
    # sizes and strides: ints, or a symbolic graph's SymInts, passed on as TorchAir passes them
    operands = {"x": base, "size": _index_const(size), "stride": _index_const(stride), "storage_offset": _index_const(offset)}
    view = ge.set_dtype(ge.op1("AsStrided", operands, shapes=[tuple(size)]), base.dtype)
    current_builder().fake_values[view.tensor] = fake  # TorchAir gives the view the view's value
    return _MutatedArg(index, view, size, stride, offset)


def _updated_base(arg: _MutatedArg, moved: list[Tensor], last_op: IrOp) -> Tensor:
    """TorchAir's ``view_copy``: what later users read as the updated base."""
    done = Tensor(last_op, 0)
    if arg.view_size is not None:
        return _view_copy(moved[arg.base_index], arg.view_size, arg.view_stride, arg.view_offset, arg.tensor, arg.view_size, [done])
    ref = _ref_output(last_op, moved[arg.base_index])
    if ref is not None:
        return ref
    # No output named like the input: the converter made more than one op, or the op
    # has no ref output. TorchAir then reads the moved base after the op.
    return ge.op1("Identity", {"x": moved[arg.base_index]}, dependencies=[done], shapes=[moved[arg.base_index].shape])


def _ref_output(op: IrOp, fed: Tensor) -> Tensor | None:
    """The output of ``op`` named like the input ``fed`` went into: its ref output."""
    for source, desc in zip(op.data_inputs, op.input_desc):
        if source == fed.tensor:
            for index, out in enumerate(op.output_desc):
                if out.name == desc.name:
                    return Tensor(op, index)
    return None


def _mutable_op_converter(op: Any) -> Any:
    converter = CONVERTERS.get(op)
    if converter is not None:
        return converter.fn

    fn = auto_converter(op)
    if fn is None:
        ok, ge_type, reason = auto_converter_verdict(op)
        raise NotAutoConvertible(f"no Ascend IR converter for {op}, and TorchAir's auto converter refuses it: {reason}")
    return fn


def _auto_functionalized_samples() -> list[Sample]:
    op = sample_inplace_op()
    return [
        Sample((op,), {"y": torch.randn(4, 3), "_x_base_index": 0, "_all_bases": [torch.randn(4, 3)]}),
        Sample(
            (op,),
            {
                "y": torch.randn(2, 3),
                "_x_base_index": 0,
                "_x_slice_dim": 0,
                "_x_slice_start": 1,
                "_x_slice_end": 3,
                "_all_bases": [torch.randn(4, 3)],
            },
        ),
        Sample(
            (op,),
            {
                "y": torch.randn(4),
                "_x_base_index": 0,
                "_x_size": (4,),
                "_x_stride": (3,),
                "_x_storage_offset": 1,
                "_all_bases": [torch.randn(4, 3)],
            },
        ),
    ]


@register_converter(AUTO_FUNCTIONALIZED_V2, samples=_auto_functionalized_samples)
def convert_auto_functionalized_v2(mutable_op: Any, *, meta_outputs: Any = None, **kwargs: Any) -> tuple[Any, ...]:
    """auto_functionalized_v2(OpOverload op, *, Tensor[] _all_bases, <op arguments>, <view info>) -> (*op outputs, *updated bases)"""
    refused = mutated_views_of_one_base(mutable_op, kwargs)
    if refused is not None:
        raise refused
    kwargs = dict(kwargs)
    bases = list(kwargs.pop("_all_bases", []))
    names, types = get_mutable_args(mutable_op)
    view_info = read_view_information_from_args(names, types, kwargs, bases)
    builder = current_builder()
    returns = len(mutable_op._schema.returns)
    metas = list(meta_outputs) if isinstance(meta_outputs, (list, tuple)) else []
    # The node's outputs are the op's own, then the updated bases; an op that returns
    # nothing still has one output (None) before them, as torch's auto_functionalized_v2 gives.
    base_metas = metas[max(returns, 1) :]
    # TorchAir gives each moved base its base's meta, and each AsStrided view its view's.
    moved = [ge.set_dtype(ge.op1("TensorMove", {"x": b}, shapes=[b.shape]), b.dtype) for b in bases]
    for base, copy in zip(bases, moved):
        builder.fake_values[copy.tensor] = base.fake
    mutated: list[_MutatedArg] = []
    for name in names:
        info = view_info[name]
        if isinstance(info, list):
            raise NotImplementedError(f"{mutable_op} mutates the tensor list {name!r}; TorchAir does not convert mutated tensor lists")
        if info is None:
            kwargs[name] = None
            continue
        mutated.append(_regenerate(info, moved, base_metas))
        kwargs[name] = mutated[-1].tensor
    own_meta = None if returns == 0 else metas[0] if returns == 1 else tuple(metas[:returns])
    first_new = len(builder.graph.ops)
    out = _mutable_op_converter(mutable_op)(**kwargs, meta_outputs=own_meta)
    # TorchAir gives the op's own ops their rule here, from the moved bases and views.
    attach_inference_rules(builder.graph.ops[first_new:], ((), kwargs), out, own_meta, builder.provenance.fx_node, mutable_op)
    ascribe_torch_call(mutable_op, (), kwargs, out, builder.graph.ops[first_new:])
    last_op = builder.graph.ops[-1]
    updates = [_updated_base(arg, moved, last_op) for arg in mutated]
    return (*out, *updates) if isinstance(out, tuple) else (out, *updates)


# -- a custom in-place op for the samples above ------------------------------------------
_SAMPLE_NAMESPACE = "fxlab_samples"
_SAMPLE_LIBS: list[Any] = []


def sample_inplace_op() -> Any:
    """``fxlab_samples::accumulate(Tensor(a!) x, Tensor y) -> Tensor``: ``x += y`` in place,
    returns ``x * y`` (new memory). Defined on first use, so importing fxlab registers no op."""
    namespace = getattr(torch.ops, _SAMPLE_NAMESPACE)
    if not hasattr(namespace, "accumulate"):
        lib = torch.library.Library(_SAMPLE_NAMESPACE, "FRAGMENT")
        lib.define("accumulate(Tensor(a!) x, Tensor y) -> Tensor")
        lib.impl("accumulate", _accumulate_cpu, "CPU")
        lib.impl("accumulate", _accumulate_meta, "Meta")
        _SAMPLE_LIBS.append(lib)
    return namespace.accumulate.default


def _accumulate_cpu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x.add_(y)
    return x * y


def _accumulate_meta(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.empty(torch.broadcast_shapes(x.shape, y.shape), dtype=x.dtype, device=x.device)
