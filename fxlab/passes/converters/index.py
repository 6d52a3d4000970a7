"""Indexing converters: slicing, selecting, gathering and scattering by index.

``slice`` → ``StridedSliceV2`` (begin/end/axes/strides as int64 ``Const`` inputs, an open
end as INT32_MAX), ``select``/``index_select``/``embedding`` → ``GatherV2``, advanced
indexing → ``IndexByTensor``, ``gather`` → ``GatherElements``, ``scatter`` →
``ScatterElements``. ``index_put`` has no converter: TorchAir's raises
NotImplementedError for it, so fxlab shows it unsupported, as the real compile fails.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType
from fxlab.passes.converters.promotion import dtype_promote, index_input, known_dtype, scalar_input
from fxlab.passes.converters.registry import Sample, register_converter
from fxlab.passes.converters.shape import gather_dim, shape_of

aten = torch.ops.aten
_INT32_MAX = 2147483647
_INT64_MAX = 9223372036854775807


def _slice_samples() -> list[Sample]:
    return [
        Sample((torch.randn(4, 6), 1, 1, 5)),
        Sample((torch.randn(4, 6), 0, 0, _INT64_MAX, 2)),
        Sample((torch.randn(4, 6), -1, -3)),
        Sample((torch.randn(4, 6), 1, None, 3)),
        Sample((torch.randn(4, 6), 0, 0, 4)),
    ]


@register_converter(aten.slice.Tensor, samples=_slice_samples)
def convert_slice(
    self: ge.Tensor, dim: int = 0, start: Any = None, end: Any = None, step: Any = 1, *, meta_outputs: Any = None
) -> ge.Tensor:
    """slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)"""
    if meta_outputs is not None and _same_static_shape(self.shape, meta_outputs.shape):
        return self  # TorchAir skips a slice that keeps the whole tensor
    start = 0 if start is None else start
    if end is None or (not isinstance(end, ge.Tensor) and end == _INT64_MAX):
        end = _INT32_MAX
    elif not isinstance(end, ge.Tensor) and end > _INT32_MAX:
        raise ValueError("StridedSliceV2 does not support bounds beyond INT32_MAX")
    axes, begin, stop, strides = (index_input(v) for v in (dim, start, end, step))
    inputs = {"x": self, "begin": begin, "end": stop, "axes": axes, "strides": strides}
    masks = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": 0}
    return ge.op1("StridedSliceV2", inputs, masks)


def _same_static_shape(a: Sequence[int], b: Sequence[Any]) -> bool:
    return len(a) == len(b) and all(isinstance(y, int) and x == y and x >= 0 for x, y in zip(a, b))


def gather_v2(x: ge.Tensor, indices: ge.Tensor, axis: ge.Tensor, *, negative_index_support: bool = False) -> ge.Tensor:
    attrs = {"batch_dims": 0, "is_preprocessed": False, "negative_index_support": negative_index_support}
    return ge.op1("GatherV2", {"x": x, "indices": indices, "axis": axis}, attrs)


@register_converter(aten.select.int, samples=lambda: [Sample((torch.randn(3, 4), 0, 1)), Sample((torch.randn(3, 4, 5), 2, -1))])
def convert_select(self: ge.Tensor, dim: int, index: Any, *, meta_outputs: Any = None) -> ge.Tensor:
    """select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)"""
    return gather_v2(self, index_input(index), index_input([dim]), negative_index_support=True)


@register_converter(
    aten.index_select.default,
    samples=lambda: [
        Sample((torch.randn(5, 3), 0, torch.tensor([4, 0, 2]))),
        Sample((torch.randn(2, 5), 1, torch.tensor([1, 1], dtype=torch.int32))),
    ],
)
def convert_index_select(self: ge.Tensor, dim: int, index: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """index_select(Tensor self, int dim, Tensor index) -> Tensor"""
    return gather_v2(self, index, index_input(dim))


@register_converter(
    aten.embedding.default,
    samples=lambda: [Sample((torch.randn(10, 4), torch.tensor([[1, 2], [9, 0]]))), Sample((torch.randn(6, 3), torch.tensor([5, 5, 1]), 0))],
)
def convert_embedding(
    weight: ge.Tensor,
    indices: ge.Tensor,
    padding_idx: Any = -1,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
    *,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor"""
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding with scale_grad_by_freq or sparse has no GE mapping (TorchAir supports only both False)")
    return gather_v2(weight, indices, index_input([0]))


