from __future__ import annotations

import types

import pytest
import torch

from fxlab.capture.graph_check import run_on_cpu
from fxlab.capture.loader import LoadedModel
from fxlab.capture.pipeline import capture_trace
from fxlab.capture.request import TraceRequest
from tests.sessions import trace_of


def _trace(fn, *inputs, mode="reduce-overhead"):
    return trace_of(fn, inputs, mode=mode)


def _trace_with_config(fn, module):
    """``fn`` traced as a model file whose ``module`` carries a compiler config (no file:
    the pipeline gets the loaded model by hand)."""
    inputs = (torch.randn(4),)
    return capture_trace(LoadedModel(fn=fn, args=inputs, module=module), TraceRequest(fn, inputs)).trace


def test_the_aclgraph_graph_runs_on_cpu_against_the_compiled_run():
    def f(x, y):
        x.add_(y)
        return (x.relu() * 2,)

    trace = _trace(f, torch.randn(4), torch.randn(4))
    assert trace.aclgraph_check.ok and trace.aclgraph_check.compared == 3 and trace.ir_check is None


def test_a_graph_that_cannot_run_on_cpu_says_why():
    gm = torch.fx.symbolic_trace(lambda x: torch.ops.aten.add.Tensor(x, "not a tensor"))
    ran = run_on_cpu(gm, [torch.ones(2)])
    assert ran.outputs is None and ran.missing_kernel is None
    assert ran.reason.startswith("it failed on CPU: RuntimeError: aten::add() Expected a value of type")


def test_an_in_place_op_reading_what_it_writes_runs_read_then_write_and_is_named():
    # TorchAir writes sub in place into x[..., 1:] while it reads x[..., :-1]: torch refuses
    # it on CPU; the check runs it as sub + copy_ and says so.
    def f(a, b):
        x = torch.cat([a, b], -1)
        return (x[..., 1:] - x[..., :-1],)

    trace = _trace(f, torch.randn(1, 4), torch.randn(1, 5))
    check = trace.aclgraph_check
    assert check.ok and not check.skipped and check.compared == 3  # the output and the two inputs
    (note,) = check.approximations
    assert note.startswith("graph 0: sub (aten.sub_.Tensor) read memory they write in place (torch refuses this on CPU")
    assert "except: graph 0: sub" in check.verdict


def _with_post_pass(fn, mode):
    from fxlab.compat.config import CompilerConfig

    config = CompilerConfig()
    config.mode = mode
    config.post_grad_custom_post_pass = fn
    return types.SimpleNamespace(compiler_config=config)


def keep(gm, example_inputs, config):
    for node in gm.graph.nodes:
        if node.target is torch.ops.aten.mul.Tensor:  # x * 2 -> x + x
            node.target, node.args = torch.ops.aten.add.Tensor, (node.args[0], node.args[0])


def spoil(gm, example_inputs, config):
    for node in gm.graph.nodes:
        if node.target is torch.ops.aten.mul.Tensor:
            node.args = (node.args[0], 3)


@pytest.mark.parametrize("mode", ["max-autotune", "reduce-overhead"])
@pytest.mark.parametrize("fn,ok", [(keep, True), (spoil, False)], ids=["keeps", "spoils"])
def test_a_user_pass_is_run_before_and_after_on_the_traced_inputs(mode, fn, ok):
    def f(x):
        return (x * 2,)

    trace = _trace_with_config(f, _with_post_pass(fn, mode))
    assert trace.user_pass_check.ok is ok and trace.user_pass_check.compared == 2, trace.user_pass_check.verdict
    assert (trace.status == "ok") is ok
    if not ok:
        (mismatch,) = trace.user_pass_check.mismatches
        assert mismatch.startswith("graph 0: the user's post_grad_custom_post_pass (spoil (test_graph_check.py:")
        assert mismatch.endswith("changes the results: output 0: max |diff| " + mismatch.rsplit(" ", 1)[-1])


def break_it(gm, example_inputs, config):
    for node in gm.graph.nodes:
        if node.target is torch.ops.aten.mul.Tensor:  # a 1-D tensor's second dimension
            node.target, node.args = torch.ops.aten.sum.dim_IntList, (node.args[0], [1])


