from __future__ import annotations

import torch

import fxlab.ops  # noqa: F401 - npu::my_inplace
from tests.functional_graphs import functional_graph
from fxlab.passes.aclgraph.decompose_auto_functionalized import decompose_auto_functionalized
from fxlab.passes.aclgraph.reinplace_input_mutated_ops import reinplace_input_mutated_ops


def test_the_custom_op_runs_in_place_on_its_input():
    def f(x, y):
        torch.ops.npu.my_inplace(x, y)
        return (x + y,)

    gm = functional_graph(f, torch.randn(2, 8), torch.randn(2, 8))
    reinplace_input_mutated_ops(gm)  # no base needs a clone
    result = decompose_auto_functionalized(gm)
    targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    assert targets == ["npu.my_inplace.default", "aten.add.Tensor", "aten.copy_.default"]
    assert result.notes == ["auto_functionalized_v2: the custom op runs in place"]
    x, y = torch.randn(2, 8), torch.randn(2, 8)
    want_x = x.clone()
    torch.ops.npu.my_inplace(want_x, y)
    gm(x, y)
    torch.testing.assert_close(x, want_x)


def test_a_graph_without_wrappers_loses_only_unread_get_attrs():
    gm = functional_graph(lambda x: (x * 2,), torch.randn(3))
    with gm.graph.inserting_before(next(iter(gm.graph.nodes))):
        gm.graph.get_attr("unused_constant")
    gm.register_buffer("unused_constant", torch.zeros(1))
    decompose_auto_functionalized(gm)
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "call_function", "output"]