def _index_samples() -> list[Sample]:
    return [
        Sample((torch.randn(4, 5), [torch.tensor([0, 3, 3])])),
        Sample((torch.randn(4, 5), [None, torch.tensor([[1], [4]])])),
        Sample((torch.randn(3, 4, 5), [torch.tensor([0, 2]), None, torch.tensor([1, 4], dtype=torch.int32)])),
    ]


def _index_by_tensor(self: ge.Tensor, indices: Sequence[ge.Tensor | None], promote: bool) -> ge.Tensor:
    mask = [0 if i is None else 1 for i in indices]
    present = [i for i in indices if i is not None]
    if promote:
        present = [ge.cast_to(i, DataType.DT_INT64) for i in present]
    inputs: dict[str, ge.Tensor] = {"x": self}
    inputs.update({f"indices{k}": t for k, t in enumerate(present)})
    return ge.op1("IndexByTensor", inputs, {"indices_mask": mask})


@register_converter(aten.index.Tensor, samples=_index_samples)
def convert_index(self: ge.Tensor, indices: Sequence[ge.Tensor | None], *, meta_outputs: Any = None) -> ge.Tensor:
    """index.Tensor(Tensor self, Tensor?[] indices) -> Tensor"""
    return _index_by_tensor(self, indices, promote=True)


def _unsafe_index_samples() -> list[Sample]:
    rows = torch.tensor([[0], [0], [1], [1]])
    return [
        Sample((torch.randn(1, 2, 2, 3), [None, None, rows, torch.tensor([0, 0, 1, 1, 2, 2])])),
        Sample((torch.randn(4, 5), [torch.tensor([3, 1])])),
    ]


@register_converter(aten._unsafe_index.Tensor, samples=_unsafe_index_samples)
def convert_unsafe_index(self: ge.Tensor, indices: Sequence[ge.Tensor | None], *, meta_outputs: Any = None) -> ge.Tensor:
    """_unsafe_index.Tensor(Tensor self, Tensor?[] indices) -> Tensor"""
    if self.dtype in (DataType.DT_BOOL, DataType.DT_UINT8):
        raise NotImplementedError("_unsafe_index.Tensor of a bool or uint8 tensor has no GE mapping (TorchAir rejects it too)")
    return _index_by_tensor(self, indices, promote=False)


def _gather_samples() -> list[Sample]:
    return [
        Sample((torch.randn(3, 4), 1, torch.tensor([[0, 3], [1, 1], [2, 0]]))),
        Sample((torch.randn(3, 4), 0, torch.tensor([[2, 0, 1, 1]], dtype=torch.int32))),
    ]


@register_converter(aten.gather.default, samples=_gather_samples)
def convert_gather(self: ge.Tensor, dim: int, index: ge.Tensor, *, sparse_grad: bool = False, meta_outputs: Any = None) -> ge.Tensor:
    """gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor"""
    return ge.op1("GatherElements", {"x": self, "index": ge.cast_to(index, DataType.DT_INT64)}, {"dim": dim})


def _scatter(self: ge.Tensor, dim: int, index: ge.Tensor, src: ge.Tensor, reduction: str) -> ge.Tensor:
    inputs = {"data": self, "indices": index, "updates": src}
    return ge.op1("ScatterElements", inputs, {"axis": dim, "reduction": reduction})


def _scatter_index() -> torch.Tensor:
    return torch.tensor([[0, 2], [1, 0]])


