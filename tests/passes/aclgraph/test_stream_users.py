from __future__ import annotations

import torch

import fxlab.scope as scope
from fxlab.capture.stages import functional_graph
from fxlab.passes.aclgraph.stream_users import readers_of_written_input, writes_on_one_stream
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
    assert not writes_on_one_stream(add, [0])
    relu = next(n for n in gm.graph.nodes if n.name == "relu")
    assert writes_on_one_stream(relu, [0]) is False  # a is read by add too, on the default stream
