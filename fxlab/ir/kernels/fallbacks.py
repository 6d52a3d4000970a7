"""Kernels of GE types that converters of several families emit (Shape, Reshape,
Expand, Unsqueeze as helpers of reductions and creation ops; AxpyV2 for add and addmm).

A family module that registers one of these types takes precedence: this module
registers only the types still missing, so it must be imported after every other
kernel module.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.registry import KERNELS, Kernel, register_kernel
from fxlab.ir.kernels.elementwise import require, same_type
from fxlab.ir.model import DTYPE_FROM_TORCHAIR_NUMBER, IrOp, torch_dtype

_INDEX_TYPES = frozenset({torch.int32, torch.int64})


def _register_missing(op_type: str, kernel: Kernel) -> None:
    if op_type not in KERNELS:
        register_kernel(op_type)(kernel)


def shape(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """The dims of ``x`` as a 1-D tensor; ``dtype`` attr in TorchAir's numbering (3: int32)."""
    dtype = torch_dtype(DTYPE_FROM_TORCHAIR_NUMBER[attrs.get("dtype", 3)])
    return [torch.tensor(list(inputs[0].shape), dtype=dtype)]


def reshape(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, target = inputs
    require(op, target, _INDEX_TYPES, "shape")
    return [x.reshape([int(d) for d in target.tolist()])]


def expand(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, target = inputs
    require(op, target, _INDEX_TYPES | {torch.int16}, "shape")
    return [x.expand([int(d) for d in target.tolist()])]


def unsqueeze(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x = inputs[0]
    for axis in attrs.get("axes", ()):
        x = x.unsqueeze(axis)
    return [x]


def axpy_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """y = x1 + alpha * x2, all three of one type."""
    x1, x2, alpha = inputs
    same_type(op, x1, x2, alpha)
    return [x1 + alpha * x2]


_register_missing("Shape", shape)
_register_missing("Reshape", reshape)
_register_missing("Expand", expand)
_register_missing("Unsqueeze", unsqueeze)
_register_missing("AxpyV2", axpy_v2)
