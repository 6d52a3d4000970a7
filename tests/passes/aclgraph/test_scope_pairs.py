from __future__ import annotations

import pytest
import torch
import torch.fx as fx

import fxlab.scope  # noqa: F401 - the markers
from fxlab.passes.aclgraph.scope_pairs import UnpairedScopeError, check_scope_pairs


def _graph(*markers: str) -> fx.GraphModule:
    graph = fx.Graph()
    x = graph.placeholder("x")
    for marker in markers:
        if marker == "enter":
            graph.call_function(torch.ops.air.scope_enter.default, (["k"], ["v"]))
        else:
            graph.call_function(torch.ops.air.scope_exit.default, ())
    graph.output((x,))
    return fx.GraphModule(torch.nn.Module(), graph)


def test_paired_markers_pass_and_change_nothing():
    assert not check_scope_pairs(_graph("enter", "enter", "exit", "exit")).changed


@pytest.mark.parametrize(
    "markers,message",
    [(("exit",), r"scope_exit_default \(air.scope_exit\) closes no open scope_enter"), (("enter",), "scope_enter_default opened a scope that is never closed")],
)
def test_unpaired_markers_are_refused_as_torchair_refuses_them(markers, message):
    with pytest.raises(UnpairedScopeError, match=message):
        check_scope_pairs(_graph(*markers))
