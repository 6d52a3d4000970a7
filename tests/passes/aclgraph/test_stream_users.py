from __future__ import annotations

import torch

import fxlab.scope as scope
from tests.functional_graphs import functional_graph
from fxlab.passes.aclgraph.stream_users import readers_of_written_input, writes_are_stream_safe
from fxlab.passes.stream_labels import annotate_stream_scopes


def test_the_readers_of_a_written_input_leave_out_its_copy_back():
    def f(x):
        x.mul_(2)
        return (x + 1,)

    gm = functional_graph(f, torch.randn(3))
    (x,) = [n for n in gm.graph.nodes if n.op == "placeholder"]
    assert [n.target for n in x.users] == [torch.ops.aten.mul.Tensor, torch.ops.aten.copy_.default]
    assert [n.name for n in readers_of_written_input(x)] == ["mul"]  # copy_ goes when mul is written in place


def test_writes_are_on_one_stream_only_when_every_reader_is():
    def f(x):
        a = x * 2
        b = a + 1
        with scope.npu_stream_switch("side", 0):
            c = a.relu()
        return (b, c)

    gm = functional_graph(f, torch.randn(3))
    annotate_stream_scopes(gm)
    add = next(n for n in gm.graph.nodes if n.name == "add")
    assert not writes_are_stream_safe(add, [0])
    relu = next(n for n in gm.graph.nodes if n.name == "relu")
    assert writes_are_stream_safe(relu, [0]) is False  # a is read by add too, on the default stream


def test_npugraph_ex_allows_a_reader_on_another_stream_that_events_order_before_the_write():
    import torch.fx as fx

    import fxlab.npu_streams  # noqa: F401 - the npugraph_ex event operators

    ne = torch.ops.npugraph_ex
    graph = fx.Graph()
    x = graph.placeholder("x")
    a = graph.call_function(torch.ops.aten.mul.Tensor, (x, 2))
    graph.call_function(ne.scope_enter.default, (["_user_stream_label"], ["side"]))
    relu = graph.call_function(torch.ops.aten.relu.default, (a,))
    graph.call_function(ne.tagged_event_record.default, ("done", True))
    graph.call_function(ne.scope_exit.default, ())
    graph.call_function(ne.tagged_event_wait.default, ("done", True))
    add = graph.call_function(torch.ops.aten.add.Tensor, (a, 1))  # would write a in place
    graph.output((add, relu))
    gm = fx.GraphModule({}, graph)
    annotate_stream_scopes(gm, "npugraph_ex")
    # a's readers: relu on the side stream, add on the default one. TorchAir wants one
    # stream; npugraph_ex sees relu ordered before add by the event "done".
    assert writes_are_stream_safe(add, [0], "air") is False
    assert writes_are_stream_safe(add, [0], "npugraph_ex") is True
    graph.erase_node(next(n for n in graph.nodes if str(n.target) == "npugraph_ex.tagged_event_wait.default"))
    assert writes_are_stream_safe(add, [0], "npugraph_ex") is False
