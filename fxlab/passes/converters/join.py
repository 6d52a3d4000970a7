"""Converters that join tensors or split one into several: cat, stack, split, unbind.

``split``/``chunk`` become ``SplitV`` (sizes as an int64 input, the axis as an int32
``Const`` as TorchAir passes it), ``unbind`` ``Unpack``, ``cat`` ``ConcatV2`` and
``stack`` ``Pack``. ``chunk`` itself never reaches a functional graph: ATen decomposes
it into ``split.Tensor``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType, ge_dtype
from fxlab.passes.converters.registry import Sample, register_converter
from fxlab.passes.converters.promotion import index_input

aten = torch.ops.aten
_INT32_MAX = 2147483647


def _tensors(*shapes: tuple[int, ...], dtype: torch.dtype = torch.float32) -> list[torch.Tensor]:
    return [torch.randn(*s).to(dtype) for s in shapes]


def _cat_samples() -> list[Sample]:
    return [
        Sample((_tensors((2, 3), (2, 5)), 1)),
        Sample((_tensors((1, 3), (2, 3), (3, 3)),)),
        Sample(([torch.randn(2, 3), torch.randn(2, 3).half()], -1)),
    ]


@register_converter(aten.cat.default, samples=_cat_samples)
def convert_cat(tensors: Sequence[ge.Tensor], dim: int = 0, *, meta_outputs: Any = None) -> ge.Tensor:
    """cat(Tensor[] tensors, int dim=0) -> Tensor"""
    target = ge_dtype(meta_outputs.dtype)
    inputs = {f"x{i}": ge.cast_to(t, target) for i, t in enumerate(tensors)}
    inputs["concat_dim"] = ge.const(dim, DataType.DT_INT64)
    return ge.op1("ConcatV2", inputs, {"N": len(tensors)})


@register_converter(aten.stack.default, samples=lambda: [Sample((_tensors((2, 3), (2, 3)), 1)), Sample((_tensors((4,), (4,), (4,)),))])
def convert_stack(tensors: Sequence[ge.Tensor], dim: int = 0, *, meta_outputs: Any = None) -> ge.Tensor:
    """stack(Tensor[] tensors, int dim=0) -> Tensor"""
    return ge.op1("Pack", {f"x{i}": t for i, t in enumerate(tensors)}, {"axis": dim, "N": len(tensors)})


def _split_dim(dim: int) -> ge.Tensor:
    return ge.const(dim, DataType.DT_INT64 if dim > _INT32_MAX else DataType.DT_INT32)


def _split_v(self: ge.Tensor, sizes: ge.Tensor, dim: ge.Tensor, count: int) -> list[ge.Tensor]:
    inputs = {"x": self, "size_splits": sizes, "split_dim": dim}
    return ge.op("SplitV", inputs, {"num_split": count}, outputs=[f"y{i}" for i in range(count)])


@register_converter(aten.split.Tensor, samples=lambda: [Sample((torch.randn(5, 4), 2)), Sample((torch.randn(2, 6), 3, -1))])
def convert_split(self: ge.Tensor, split_size: Any, dim: int = 0, *, meta_outputs: Any = None) -> list[ge.Tensor]:
    """split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]"""
    count = len(meta_outputs)
    split_dim = _split_dim(dim)
    # TorchAir packs one size per output, the last -1 ("the rest"), each size a Const.
    sizes = [split_size] * (count - 1) + [-1]
    items = [s if isinstance(s, ge.Tensor) else ge.const(s, DataType.DT_INT64) for s in sizes]
    packed = ge.op1("Pack", {f"x{i}": t for i, t in enumerate(items)}, {"axis": 0, "N": count}, dtypes=DataType.DT_INT64, shapes=[(count,)])
    # TorchAir casts the Pack to int64 even though it already is: the dtype of an op made
    # inside a converter is unknown to its dtype_promote, which then always casts.
    return _split_v(self, ge.cast(packed, DataType.DT_INT64), split_dim, count)


@register_converter(
    aten.split_with_sizes.default, samples=lambda: [Sample((torch.randn(5, 4), [2, 3])), Sample((torch.randn(2, 6), [1, 2, 3], 1))]
)
def convert_split_with_sizes(self: ge.Tensor, split_sizes: Any, dim: int = 0, *, meta_outputs: Any = None) -> list[ge.Tensor]:
    """split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]"""
    sizes = index_input(split_sizes)
    return _split_v(self, sizes, _split_dim(dim), len(meta_outputs))


@register_converter(aten.unbind.int, samples=lambda: [Sample((torch.randn(3, 4),)), Sample((torch.randn(2, 3, 4), 1))])
def convert_unbind(self: ge.Tensor, dim: int = 0, *, meta_outputs: Any = None) -> list[ge.Tensor]:
    """unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]"""
    count = len(meta_outputs)
    return ge.op("Unpack", {"x": self}, {"num": count, "axis": dim}, outputs=[f"y{i}" for i in range(count)])
