"""The backward of ``select`` and ``slice``: the gradient placed into zeros of the input's
size, as TorchAir converts them.

``slice_backward`` with step 1 joins zeros before and after the gradient (``ConcatV2``):
with static sizes and bounds the zeros have static sizes; with a symbolic size or bound the
bounds are clamped and the zero blocks sized in the graph (``Gather`` of the sizes,
``SelectV2``/``FloorMod``/``Minimum``, ``Pack``), as TorchAir's dynamic form does. Another
step scatters the gradient at ``Range(start, end, step)`` (``ScatterElements``).
``select_backward`` scatters the gradient at its index.
"""

from __future__ import annotations

import sys
from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import TORCHAIR_DTYPE_NUMBER, DataType, ge_dtype
from fxlab.passes.converters.promotion import cast_scalar, dtype_promote, index_input, scalar_input
from fxlab.passes.converters.registry import Sample, register_converter
from fxlab.passes.converters.shape import gather_dim, shape_of, unsqueeze

aten = torch.ops.aten


def _grad(*shape: int) -> torch.Tensor:
    return torch.randn(*shape)


def _sizes(value: Any) -> Any:
    """A ``SymInt[]`` argument as TorchAir's op builders take it: the ``Pack`` the walk made
    of a symbolic list, else the list."""
    return value if isinstance(value, ge.Tensor) else list(value)


@register_converter(
    aten.select_backward.default, samples=lambda: [Sample((_grad(3, 5), [3, 4, 5], 1, 2)), Sample((_grad(4), [2, 4], 0, 1))]
)
def convert_select_backward(grad_output: ge.Tensor, input_sizes: Any, dim: int, index: Any, meta_outputs: Any = None) -> ge.Tensor:
    """select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor"""
    sizes = cast_scalar(_sizes(input_sizes), DataType.DT_INT32)
    attrs = {"dtype": TORCHAIR_DTYPE_NUMBER[grad_output.dtype], "init": False}
    zeros = ge.op1("Empty", {"shape": sizes}, attrs, dtypes=grad_output.dtype)
    shape = index_input(_sizes(input_sizes))  # TorchAir's builder makes the index-typed Const first
    index_full = ge.op1("BroadcastTo", {"x": scalar_input(index), "shape": shape}, dtypes=DataType.DT_INT64)
    expanded = ge.op1("ExpandDims", {"x": grad_output, "axis": scalar_input(dim)})
    grad_full = ge.op1("BroadcastTo", {"x": expanded, "shape": index_input(_sizes(input_sizes))})
    inputs = {"data": zeros, "indices": index_full, "updates": grad_full}
    return ge.op1("ScatterElements", inputs, {"axis": dim, "reduction": "none"})


def _slice_backward_samples() -> list[Sample]:
    return [
        Sample((_grad(3, 2), [3, 5], 1, 1, 3, 1)),
        Sample((_grad(2, 4), [5, 4], 0, 3, sys.maxsize, 1)),
        Sample((_grad(2, 4), [5, 4], 0, 0, 4, 2)),
    ]


@register_converter(aten.slice_backward.default, samples=_slice_backward_samples)
def convert_slice_backward(
    grad_output: ge.Tensor, input_sizes: Any, dim: int, start: Any, end: Any, step: Any, meta_outputs: Any = None
) -> ge.Tensor:
    """slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, SymInt step) -> Tensor"""
    bounds_static = not any(isinstance(v, ge.Tensor) for v in (start, end, step))
    if bounds_static and start == 0 and end == sys.maxsize and step == 1:
        return grad_output
    dtype = ge_dtype(meta_outputs.dtype)
    if not isinstance(step, ge.Tensor) and step == 1:
        if bounds_static and not isinstance(input_sizes, ge.Tensor):
            return _static_concat(grad_output, list(input_sizes), dim, start, end, dtype)
        return _dynamic_concat(grad_output, input_sizes, dim, start, end, dtype)
    return _scatter(grad_output, input_sizes, dim, start, end, step, dtype)


def _static_concat(grad_output: ge.Tensor, sizes: list[int], dim: int, start: int, end: int, dtype: DataType) -> ge.Tensor:
    """Zeros before and after the slice, joined around the gradient."""
    length = sizes[dim]
    first = length if start >= length else start % length
    last = length if end >= length else end % length
    first = min(first, last)
    pieces = [_zeros_block(sizes, dim, first, dtype), grad_output, _zeros_block(sizes, dim, length - last, dtype)]
    return _concat(pieces, dim, dtype)


