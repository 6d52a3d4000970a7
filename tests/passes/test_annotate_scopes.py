"""annotate_scopes: each node's scope stack in node.meta, on Dynamo and ATen graphs."""
from __future__ import annotations

import itertools

import torch
import torch.fx as fx

from fxlab import scope
from tests.functional_graphs import functional_graph
from fxlab.passes.annotate_scopes import (
    MARKER_KEY,
    SCOPE_ATTRS_KEY,
    SCOPES_KEY,
    annotate_scopes,
    effective_scope_attrs,
)

SK = {"_super_kernel_scope": "sk", "_super_kernel_options": "stream-fusion=1"}
LIMIT = {"_op_aicore_num": "4", "_op_vectorcore_num": "8"}


def model(x, y):
    a = x + y
    with scope.super_kernel("sk", "stream-fusion=1"):
        b = a * y
        with scope.limit_core_num(4, 8):
            c = b - 1
        with scope.super_kernel(None):
            d = c.relu()
    return d + a


def dynamo_graph(fn, *inputs) -> fx.GraphModule:
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm

    torch._dynamo.reset()
    torch.compile(fn, backend=backend, fullgraph=True)(*inputs)
    return graphs[0]


def stacks(gm: fx.GraphModule) -> dict[str, list[int]]:
    return {n.name: [frame["index"] for frame in n.meta[SCOPES_KEY]] for n in gm.graph.nodes}


def test_functional_graph_nodes_carry_their_scope_stack() -> None:
    gm = functional_graph(model, torch.randn(3), torch.randn(3))
    result = annotate_scopes(gm)
    assert stacks(gm) == {
        "arg0_1": [],
        "arg1_1": [],
        "add": [],
        "scope_enter": [0],
        "mul": [0],
        "scope_enter_1": [0, 1],
        "sub": [0, 1],
        "scope_exit": [0, 1],
        "scope_enter_2": [0, 2],
        "relu": [0, 2],
        "scope_exit_1": [0, 2],
        "scope_exit_2": [0],
        "add_1": [],
        "output": [],
    }
    assert [(s.index, s.enter, s.exit, s.depth, s.nodes) for s in result.spans] == [
        (0, "scope_enter", "scope_exit_2", 0, ["mul", "sub", "relu"]),
        (1, "scope_enter_1", "scope_exit", 1, ["sub"]),
        (2, "scope_enter_2", "scope_exit_1", 1, ["relu"]),
    ]
    assert result.balanced
    node = {n.name: n for n in gm.graph.nodes}
    assert node["sub"].meta[SCOPE_ATTRS_KEY] == {**SK, **LIMIT}
    assert node["relu"].meta[SCOPE_ATTRS_KEY] == {}  # the None hole clears the SuperKernel attrs
    assert node["scope_enter"].meta[MARKER_KEY] == "enter" and node["scope_exit_2"].meta[MARKER_KEY] == "exit"
    assert MARKER_KEY not in node["mul"].meta


def test_dynamo_graph_uses_the_op_packet_and_is_annotated_the_same() -> None:
    gm = dynamo_graph(model, torch.randn(3), torch.randn(3))
    result = annotate_scopes(gm)
    assert [s.attrs for s in result.spans] == [SK, LIMIT, {"_super_kernel_scope": "", "_super_kernel_options": ""}]
    computed = {n.name: n.meta[SCOPE_ATTRS_KEY] for n in gm.graph.nodes if n.op in ("call_function", "call_method") and MARKER_KEY not in n.meta}
    assert computed == {"a": {}, "b": SK, "c": {**SK, **LIMIT}, "d": {}, "add_1": {}}


def test_unbalanced_markers_are_reported() -> None:
    graph = fx.Graph()
    x = graph.placeholder("x")
    graph.call_function(torch.ops.air.scope_exit.default, ())
    graph.call_function(torch.ops.air.scope_enter.default, (["_op_aicore_num"], ["2"]))
    y = graph.call_function(torch.ops.aten.relu.default, (x,))
    graph.output(y)
    result = annotate_scopes(graph)
    assert result.unmatched_exits == ["scope_exit_default"]
    assert [s.enter for s in result.unclosed] == ["scope_enter_default"]
    assert not result.balanced
    relu = next(n for n in graph.nodes if n.target is torch.ops.aten.relu.default)
    assert relu.meta[SCOPE_ATTRS_KEY] == {"_op_aicore_num": "2"}


def test_keyword_marker_arguments_are_read() -> None:
    graph = fx.Graph()
    x = graph.placeholder("x")
    graph.call_function(torch.ops.air.scope_enter.default, (), {"keys": ["_op_exec_never_timeout"], "values": ["True"]})
    y = graph.call_function(torch.ops.aten.relu.default, (x,))
    graph.call_function(torch.ops.air.scope_exit.default, ())
    graph.output(y)
    annotate_scopes(graph)
    assert y.meta[SCOPE_ATTRS_KEY] == {"_op_exec_never_timeout": True}


def test_effective_attrs_follow_the_builder_rule() -> None:
    stack = [SK, LIMIT, {"_super_kernel_scope": "", "_super_kernel_options": "x"}, {"_super_kernel_scope": "inner"}]
    assert effective_scope_attrs(stack) == {**LIMIT, "_super_kernel_scope": "inner"}


def test_every_node_gets_the_attrs_of_its_own_stack_in_fresh_containers() -> None:
    gm = functional_graph(model, torch.randn(3), torch.randn(3))
    exit_node = next(n for n in gm.graph.nodes if n.target is torch.ops.air.scope_exit.default)
    with gm.graph.inserting_after(exit_node):  # an exit that closes nothing, then a node after it
        gm.graph.call_function(torch.ops.air.scope_exit.default, ())
    annotate_scopes(gm)
    annotate_scopes(gm)  # running again gives the same result
    nodes = list(gm.graph.nodes)
    for node in nodes:
        assert node.meta[SCOPE_ATTRS_KEY] == effective_scope_attrs(node.meta[SCOPES_KEY])
    for a, b in itertools.pairwise(nodes):
        assert a.meta[SCOPES_KEY] is not b.meta[SCOPES_KEY] and a.meta[SCOPE_ATTRS_KEY] is not b.meta[SCOPE_ATTRS_KEY]
        assert all(fa is not fb for fa, fb in zip(a.meta[SCOPES_KEY], b.meta[SCOPES_KEY]))
    assert any(n.meta[SCOPE_ATTRS_KEY] for n in nodes) and any(not n.meta[SCOPE_ATTRS_KEY] for n in nodes)


def test_a_scope_attr_named_attrs_is_an_ordinary_attr() -> None:
    graph = fx.Graph()
    x = graph.placeholder("x")
    graph.call_function(torch.ops.air.scope_enter.default, (["attrs"], ["v"]))
    y = graph.call_function(torch.ops.aten.relu.default, (x,))
    graph.call_function(torch.ops.air.scope_exit.default, ())
    graph.output(y)
    annotate_scopes(graph)
    assert y.meta[SCOPE_ATTRS_KEY] == {"attrs": "v"}
