"""``view_as_real`` → ``Real`` + ``Imag`` + ``Pack`` on a new last axis;
``view_as_complex`` → two ``GatherV2`` along the last axis + ``Complex`` (complex RoPE)."""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType
from fxlab.passes.converters.index import gather_v2
from fxlab.passes.converters.promotion import dtype_promote, index_input
from fxlab.passes.converters.registry import Sample, register_converter

aten = torch.ops.aten


@register_converter(aten.view_as_real.default, samples=lambda: [Sample((torch.randn(2, 3, dtype=torch.complex64),))])
def convert_view_as_real(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """view_as_real(Tensor(a) self) -> Tensor(a)"""
    # Tout keeps its default (float32) as TorchAir leaves it.
    real = ge.op("Real", {"input": self}, {"Tout": DataType.DT_FLOAT}, outputs=("output",), dtypes=DataType.DT_FLOAT)[0]
    imag = ge.op("Imag", {"input": self}, {"Tout": DataType.DT_FLOAT}, outputs=("output",), dtypes=DataType.DT_FLOAT)[0]
    return ge.op1("Pack", {"x0": real, "x1": imag}, {"axis": -1, "N": 2})


@register_converter(aten.view_as_complex.default, samples=lambda: [Sample((torch.randn(2, 3, 2),)), Sample((torch.randn(4, 2),))])
def convert_view_as_complex(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """view_as_complex(Tensor(a) self) -> Tensor(a)"""
    x = dtype_promote(DataType.DT_FLOAT, self)
    real = gather_v2(x, index_input(0), index_input([-1]), negative_index_support=True)
    imag = gather_v2(x, index_input(1), index_input([-1]), negative_index_support=True)
    return ge.op("Complex", {"real": real, "imag": imag}, {"Tout": DataType.DT_COMPLEX64}, outputs=("out",), dtypes=DataType.DT_COMPLEX64)[
        0
    ]
