from __future__ import annotations

import operator

import torch

import fxlab.scope as scope
from fxlab import npu_streams
from tests.functional_graphs import functional_graph
from fxlab.passes.aclgraph.replace_core_limit_nodes import replace_core_limit_nodes


def _calls(gm):
    out = []
    for n in gm.graph.nodes:
        if n.op != "call_function":
            continue
        name = n.target.__name__ if callable(n.target) and not isinstance(n.target, torch._ops.OpOverload) else str(n.target)
        out.append((n.name, name, tuple(a.name if hasattr(a, "name") else a for a in n.args)))
    return out


def test_a_core_limit_scope_is_a_stream_limit_set_and_restored():
    def f(x):
        with scope.limit_core_num(8, 16):
            y = x * 2
        return (y + 1,)

    gm = functional_graph(f, torch.randn(3))
    result = replace_core_limit_nodes(gm)
    assert result.notes == ["scope_enter: stream core limit 8|16"]
    assert _calls(gm) == [
        ("current_stream", "current_stream", ()),
        ("get_stream_limit", "get_stream_limit", ("current_stream",)),
        ("getitem", "getitem", ("get_stream_limit", "cube_core_num")),
        ("getitem_1", "getitem", ("get_stream_limit", "vector_core_num")),
        ("set_stream_limit", "set_stream_limit", ("current_stream", 8, 16)),
        ("mul", "aten.mul.Tensor", ("arg0_1", 2)),
        ("set_stream_limit_1", "set_stream_limit", ("current_stream", "getitem", "getitem_1")),
        ("add", "aten.add.Tensor", ("mul", 1)),
    ]
    stream = npu_streams.current_stream()
    before = npu_streams.get_stream_limit(stream)
    torch.testing.assert_close(gm(torch.ones(3))[0], torch.full((3,), 3.0))
    assert npu_streams.get_stream_limit(stream) == before  # restored
    assert operator.getitem in {n.target for n in gm.graph.nodes}


def test_a_stream_switched_to_inside_carries_the_limit_and_keeps_its_markers():
    def f(x):
        with scope.limit_core_num(8, 16):
            with scope.npu_stream_switch("side", 0):
                y = x * 2
        return (y,)

    gm = functional_graph(f, torch.randn(3))
    replace_core_limit_nodes(gm)
    names = [name for _, name, _ in _calls(gm)]
    assert names == [
        "current_stream", "get_stream_limit", "getitem", "getitem", "set_stream_limit",
        "air.scope_enter.default", "current_stream", "get_stream_limit", "getitem", "getitem", "set_stream_limit",
        "aten.mul.Tensor", "air.scope_exit.default", "set_stream_limit", "set_stream_limit",
    ]
    switched = [c for c in _calls(gm) if c[1] == "set_stream_limit"][1]
    assert switched[2] == ("current_stream_1", 8, 16)


def test_npugraph_ex_replaces_only_its_own_core_limit_scopes():
    def f(x):
        with scope.NpugraphExScope([("_op_aicore_num", "4"), ("_op_vectorcore_num", "8")]):
            y = x * 2
        with scope.limit_core_num(8, 16):  # TorchAir's markers: not npugraph_ex's
            z = y + 1
        return (z,)

    gm = functional_graph(f, torch.randn(3))
    replace_core_limit_nodes(gm, namespace="npugraph_ex")
    names = [name for _, name, _ in _calls(gm)]
    assert names.count("set_stream_limit") == 2 and names.count("air.scope_enter.default") == 1
    assert "npugraph_ex.scope_enter.default" not in names
