"""Shapes with symbolic sizes as graph values, the way TorchAir's aclgraph passes build them.

When a pass creates a tensor whose size is symbolic (``torch.empty`` for an ``out=``
argument), each size becomes a value of the graph: an integer stays one, a bare symbol
is the graph input that carries it (``arg0_1: Sym(s0)``), and an expression over
symbols (``32*(s0//32)``) is computed in the graph from those inputs, once per graph and
expression (later shapes reuse the node).
"""

from __future__ import annotations

from typing import Any

import sympy
import torch
import torch.fx as fx
from torch.fx import Proxy


def is_sym(value: Any) -> bool:
    return isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool))


def has_symbolic_size(meta: Any) -> bool:
    """A tensor (or a list of sizes) with at least one symbolic size, or a symbol."""
    if isinstance(meta, torch.Tensor):
        return any(is_sym(d) for d in meta.size())
    if isinstance(meta, (list, tuple)):
        return any(is_sym(d) for d in meta)
    return is_sym(meta)


def symbol_inputs(gm: fx.GraphModule) -> dict[Any, fx.Node]:
    """The graph inputs that are symbols, by their sympy symbol."""
    return {n.meta["val"].node.expr: n for n in gm.graph.nodes if n.op == "placeholder" and is_sym(n.meta.get("val"))}


class SymShapeBuilder:
    """Builds graph values for sizes; expressions are computed once per graph."""

    def __init__(self, gm: fx.GraphModule, symbols: dict[Any, fx.Node]) -> None:
        self.gm, self.symbols = gm, symbols
        self.expressions: dict[str, fx.Node] = {}

    def shape(self, sizes: Any) -> list[Any]:
        return [self.size(d) for d in sizes]

    def size(self, dim: Any) -> Any:
        if isinstance(dim, (int, float, bool)):
            return dim
        expr = dim.node.expr
        if str(expr).isdigit():
            return int(expr)
        if isinstance(expr, sympy.Symbol):
            if expr not in self.symbols:
                raise RuntimeError(f"symbolic size {dim} is no graph input ({', '.join(map(str, self.symbols))}) of this graph")
            return self.symbols[expr]
        text = str(dim)
        if text not in self.expressions:
            scope = {str(symbol): Proxy(self.symbols[symbol]) for symbol in expr.free_symbols}
            self.expressions[text] = eval(text, {"__builtins__": {}}, scope).node  # noqa: S307 - a sympy expression over graph inputs
        return self.expressions[text]