@pytest.mark.parametrize("mode", ["max-autotune", "reduce-overhead"])
def test_a_user_pass_that_breaks_the_graph_is_named_and_the_trace_partial(mode):
    def f(x):
        return (x * 2,)

    trace = _trace_with_config(f, _with_post_pass(break_it, mode))
    (mismatch,) = trace.user_pass_check.mismatches
    assert mismatch.startswith("graph 0: the user's post_grad_custom_post_pass (break_it (test_graph_check.py:")
    assert "breaks the graph: it ran before the pass and fails after it: IndexError: Dimension out of range" in mismatch
    assert trace.status == "partial"


def test_a_graph_torchairs_reinplace_breaks_fails_with_its_fault_named():
    # TorchAir's reinplace_inplaceable_ops hands the readers of a dropped select_scatter the
    # selected row instead of the whole tensor: here t() of that row, then a slice along a
    # dimension it does not have. The graph TorchAir would capture cannot run.
    def f(x, w):
        h = x @ w
        h.t()[0].mul_(3.0)
        h[:, 1:3].div_(2.0)
        return (h * 2,)

    trace = _trace(f, torch.randn(4, 7), torch.randn(7, 5))
    check = trace.aclgraph_check
    assert check.failed and trace.status == "partial"
    failure, *faults = check.mismatches
    assert failure.startswith("graph 0: the aclgraph graph fails: IndexError: Dimension out of range")
    assert [f.split(": ")[2].split(" read ")[0] for f in faults] == ["t_2", "mul_1"]  # the readers of the two dropped scatters
    assert all(f.startswith("graph 0: TorchAir fault: ") and "by the re-inplaced op's input, torch's own pass by the scatter's base" in f for f in faults)


def test_a_copy_torchairs_noop_removal_reads_after_its_write_is_named():
    # Found by the property test: TorchAir's remove_noop_ops replaces copy(x1) by x1,
    # which the graph's epilogue writes before x0's copy_ reads it (the buffer is the
    # graph's first input, and epilogues go in input order).
    class CopyThenWrite(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("x1", torch.randn(4, 4))

        def forward(self, x0):
            x1 = self.x1  # read first: Dynamo makes it the first graph input
            x0.copy_(x1)
            x1.add_(1.5)
            return ()

    trace = _trace(CopyThenWrite(), torch.randn(4, 4))
    check = trace.aclgraph_check
    assert check.failed and trace.status == "partial"
    mismatch, fault = check.mismatches
    assert mismatch.startswith("graph 0 input ") and mismatch.endswith("after the call: max |diff| 1.5")
    assert fault.startswith("graph 0: TorchAir fault: copy__1 read ") and "TorchAir's remove_noop_ops (Inductor's rule)" in fault
    assert _trace(CopyThenWrite(), torch.randn(4, 4), mode="max-autotune").status == "ok"


def test_out_given_as_a_list_reaches_the_named_out_arguments():
    # TorchAir's replace_dynamic_workspace_ops calls npu_fused_infer_attention_score.out
    # with out=[attention_out, softmax_lse]; the CPU run passes them by their schema names.
    lib = torch.library.Library("fxlab_test_outs", "DEF")
    lib.define("pair.out(Tensor x, *, Tensor(a!) first, Tensor(b!) second) -> (Tensor(a!), Tensor(b!))")

    def pair(x, *, first, second):
        return first.copy_(x), second.copy_(x * 2)

    lib.impl("pair.out", pair, "CPU")
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    a = graph.call_function(torch.empty, ((2,),))
    b = graph.call_function(torch.empty, ((2,),))
    run = graph.call_function(torch.ops.fxlab_test_outs.pair.out, (x,), {"out": [a, b]})
    graph.output((run,))
    ran = run_on_cpu(torch.fx.GraphModule({}, graph), [torch.ones(2)], emulated=[])
    assert ran.reason is None
    torch.testing.assert_close(list(ran.outputs[0]), [torch.ones(2), torch.full((2,), 2.0)])
