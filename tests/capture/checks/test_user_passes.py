"""The user passes' check (fxlab.capture.checks.user_passes): the graph after a user's pass
against the graph before it, on the inputs the compiled run recorded."""
from __future__ import annotations

import types

import pytest
import torch

from fxlab.capture.loader import LoadedModel
from fxlab.capture.pipeline import capture_trace
from fxlab.capture.request import TraceRequest


def _trace_with_config(fn, module):
    """``fn`` traced as a model file whose ``module`` carries a compiler config (no file:
    the pipeline gets the loaded model by hand)."""
    inputs = (torch.randn(4),)
    return capture_trace(LoadedModel(fn=fn, args=inputs, module=module), TraceRequest(fn, inputs)).trace


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
        assert mismatch.startswith("graph 0: the user's post_grad_custom_post_pass (spoil (test_user_passes.py:")
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
    assert mismatch.startswith("graph 0: the user's post_grad_custom_post_pass (break_it (test_user_passes.py:")
    assert "breaks the graph: it ran before the pass and fails after it: IndexError: Dimension out of range" in mismatch
    assert trace.status == "partial"


def fill_fresh_buffers(gm, example_inputs, config):
    for node in gm.graph.nodes:
        if node.target is torch.ops.aten.empty_like.default:  # a buffer the code fills after the break
            node.target, node.args, node.kwargs = torch.ops.aten.full_like.default, (node.args[0], 7.0), {}


@pytest.mark.parametrize("mode", ["max-autotune", "reduce-overhead"])
def test_a_pass_that_fills_a_buffer_nothing_wrote_changes_no_result(mode):
    # The buffer's memory is whatever it held, before the pass and after it: compared by
    # shape and dtype only, as every check compares it (it was once compared by value).
    def fill(x):
        buffer = torch.empty_like(x)
        y = x * 2
        torch._dynamo.graph_break()
        buffer.copy_(y)
        return buffer + 1

    trace = _trace_with_config(fill, _with_post_pass(fill_fresh_buffers, mode))
    check = trace.user_pass_check
    # graph 0: y and input x by value (the buffer by shape); graph 1: its output and its two inputs
    assert check.ok and check.compared == 5 and not check.notes and trace.status == "ok", check.verdict


def drop_an_output(gm, example_inputs, config):
    output = gm.graph.output_node()
    output.args = ((output.args[0][0],),)


def test_a_pass_that_drops_an_output_is_named_with_the_count():
    def f(x):
        return x * 2, x + 1

    trace = _trace_with_config(f, _with_post_pass(drop_an_output, "max-autotune"))
    (mismatch,) = trace.user_pass_check.mismatches
    assert mismatch.startswith("graph 0: the user's post_grad_custom_post_pass (drop_an_output (test_user_passes.py:")
    assert mismatch.endswith(")) changes the results: 1 output(s) for 2")
