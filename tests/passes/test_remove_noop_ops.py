from __future__ import annotations

import torch
import torch.nn.functional as F

from tests.functional_graphs import functional_graph
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
    assert remove_noop_ops(gm).changed is True
    assert _targets(gm) == ["aten.add.Tensor", "aten.expand.default", "aten.mul.Tensor", "aten.sub.Tensor", "aten.relu.default"]
    torch.testing.assert_close(gm(x)[0], _noops(x)[0])


def test_a_graph_without_no_ops_is_left_alone():
    gm = functional_graph(lambda x: (x.repeat(2, 1) + 1,), torch.randn(4, 3))
    before = _targets(gm)
    assert remove_noop_ops(gm).changed is False and _targets(gm) == before


def test_an_input_returned_through_a_no_op_keeps_its_clone():
    # Removing it would make the output alias the input (Inductor's rule, kept by TorchAir).
    gm = functional_graph(lambda x: (x.clone(),), torch.randn(3))
    assert remove_noop_ops(gm).changed is False and _targets(gm) == ["aten.clone.default"]


# -- the same result as Inductor's pass, on random chains of no-op candidates ----------

from hypothesis import given, settings
from hypothesis import strategies as st

from fxlab.passes.graph_copy import copy_graph_module
from fxlab.passes.remove_noop_ops import NOOP_RULES

# Each candidate call: a line of Python over ``y`` (the current value, shape (4, 6)), as a
# no-op and as a near miss.
CANDIDATES = (
    "y[:, 0:6]", "y[:, 1:6]", "y[0:4]", "y[:, ::2]", "y.narrow(1, 0, 6)",
    "y.repeat(1, 1)", "y.repeat(2, 1)", "torch.cat([y])", "torch.cat([y, y])",
    "y.pow(1)", "y.pow(2)", "y.to(torch.float32)", "y.to(torch.float64)", "y.to(torch.int32)",
    "F.pad(y, (0, 0))", "F.pad(y, (1, 0))", "y.clone()", "y.contiguous()", "y.view(4, 6)", "y.view(6, 4)",
    "y.view(torch.float32) if y.dtype == torch.float32 else y", "torch.ops.aten.alias(y)",
    "y.ceil()", "y.floor()", "y.round()", "y.trunc()", "y.expand(4, 6)",
    "torch.ops.aten.slice_scatter(y, y * 2, 0, 0, 4)", "torch.ops.aten.slice_scatter(y, y[:2] * 2, 0, 0, 2)",
    "y.t().contiguous().t()", "y + 1",
)


@st.composite
def _chains(draw):
    lines = draw(st.lists(st.sampled_from(CANDIDATES), min_size=1, max_size=6))
    returned = draw(st.lists(st.integers(0, len(lines)), min_size=1, max_size=3))
    dtype = draw(st.sampled_from(["torch.float32", "torch.int64"]))
    return lines, returned, dtype


def _program(lines, returned, dtype):
    body = ["    values = [y]"] + [f"    y = {line}\n    values.append(y)" for line in lines]
    source = "\n".join(["def f(y):", *body, f"    return tuple(values[i] for i in {returned!r})"])
    scope = {"torch": torch, "F": F}
    exec(source, scope)
    x = torch.arange(24).reshape(4, 6).to(getattr(torch, dtype.split(".")[1]))
    return scope["f"], x


def _inductor(gm):
    from torch._inductor.fx_passes.post_grad import remove_noop_ops as inductor_remove_noop_ops

    inductor_remove_noop_ops(gm.graph)
    gm.recompile()
    return gm


@settings(max_examples=120, deadline=None)
@given(_chains())
def test_the_same_graph_as_inductors_pass(chain):
    fn, x = _program(*chain)
    try:
        gm = functional_graph(fn, x)
    except Exception:  # a chain eager torch rejects (e.g. pow on int) is no program
        return
    ours, theirs = copy_graph_module(gm), _inductor(copy_graph_module(gm))
    remove_noop_ops(ours)
    assert ours.code == theirs.code


def test_the_rules_cover_what_inductor_registers():
    from torch._inductor.fx_passes.post_grad import noop_registry

    assert set(NOOP_RULES) == set(noop_registry)


def _copy_then_write(x1, x0):
    # The epilogues write the inputs in order: x1 first, then x0 from x1.
    x0.copy_(x1)  # x0 gets x1's value before the write below
    x1.add_(1.5)
    return ()


def test_a_reader_left_after_a_write_of_the_no_ops_input_is_noted_when_the_graph_runs_in_order():
    x1, x0 = torch.randn(4, 4), torch.randn(4, 4)
    gm = functional_graph(_copy_then_write, x1.clone(), x0.clone())
    assert not remove_noop_ops(gm).notes  # the GE graph is dataflow: no order to go wrong
    gm = functional_graph(_copy_then_write, x1.clone(), x0.clone())
    (note,) = remove_noop_ops(gm, in_order=True).notes
    assert note == (
        "hazard: copy__1 read arg0_1 after copy_ writes it in place, where they read copy (aten.copy.default), its value "
        "before the write: TorchAir's remove_noop_ops (Inductor's rule) replaces a no-op by its input without looking at later writes of it"
    )
    got1, got0 = x1.clone(), x0.clone()
    gm(got1, got0)  # run in order, x0 gets the written value: what the note says
    torch.testing.assert_close(got0, x1 + 1.5)
