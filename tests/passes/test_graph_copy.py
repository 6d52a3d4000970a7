"""fxlab.passes.graph_copy: graph copies equal FX's own ``graph_copy``."""
from __future__ import annotations

import pytest
import torch
import torch.fx as fx

from fxlab.passes.graph_copy import copy_graph, copy_graph_module


def _graph_copy(source: fx.Graph) -> fx.Graph:
    graph = fx.Graph()
    graph.output(graph.graph_copy(source, {}))
    return graph


def _facts(graph: fx.Graph) -> list[tuple]:
    """Everything a copy must keep, per node, with arguments by node name."""
    rows = []
    for node in graph.nodes:
        args = fx.node.map_arg((node.args, node.kwargs), lambda n: ("node", n.name))
        rows.append((node.op, node.name, node.target, node.type, repr(args), [u.name for u in node.users], sorted(node.meta)))
    return rows


@pytest.mark.parametrize("example", ["inplace_ops", "my_inplace", "graph_break", "llama_decoder", "my_op"])
def test_copy_equals_fx_graph_copy_on_every_stage(example_capture, example):
    for graph in example_capture(example).graphs:
        for gm in graph.modules.values():
            copy = copy_graph(gm.graph)
            assert _facts(copy) == _facts(_graph_copy(gm.graph))
            assert copy.python_code("self").src == _graph_copy(gm.graph).python_code("self").src
            for old, new in zip(gm.graph.nodes, copy.nodes):
                if new.op != "output":  # graph_copy leaves the output node's meta out
                    assert new.meta == old.meta and new.meta is not old.meta


def test_copy_keeps_kwargs_types_and_leaves_the_source_alone():
    graph = fx.Graph()
    x = graph.placeholder("x", type_expr=torch.Tensor)
    add = graph.call_function(torch.ops.aten.add.Tensor, (x, x), {"alpha": 2})
    cat = graph.call_function(torch.ops.aten.cat.default, ([x, add],), {"dim": 0})
    graph.output((cat, [add]))
    before = _facts(graph)
    copy = copy_graph(graph)
    assert _facts(copy) == _facts(_graph_copy(graph)) == before
    assert list(x.users) == [add, cat]  # the source's users are untouched
    copy.lint()


def test_a_graph_without_output_gets_a_none_output_as_graph_copy_gives():
    graph = fx.Graph()
    graph.placeholder("x")
    assert _facts(copy_graph(graph)) == _facts(_graph_copy(graph))


def test_copy_graph_module_runs_like_the_original():
    gm = fx.symbolic_trace(lambda x: torch.relu(x) * 2)
    copy = copy_graph_module(gm)
    x = torch.randn(4)
    assert torch.equal(copy(x), gm(x))
    assert copy.graph is not gm.graph
