from __future__ import annotations

import types

import pytest
import torch

from fxlab.capture.graph_check import run_on_cpu
from fxlab.capture.loader import LoadedModel
from fxlab.capture.pipeline import capture_trace
from fxlab.capture.request import TraceRequest
from tests.sessions import capture_of, trace_of


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


def test_writes_into_views_of_an_intermediate_give_a_graph_that_computes_the_models_values():
    # Once read as TorchAir's reinplace handing a dropped scatter's readers the view; in
    # TorchAir's own runs (and fxlab's, in the dispatch state its compiler runs in) no
    # scatter of a view of an intermediate is dropped: the scatters are written in place.
    def f(x, w):
        h = x @ w
        h.t()[0].mul_(3.0)
        h[:, 1:3].div_(2.0)
        return (h * 2,)

    captured = capture_of(f, (torch.randn(4, 7), torch.randn(7, 5)), mode="reduce-overhead")
    trace = captured.trace
    check = trace.aclgraph_check
    assert check.ok and not check.not_run and trace.status == "ok", check.verdict
    targets = [str(n.target) for n in captured.graphs[0].modules["aclgraph"].graph.nodes if n.op == "call_function"]
    assert "aten.mul.Tensor" in targets and "aten.mul_.Tensor" not in targets  # h.t()[0] * 3 stays functional
    assert "aten.slice_scatter.default" not in targets and "aten.select_scatter.default" not in targets


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
