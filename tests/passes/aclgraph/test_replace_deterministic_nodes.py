from __future__ import annotations

import torch

import fxlab.scope as scope
from fxlab import npu_streams
from tests.functional_graphs import functional_graph
from fxlab.passes.aclgraph.replace_deterministic_nodes import SCOPE_LEVEL, replace_deterministic_nodes


def test_a_deterministic_scope_sets_the_level_and_restores_it():
    def f(x):
        with scope.NpugraphExScope([("_op_deterministic_level", "2")]):
            y = x.sum()
        return (y * 2,)

    gm = functional_graph(f, torch.randn(3))
    result = replace_deterministic_nodes(gm)
    calls = [(n.name, getattr(n.target, "__name__", str(n.target)), n.args) for n in gm.graph.nodes if n.op == "call_function"]
    assert [c[1] for c in calls] == ["_get_deterministic_level", "set_deterministic_level", "sum.default", "set_deterministic_level", "mul.Tensor"]
    assert calls[1][2] == (2,) and calls[3][2][0].name == "_get_deterministic_level"
    assert result.notes == ["scope_enter: deterministic level 2"]
    assert next(n for n in gm.graph.nodes if n.name == "sum_1").meta[SCOPE_LEVEL] == 2
    before = npu_streams.get_deterministic_level()
    gm(torch.ones(3))
    assert npu_streams.get_deterministic_level() == before