@register_converter(aten.scatter.src, samples=lambda: [Sample((torch.zeros(3, 4), 1, _scatter_index(), torch.randn(2, 2)))])
def convert_scatter_src(self: ge.Tensor, dim: int, index: ge.Tensor, src: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor"""
    return _scatter(self, dim, index, src, "none")


@register_converter(
    aten.scatter.value,
    samples=lambda: [
        Sample((torch.zeros(3, 4), 1, _scatter_index(), 2.5)),
        Sample((torch.zeros(3, 4, dtype=torch.int32), 0, _scatter_index(), 7)),
    ],
)
def convert_scatter_value(self: ge.Tensor, dim: int, index: ge.Tensor, value: Any, *, meta_outputs: Any = None) -> ge.Tensor:
    """scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor"""
    dims = shape_of(index)
    value = ge.cast(scalar_input(value), self.dtype)
    src = ge.op1("Fill", {"dims": dims, "value": value}, dtypes=self.dtype, shapes=[tuple(index.shape)])
    return _scatter(self, dim, index, src, "none")


@register_converter(
    aten.scatter_add.default, samples=lambda: [Sample((torch.ones(3, 4), 1, torch.tensor([[0, 0], [3, 3]]), torch.randn(2, 2)))]
)
def convert_scatter_add(self: ge.Tensor, dim: int, index: ge.Tensor, src: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor"""
    return _scatter(self, dim, index, src, "add")


@register_converter(aten.tril.default, samples=lambda: [Sample((torch.randn(4, 4),)), Sample((torch.randn(2, 3, 5), 1))])
def convert_tril(self: ge.Tensor, diagonal: int = 0, *, meta_outputs: Any = None) -> ge.Tensor:
    """tril(Tensor self, int diagonal=0) -> Tensor"""
    return ge.op1("Tril", {"x": self}, {"diagonal": diagonal})


@register_converter(aten.triu.default, samples=lambda: [Sample((torch.randn(4, 4),)), Sample((torch.randn(3, 5), -1))])
def convert_triu(self: ge.Tensor, diagonal: int = 0, *, meta_outputs: Any = None) -> ge.Tensor:
    """triu(Tensor self, int diagonal=0) -> Tensor"""
    return ge.op1("Triu", {"x": self}, {"diagonal": diagonal})


def _index_add_samples() -> list[Sample]:
    return [
        Sample((torch.randn(5, 3), 0, torch.tensor([0, 4, 2]), torch.randn(3, 3))),
        Sample((torch.randn(2, 5), -1, torch.tensor([1, 1]), torch.randn(2, 2)), {"alpha": 2.0}),
        Sample((torch.randn(4, 3), 0, torch.tensor(2), torch.randn(1, 3))),
    ]


@register_converter(aten.index_add.default, samples=_index_add_samples)
def convert_index_add(
    self: ge.Tensor, dim: int, index: ge.Tensor, source: ge.Tensor, *, alpha: Any = 1, meta_outputs: Any = None
) -> ge.Tensor:
    """index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor"""
    alpha = dtype_promote(self.dtype, alpha)  # InplaceIndexAdd needs alpha of self's dtype
    rank = self.rank
    if index.rank == 0:  # InplaceIndexAdd takes no 0-d index
        index = ge.op1("Unsqueeze", {"x": index}, {"axes": [0]}, shapes=[(1,)])
    index_shape, self_shape = shape_of(index), shape_of(self)
    if known_dtype(index) != DataType.DT_INT32:
        index = ge.cast(index, DataType.DT_INT32)
    dim = dim + rank if dim < 0 else dim
    sizes = [gather_dim(index_shape, 0) if i == dim else gather_dim(self_shape, i) for i in range(rank)]
    packed = ge.op1("Pack", {f"x{i}": s for i, s in enumerate(sizes)}, {"axis": 0, "N": rank}, dtypes=DataType.DT_INT32, shapes=[(rank,)])
    updates = ge.op1("BroadcastTo", {"x": source, "shape": packed})
    # InplaceIndexAdd writes its first input: TorchAir hands it a copy.
    moved = ge.op1("TensorMove", {"x": self})
    inputs = {"var": moved, "indices": index, "updates": updates, "alpha": alpha}
    return ge.op("InplaceIndexAdd", inputs, {"axis": dim}, outputs=("var",))[0]
