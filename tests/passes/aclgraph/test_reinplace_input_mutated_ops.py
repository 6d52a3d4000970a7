from __future__ import annotations

import torch

from tests.functional_graphs import functional_graph
from fxlab.passes.aclgraph.reinplace_input_mutated_ops import reinplace_input_mutated_ops


def _targets(gm):
    return [(n.name, str(n.target)) for n in gm.graph.nodes if n.op == "call_function"]


def test_what_a_copy_back_writes_into_an_input_is_computed_in_its_memory():
    def f(x, y):
        x.mul_(y)
        return (y + 1,)

    gm = functional_graph(f, torch.randn(4), torch.randn(4))
    assert _targets(gm)[-1] == ("copy_", "aten.copy_.default")
    result = reinplace_input_mutated_ops(gm)
    assert _targets(gm) == [("mul", "aten.mul_.Tensor"), ("add", "aten.add.Tensor")]
    assert result.changed and result.notes == ["mul: aten.mul.Tensor -> aten.mul_.Tensor"]
    x, y = torch.ones(4), torch.full((4,), 3.0)
    gm(x, y)
    torch.testing.assert_close(x, torch.full((4,), 3.0))


def test_an_input_read_before_its_copy_back_keeps_the_op_functional():
    def f(x):
        x.add_(1)
        return (x * 2,)  # reads the written x, through the new value

    def g(x):
        y = x + 1
        z = x * 3  # reads the old x after the add
        x.copy_(y)
        return (z,)

    gm = functional_graph(g, torch.randn(4))
    reinplace_input_mutated_ops(gm)
    assert _targets(gm) == [("add", "aten.add.Tensor"), ("mul", "aten.mul.Tensor"), ("copy", "aten.copy_.default")]
    ok = functional_graph(f, torch.randn(4))
    reinplace_input_mutated_ops(ok)
    assert ("add", "aten.add_.Tensor") in _targets(ok)


def test_a_custom_ops_bases_are_marked_for_no_clone():
    import fxlab.ops  # noqa: F401 - npu::my_inplace

    def f(x, y):
        torch.ops.npu.my_inplace(x, y)
        return (x + y,)

    gm = functional_graph(f, torch.randn(2, 8), torch.randn(2, 8))
    reinplace_input_mutated_ops(gm)
    (wrapper,) = [n for n in gm.graph.nodes if "auto_functionalized" in str(n.target)]
    assert wrapper.meta["only_clone_these_tensors"] == []