def _zeros_block(sizes: list[int], dim: int, length: int, dtype: DataType) -> ge.Tensor:
    value = cast_scalar(0.0, dtype)
    block = list(sizes)
    block[dim] = max(length, 0)
    return ge.op1("Fill", {"dims": index_input(block), "value": value}, dtypes=dtype)


def _concat(pieces: list[ge.Tensor], dim: int, dtype: DataType) -> ge.Tensor:
    inputs = {f"x{i}": t for i, t in enumerate(pieces)}
    inputs["concat_dim"] = scalar_input(dim)
    return ge.op1("ConcatV2", inputs, {"N": len(pieces)}, dtypes=dtype)


def _dynamic_concat(grad_output: ge.Tensor, input_sizes: Any, dim: int, start: Any, end: Any, dtype: DataType) -> ge.Tensor:
    """The same with the bounds clamped in the graph: ``min(bound, size)``, negative ones
    taken modulo the size, each zero block sized by a ``Pack`` of the sizes."""
    sizes = index_input(_sizes(input_sizes))
    length = gather_dim(sizes, dim)
    start = _clamped(start, length)
    end = _clamped(end, length)
    start = ge.op1("Minimum", {"x1": start, "x2": end})
    pieces = [
        _dynamic_zeros(grad_output, sizes, dim, 0, start, dtype),
        grad_output,
        _dynamic_zeros(grad_output, sizes, dim, end, length, dtype),
    ]
    return _concat(pieces, dim, dtype)


def _clamped(bound: Any, length: ge.Tensor) -> ge.Tensor:
    """``length if bound >= length else bound % length``, as ``SelectV2`` (a Python bound
    becomes a ``Const`` at each op that takes it, as TorchAir's op builders make one)."""
    beyond = ge.op1("GreaterEqual", {"x1": scalar_input(bound, length), "x2": length}, dtypes=DataType.DT_BOOL)
    wrapped = ge.op1("FloorMod", {"x1": scalar_input(bound, length), "x2": length})
    return ge.op1("SelectV2", {"condition": beyond, "x1": length, "x2": wrapped})


def _dynamic_zeros(grad_output: ge.Tensor, sizes: ge.Tensor, dim: int, start: Any, end: ge.Tensor, dtype: DataType) -> ge.Tensor:
    span = ge.op1("Sub", {"x1": end, "x2": scalar_input(start, end)})
    span = ge.op1("Maximum", {"x1": span, "x2": scalar_input(0, span)})
    dims = [span if i == dim else gather_dim(sizes, i) for i in range(grad_output.rank)]
    packed = ge.op1("Pack", {f"x{i}": d for i, d in enumerate(dims)}, {"N": len(dims), "axis": 0})
    return ge.op1("Fill", {"dims": packed, "value": cast_scalar(0.0, dtype)}, dtypes=dtype)


def _scatter(grad_output: ge.Tensor, input_sizes: Any, dim: int, start: Any, end: Any, step: Any, dtype: DataType) -> ge.Tensor:
    """Another step: the gradient scattered into zeros at ``Range(start, end, step)``."""
    symbolic = isinstance(input_sizes, ge.Tensor) or isinstance(end, ge.Tensor)
    if not isinstance(input_sizes, ge.Tensor) and not isinstance(end, ge.Tensor):
        length = input_sizes[dim]
        end = length if end == sys.maxsize or length < end else end
        end = length + end if end < 0 else end
    sizes, start, limit, delta = dtype_promote(DataType.DT_INT32, _sizes(input_sizes), start, end, step)
    zeros = ge.op1("Fill", {"dims": sizes, "value": ge.const(0.0, grad_output.dtype)}, dtypes=dtype)
    if symbolic:
        limit = ge.op1("Minimum", {"x1": gather_dim(sizes, dim), "x2": limit})
    index = ge.op1("Range", {"start": start, "limit": limit, "delta": delta})
    others = [d for d in range(grad_output.rank) if d != dim]
    if others:
        index = ge.op1("Expand", {"x": unsqueeze(index, others), "shape": shape_of(grad_output)})
    return ge.op1("ScatterElements", {"data": zeros, "indices": index, "updates": grad_output}, {"axis": dim, "reduction": "none"})
