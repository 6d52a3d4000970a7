from __future__ import annotations

import torch

import fxlab.scope as scope
from tests.functional_graphs import functional_graph
from fxlab.passes.aclgraph.reinplace_inplaceable_ops import OVERLAP_HAZARD, SCATTER_READ_HAZARD, reinplace_inplaceable_ops
from fxlab.passes.optimize_fx import example_inputs


def _run(fn, *inputs):
    gm = functional_graph(fn, *inputs)
    return gm, reinplace_inplaceable_ops(gm, example_inputs(gm))


def _targets(gm):
    return {n.name: str(n.target) for n in gm.graph.nodes if n.op == "call_function"}


def test_an_intermediate_nothing_reads_later_is_written_in_place():
    def f(x):
        a = x * 2
        b = torch.relu(a)
        return (b + 1,)

    gm, result = _run(f, torch.randn(4))
    assert _targets(gm) == {"mul": "aten.mul.Tensor", "relu": "aten.relu_.default", "add": "aten.add_.Tensor"}
    assert result.notes == ["relu: aten.relu.default -> aten.relu_.default", "add: aten.add.Tensor -> aten.add_.Tensor"]
    torch.testing.assert_close(gm(torch.ones(4))[0], torch.full((4,), 3.0))


def test_graph_inputs_and_values_read_later_are_not_written():
    def f(x):
        a = x * 2  # x is an input
        b = a + 1  # a is read again below
        return (b, a.sum())

    gm, _ = _run(f, torch.randn(4))
    assert _targets(gm)["mul"] == "aten.mul.Tensor" and _targets(gm)["add"] == "aten.add.Tensor"


def test_readers_on_two_streams_keep_the_op_functional():
    def f(x):
        a = x * 2
        b = a + 1
        with scope.npu_stream_switch("side", 0):
            c = torch.relu(a)
        return (b, c)

    gm, _ = _run(f, torch.randn(4))
    # add would write a, which relu reads on the side stream: TorchAir keeps add functional.
    assert _targets(gm)["add"] == "aten.add.Tensor"
    same_stream = functional_graph(lambda x: ((x * 2) + 1,), torch.randn(4))
    reinplace_inplaceable_ops(same_stream, example_inputs(same_stream))
    assert _targets(same_stream)["add"] == "aten.add_.Tensor"


def test_outside_the_compilers_dispatch_state_a_dropped_scatter_hands_its_readers_the_view_and_says_so():
    # TorchAir's code path when the view replay succeeds: never in its own runs (its
    # compiler runs with aot_autograd's fake mode entered; see the next test).
    def f(x):
        v = x + x
        v[1:] = 0.5
        return (v,)

    gm, result = _run(f, torch.randn(4, 4))
    assert "slice_scatter" not in _targets(gm) and _targets(gm)["fill"] == "aten.fill_.Tensor"
    output = next(n for n in gm.graph.nodes if n.op == "output")
    assert [a.name for a in output.args[0]] == ["slice_1"]  # torch's own pass returns add
    assert [n for n in result.notes if n.startswith(SCATTER_READ_HAZARD)] == [
        f"{SCATTER_READ_HAZARD}: output read slice_1 (what fill wrote) where they read slice_scatter, the whole of add: "
        "TorchAir's reinplace_inplaceable_ops replaces a dropped aten.slice_scatter.default by the re-inplaced op's input, "
        "torch's own pass by the scatter's base"
    ]


def test_in_the_compilers_dispatch_state_the_scatter_is_written_in_place_and_the_fill_stays():
    from fxlab.passes.compiler_mode import compiler_dispatch_state

    def f(x):
        v = x + x
        v[1:] = 0.5
        return (v,)

    gm = functional_graph(f, torch.randn(4, 4))
    inputs = [n.meta["val"] for n in gm.graph.nodes if n.op == "placeholder"]
    with compiler_dispatch_state(inputs) as mode:
        assert mode is not None
        result = reinplace_inplaceable_ops(gm, inputs)
    targets = _targets(gm)
    assert targets["fill"] == "aten.fill.Tensor" and "slice_scatter" not in targets
    assert [r for r in result.notes if "slice_scatter" in r] == ["slice_scatter: aten.slice_scatter.default -> aten.slice.Tensor + copy_"]
    output = next(n for n in gm.graph.nodes if n.op == "output")
    assert [a.name for a in output.args[0]] == ["add"]  # the whole tensor, as the model returns it
    assert not [n for n in result.notes if n.startswith(SCATTER_READ_HAZARD)]
    x = torch.randn(4, 4)
    torch.testing.assert_close(gm(torch.tensor(0.5), x)[0], f(x.clone())[0])  # the lifted 0.5 comes first


def test_an_op_reading_memory_it_would_write_is_rewritten_as_torchair_does_and_noted():
    # GPT-2's position ids: x[..., 1:] - x[..., :-1] on a tensor the graph made. TorchAir
    # (as torch) writes sub in place into the first slice, which overlaps the second.
    def f(a, b):
        x = torch.cat([a, b], -1)
        return (x[..., 1:] - x[..., :-1],)

    gm, result = _run(f, torch.randn(1, 4), torch.randn(1, 5))
    sub = next(n for n in gm.graph.nodes if n.name == "sub")
    assert str(sub.target) == "aten.sub_.Tensor"
    (fault,) = [n for n in result.notes if n.startswith(OVERLAP_HAZARD)]
    assert fault.startswith(f"{OVERLAP_HAZARD}: sub (aten.sub_.Tensor) writes slice_1 while reading slice_2, which partly overlaps it")


def test_disjoint_slices_of_one_tensor_are_no_overlap():
    def f(a):
        x = a * 2
        return (x[..., :4] - x[..., 4:],)

    _, result = _run(f, torch.randn(1, 8))
    assert not [n for n in result.notes if n.startswith(OVERLAP_HAZARD)]


_EMIT = torch.library.Library("fxlab_reinplace_test", "FRAGMENT")
_EMIT.define("emit(Tensor x) -> ()")  # as npu_define::_send: a tensor in, nothing out
_EMIT.impl("emit", lambda x: None, "CompositeExplicitAutograd")
_EMIT.impl("emit", lambda x: None, "Meta")
torch.fx.node.has_side_effect(torch.ops.fxlab_reinplace_test.emit.default)  # kept in the graph, as a send is


def test_an_op_that_returns_no_tensor_is_left_as_it_is():
    def f(x):
        y = x * 2
        torch.ops.fxlab_reinplace_test.emit(y)  # a send: it writes nothing, so there is nothing to re-inplace
        return (y + 1,)

    gm, result = _run(f, torch.randn(4))
    assert _targets(gm)["emit"] == "fxlab_reinplace_test.emit.default" and not any("emit" in note for note in result.notes)
    torch.testing.assert_close(gm(torch.ones(4))[0], torch.full((4,), 3.0))
