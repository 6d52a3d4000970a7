from __future__ import annotations

import torch

import fxlab.scope as scope
from tests.functional_graphs import functional_graph
from fxlab.passes.stream_labels import SCOPE_METADATA_KEY, STREAM_KEY, annotate_stream_scopes, on_one_stream


def test_each_node_knows_its_stream_and_execution_scope():
    def f(x):
        a = x * 2
        with scope.npu_stream_switch("side", 0):
            b = a + 1
        with scope.NpugraphExScope([("_op_aicore_num", "4"), ("_op_vectorcore_num", "8"), ("_op_deterministic_level", "1")]):
            c = b.relu()
        return (c,)

    gm = functional_graph(f, torch.randn(3))
    annotate_stream_scopes(gm)
    streams = {n.name: n.meta[STREAM_KEY] for n in gm.graph.nodes if n.op == "call_function" and "scope" not in n.name}
    assert streams == {"mul": None, "add": "side", "relu": None}
    annotate_stream_scopes(gm, "npugraph_ex")
    relu = next(n for n in gm.graph.nodes if n.name == "relu")
    assert relu.meta[SCOPE_METADATA_KEY] == (1, ("4", "8"))
    nodes = {n.name: n for n in gm.graph.nodes}
    annotate_stream_scopes(gm)
    assert on_one_stream([nodes["mul"], nodes["relu"]]) and not on_one_stream([nodes["mul"], nodes["add"]])
