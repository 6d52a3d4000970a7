from __future__ import annotations

import operator

import torch

from fxlab.passes.aclgraph.sym_shapes import SymShapeBuilder, has_symbolic_size, symbol_inputs
from tests.sessions import capture_of


def _dynamic_graph():
    def f(x):
        return (torch.cat([x, x]) * 2,)

    x = torch.randn(4, 3)
    torch._dynamo.mark_dynamic(x, 0)
    return capture_of(f, (x,), stages=("functional",), verify=False).graphs[0].modules["functional"]


def test_symbols_become_their_inputs_and_expressions_nodes_made_once():
    gm = _dynamic_graph()
    symbols = symbol_inputs(gm)
    (symbol, node), = symbols.items()
    cat = next(n for n in gm.graph.nodes if n.target is torch.ops.aten.cat.default)
    assert has_symbolic_size(cat.meta["val"]) and not has_symbolic_size(torch.empty(2))
    builder = SymShapeBuilder(gm, symbols)
    with gm.graph.inserting_before(cat):
        shape = builder.shape(cat.meta["val"].shape)
        again = builder.shape(cat.meta["val"].shape)
    assert shape[1] == 3 and shape[0] is again[0]  # 2*s0, computed once
    assert shape[0].target is operator.mul and node in shape[0].args
    assert builder.size(node.meta["val"]) is node
