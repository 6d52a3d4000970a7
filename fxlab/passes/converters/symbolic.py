"""Converters of Python's ``+ - * //`` on SymInts (dynamic shapes), as TorchAir's
builtin converters: on two plain numbers the result is computed here and no op is made;
when either side is a graph value (a symbolic size, from ``aten.sym_size.int``'s
``Gather(Shape(x))`` or a SymInt graph input), both become the result's dtype (int64 for
a SymInt) and the op is ``Add``/``Sub``/``Mul``/``FloorDiv``. ``torch.sym_sum`` of a list
of sizes (packed before the converter, as TorchAir's walk packs a list naming symbolic
sizes) is a ``ReduceSum`` of the ``Pack`` over axis 0.
"""

from __future__ import annotations

import operator
from typing import Any
from collections.abc import Callable

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType, ge_dtype
from fxlab.passes.converters.promotion import dtype_promote
from fxlab.passes.converters.registry import Sample, register_converter
from fxlab.passes.symbolic_lists import pack_sizes


def _result_dtype(meta: Any) -> DataType:
    if isinstance(meta, torch.Tensor):
        return ge_dtype(meta.dtype)
    return DataType.DT_FLOAT if isinstance(meta, (float, torch.SymFloat)) else DataType.DT_INT64


def _binary(python_op: Callable[[Any, Any], Any], ge_type: str) -> Callable[..., Any]:
    def convert(self: Any, other: Any, *, meta_outputs: Any = None) -> Any:
        if not isinstance(self, ge.Tensor) and not isinstance(other, ge.Tensor):
            return python_op(self, other)
        x1, x2 = dtype_promote(_result_dtype(meta_outputs), self, other)
        return ge.op1(ge_type, {"x1": x1, "x2": x2})

    return convert


def _int_samples() -> list[Sample]:
    return [Sample((torch.tensor(7), torch.tensor(3))), Sample((torch.tensor(9), 2))]


for _op, _type, _doc in (
    (operator.add, "Add", "add(SymInt a, SymInt b) -> SymInt"),
    (operator.sub, "Sub", "sub(SymInt a, SymInt b) -> SymInt"),
    (operator.mul, "Mul", "mul(SymInt a, SymInt b) -> SymInt"),
    (operator.floordiv, "FloorDiv", "floordiv(SymInt a, SymInt b) -> SymInt"),
):
    _fn = _binary(_op, _type)
    _fn.__doc__ = _doc
    _fn.__name__ = _fn.__qualname__ = f"convert_operator_{_op.__name__}"
    register_converter(_op, samples=_int_samples)(_fn)


@register_converter(torch.sym_sum, samples=lambda: [Sample(([torch.tensor(3), torch.tensor(4), torch.tensor(5)],))])
def convert_sym_sum(args: Any, *, meta_outputs: Any = None) -> Any:
    """sym_sum(SymInt[] args) -> SymInt"""
    if not isinstance(args, ge.Tensor) and not any(isinstance(a, ge.Tensor) for a in args):
        return sum(args)
    # A list of graph values the walk did not pack (sizes given as tensors) is packed here.
    packed = args if isinstance(args, ge.Tensor) else pack_sizes(list(args))
    return ge.op1("ReduceSum", {"x": packed, "axes": ge.const(0, DataType.DT_INT64)}, {"keep_dims": False})
