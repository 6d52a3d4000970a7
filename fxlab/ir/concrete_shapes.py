"""The output sizes a run of a graph with symbolic sizes has: ``-1`` dims of an op's output
descs made concrete for one run, from the sizes of the graph inputs it got.

A desc of a graph with dynamic shapes keeps its symbolic sizes beside the ``-1`` dims
(``_fxlab_symbolic_shape``: ``[4*s0, 16]``). A ``Data`` op whose desc names a size by a
bare symbol (``[s0, 16]``) binds that symbol to the size of the tensor the run feeds it; an
op whose output sizes the reference kernel reads from its descs (a buffer sized by attrs,
as GE sizes it from its shape inference) then gets the sizes the expressions have at those
values. Dims whose expression names an unbound symbol stay ``-1``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import sympy
import torch

from fxlab.ir.builder import SYMBOLIC_SHAPE_ATTR
from fxlab.ir.model import IrGraph, IrOp, TensorDesc


def _symbolic_sizes(desc: TensorDesc) -> list[sympy.Expr] | None:
    attr = desc.attrs.get(SYMBOLIC_SHAPE_ATTR)
    if attr is None:
        return None
    try:
        sizes = sympy.sympify(str(attr.value))
    except (sympy.SympifyError, TypeError, SyntaxError):
        return None
    return list(sizes) if isinstance(sizes, (list, tuple)) else None


def size_bindings(graph: IrGraph, values: Mapping[str, Any]) -> dict[sympy.Symbol, int]:
    """Each size symbol a ``Data`` op's desc names by itself, with this run's size."""
    bindings: dict[sympy.Symbol, int] = {}
    for op in graph.ops:
        value = values.get(f"{op.name}:0")
        sizes = _symbolic_sizes(op.output_desc[0]) if op.type == "Data" and op.output_desc else None
        if sizes is None or not isinstance(value, torch.Tensor) or len(sizes) != value.dim():
            continue
        for size, actual in zip(sizes, value.shape):
            if isinstance(size, sympy.Symbol):
                bindings.setdefault(size, int(actual))
    return bindings


def with_concrete_descs(op: IrOp, bindings: Mapping[sympy.Symbol, int]) -> IrOp:
    """``op`` itself when its output descs have no ``-1`` dim to resolve, else a copy
    whose output descs have this run's sizes."""
    if not bindings or not any(d < 0 for desc in op.output_desc for d in desc.shape):
        return op
    descs = []
    for desc in op.output_desc:
        sizes = _symbolic_sizes(desc) if any(d < 0 for d in desc.shape) else None
        if sizes is None or len(sizes) != len(desc.shape):
            descs.append(desc)
            continue
        dims = [_evaluated(size, bindings) if d < 0 else d for d, size in zip(desc.shape, sizes)]
        descs.append(TensorDesc(desc.name, desc.dtype, tuple(dims), desc.layout, dict(desc.attrs)))
    resolved = copy.copy(op)
    resolved.output_desc = tuple(descs)
    return resolved


def _evaluated(size: sympy.Expr, bindings: Mapping[sympy.Symbol, int]) -> int:
    value = size.subs(bindings)
    return int(value) if value.is_Integer else -1
