from __future__ import annotations

import torch

import fxlab.npu_streams  # noqa: F401 - air::record / air::wait
from tests.functional_graphs import functional_graph
from fxlab.passes.aclgraph.event_record import apply_event_record


def test_each_waited_tensor_gets_one_record_after_its_producer():
    def f(x):
        a = x * 2
        torch.ops.air.wait([a])
        b = x + 1
        torch.ops.air.wait([a, b])
        return (a + b,)

    gm = functional_graph(f, torch.randn(3))
    result = apply_event_record(gm)
    order = [n.name for n in gm.graph.nodes]
    assert order == ["arg0_1", "mul", "record_default", "wait", "add", "record_default_1", "wait_1", "add_1", "output"]
    waits = [[a.name for a in n.args[0]] for n in gm.graph.nodes if str(n.target) == "air.wait.default"]
    assert waits == [["record_default"], ["record_default", "record_default_1"]]
    assert result.changed and result.changed_nodes == ["wait", "wait_1"]
    assert result.notes == ["record_default records an event after mul", "record_default_1 records an event after add"]
    torch.testing.assert_close(gm(torch.ones(3))[0], torch.full((3,), 4.0))


def test_a_wait_on_records_already_is_left_as_it_is():
    def f(x):
        r = torch.ops.air.record()
        torch.ops.air.wait([r])
        return (x * 2,)

    gm = functional_graph(f, torch.randn(3))
    assert not apply_event_record(gm).changed
