from __future__ import annotations

import torch
import torch.fx as fx

from fxlab.passes.aclgraph.eliminate_dead_code import eliminate_dead_code
from fxlab.passes.aclgraph.eliminate_self_copy import eliminate_self_copy


def _graph() -> fx.GraphModule:
    graph = fx.Graph()
    x = graph.placeholder("x")
    graph.call_function(torch.ops.aten.copy_.default, (x, x))
    y = graph.call_function(torch.ops.aten.mul.Tensor, (x, 2))
    graph.call_function(torch.ops.aten.neg.default, (x,))  # nothing reads it
    graph.output((y,))
    return fx.GraphModule(torch.nn.Module(), graph)


def test_a_copy_of_a_tensor_into_itself_goes():
    gm = _graph()
    assert eliminate_self_copy(gm).changed
    assert [str(n.target) for n in gm.graph.nodes if n.op == "call_function"] == ["aten.mul.Tensor", "aten.neg.default"]
    assert not eliminate_self_copy(gm).changed


def test_dead_code_goes_but_a_copy_stays():
    gm = _graph()
    assert eliminate_dead_code(gm).changed
    assert [str(n.target) for n in gm.graph.nodes if n.op == "call_function"] == ["aten.copy_.default", "aten.mul.Tensor"]
