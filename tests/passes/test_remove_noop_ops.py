from __future__ import annotations

import torch
import torch.nn.functional as F

from fxlab.capture.stages import functional_graph
from fxlab.passes.remove_noop_ops import remove_noop_ops


def _targets(gm):
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def _noops(x):
    y = x.repeat(1, 1) + 1  # repeat by ones
    y = y.expand(4, 3) * 2  # expand to the same shape: not in Inductor's list, so kept
    y = torch.cat([y]) - 3  # cat of one tensor
    y = y.pow(1).to(torch.float32)  # pow by 1, cast to the same dtype
    return (F.pad(y, (0, 0)).relu(),)  # zero padding


def test_no_op_calls_go_and_the_graph_computes_the_same():
    x = torch.randn(4, 3)
    gm = functional_graph(_noops, x)
    assert "aten.repeat.default" in _targets(gm) and "aten.constant_pad_nd.default" in _targets(gm)
    assert remove_noop_ops(gm) is True
    assert _targets(gm) == ["aten.add.Tensor", "aten.expand.default", "aten.mul.Tensor", "aten.sub.Tensor", "aten.relu.default"]
    torch.testing.assert_close(gm(x)[0], _noops(x)[0])


def test_a_graph_without_no_ops_is_left_alone():
    gm = functional_graph(lambda x: (x.repeat(2, 1) + 1,), torch.randn(4, 3))
    before = _targets(gm)
    assert remove_noop_ops(gm) is False and _targets(gm) == before


def test_an_input_returned_through_a_no_op_keeps_its_clone():
    # Removing it would make the output alias the input (Inductor's rule, kept by TorchAir).
    gm = functional_graph(lambda x: (x.clone(),), torch.randn(3))
    assert remove_noop_ops(gm) is False and _targets(gm) == ["aten.clone.default"]
