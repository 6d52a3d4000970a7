"""Converters of torch_npu's dtype casts and its prefetch, making the GE ops TorchAir makes.

From TorchAir's converters (``ge_converter/custom/`` of torch_npu 2.13.0):
``_npu_dtype_cast`` / ``_npu_dtype_cast_backward`` → ``Cast``; ``npu_dtype_cast`` /
``npu_dtype_cast_backward`` → ``Cast`` to a torch_npu dtype code, a uint8-packed float4
input unpacked first and a float4 (or int4) result packed two to a byte;
``npu_prefetch`` → ``Cmo`` after its dependency (a control edge). Kernels: ``Cast`` is
the common one; ``Cmo`` prefetches into the cache and computes nothing
(:mod:`fxlab.ir.kernels.npu_cast`).
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.builder import current_builder
from fxlab.ir.model import DataType, ge_dtype
from fxlab.ir.npu_dtypes import FLOAT4_X2, INT4
from fxlab.passes.converters.npu import npu_converter
from fxlab.passes.converters.npu_builders import npu_dtype, packed, refuse, widened
from fxlab.passes.converters.registry import Sample


@npu_converter(
    "_npu_dtype_cast.default", lambda: [Sample((torch.randn(3, 4), torch.float16)), Sample((torch.randn(3, 4).half(), torch.bfloat16))]
)
def convert_npu_dtype_cast_old(self: ge.Tensor, dtype: torch.dtype, *, meta_outputs: Any = None) -> ge.Tensor:
    """_npu_dtype_cast(Tensor self, ScalarType dtype) -> Tensor"""
    return ge.cast(self, ge_dtype(dtype))


@npu_converter("_npu_dtype_cast_backward.default", lambda: [Sample((torch.randn(3, 4).half(), torch.float32))])
def convert_npu_dtype_cast_backward_old(self: ge.Tensor, dtype: torch.dtype, *, meta_outputs: Any = None) -> ge.Tensor:
    """_npu_dtype_cast_backward(Tensor grad, ScalarType dtype) -> Tensor"""
    return ge.cast(self, ge_dtype(dtype))


def _typed_input(x: ge.Tensor, code: int) -> ge.Tensor:
    """An input stored as another dtype: uint8-packed float4 unpacked (two values a byte),
    any other type only relabelled."""
    if code in FLOAT4_X2:
        return widened(x, 2, npu_dtype(code), cast_consts=True)
    return ge.set_dtype(x, npu_dtype(code))


def _cast_to_code(x: ge.Tensor, code: int, rank: int) -> ge.Tensor:
    out = ge.set_dtype(ge.cast(x, npu_dtype(code)), npu_dtype(code))
    if code in (INT4, *FLOAT4_X2):
        out = packed(out, rank, 2, DataType.DT_UINT8, cast_consts=True)
    return out


@npu_converter(
    "npu_dtype_cast.default",
    lambda: [Sample((torch.randn(3, 4), 5)), Sample((torch.randn(3, 4).half(), 24)), Sample((torch.randn(2, 8).bfloat16(), 296))],
)
def convert_npu_dtype_cast(self: ge.Tensor, dtype: int, input_dtype: int | None = None, *, meta_outputs: Any = None) -> ge.Tensor:
    """npu_dtype_cast(Tensor self, int dtype, int? input_dtype=None) -> Tensor"""
    if input_dtype is not None:
        self = _typed_input(self, input_dtype)
    return _cast_to_code(self, int(dtype), self.rank)


@npu_converter(
    "npu_dtype_cast_backward.default",
    lambda: [Sample((torch.randn(3, 4).half(), torch.float32)), Sample((torch.randn(3, 4), torch.float32, None, 5))],
)
def convert_npu_dtype_cast_backward(
    self: ge.Tensor, dtype: torch.dtype, grad_dtype: int | None = None, input_dtype: int | None = None, *, meta_outputs: Any = None
) -> ge.Tensor:
    """npu_dtype_cast_backward(Tensor grad, ScalarType dtype, int? grad_dtype=None, int? input_dtype=None) -> Tensor"""
    if grad_dtype is not None:
        self = _typed_input(self, grad_dtype)
    if input_dtype is not None:
        return _cast_to_code(self, int(input_dtype), self.rank)
    return ge.cast(self, ge_dtype(dtype))


@npu_converter(
    "npu_prefetch.default",
    lambda: [
        Sample((torch.randn(8, 8), torch.randn(2), 256)),
        Sample((torch.randn(8, 8), torch.randn(2), 128, 64)),
        Sample((torch.randn(8, 8), None, 64)),
    ],
)
def convert_prefetch(self: ge.Tensor, dependency: ge.Tensor | None, max_size: int, offset: int = 0, *, meta_outputs: Any = None) -> None:
    """npu_prefetch(Tensor self, Tensor? dependency, int max_size, int offset=0) -> ()"""
    where = "custom/npu_prefetch.py"
    if max_size <= 0:
        refuse(f"ValueError: max_size should be greater than zero, but got {max_size}", where)
    if offset < 0:
        refuse(f"ValueError: offset should be nonnegative, but got {max_size}", where)
    if dependency is None:
        refuse("NotImplementedError: ge converter is not implement when dependency is None.", f"{where}:25")
    # With an offset TorchAir's Cmo builder leaves the type at its default out; without one
    # it writes the type and no offset (an older Cmo has no offset attr).
    attrs = {"max_size": int(max_size), "offset": int(offset)} if offset else {"max_size": int(max_size), "type": 6}
    # An op without outputs is kept by a control edge into NetOutput, as TorchAir keeps it.
    ge.op("Cmo", {"src": self}, attrs, outputs=(), dependencies=[dependency])
    ge.keep_to_the_end(ge.Tensor(current_builder().graph.ops[-1], 0))
    return None
