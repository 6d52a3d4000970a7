"""The runs checks compare against (fxlab.capture.checks.runs): what the compiled run
records, a graph run on CPU, and the one routine that runs a graph against a recorded run."""
from __future__ import annotations

import pytest
import torch
import torch.fx as fx

from fxlab.capture.checks.runs import GraphRun, OutputPolicy, RunRecorder, run_against, run_on_cpu, why_not_recorded
from fxlab.capture.stages import REGENERATED_OUTPUTS


def _graph_module(nodes: int) -> fx.GraphModule:
    def fn(x: torch.Tensor) -> tuple[torch.Tensor]:
        for _ in range(nodes):
            x = x + 1
        return (x,)

    return fx.symbolic_trace(fn)


def test_every_graph_is_recorded_whatever_its_size():
    recorder = RunRecorder()
    big = _graph_module(2000)
    (out,) = recorder.wrap(big)(torch.ones(1))
    run = recorder.run_of(big)
    assert out.item() == 2001 and run.outputs[0].item() == 2001 and torch.equal(run.inputs_before[0], torch.ones(1))


def test_only_graphs_with_custom_ops_are_recorded_when_asked():
    recorder = RunRecorder(custom_ops_only=True)
    plain = _graph_module(3)
    assert recorder.wrap(plain) is plain  # called as it is: nothing copied


def test_a_run_that_stops_at_a_kernel_gap_records_why():
    from fxlab.ir.kernels.registry import KernelGap

    def fn(x: torch.Tensor) -> tuple[torch.Tensor]:
        raise KernelGap("npu.npu_x", "block_table have no CPU reference kernel")

    recorder = RunRecorder()
    gm = fx.GraphModule(torch.nn.Module(), fx.Graph())
    gm.forward = fn  # type: ignore[method-assign]
    with pytest.raises(KernelGap):
        recorder.wrap(gm)(torch.ones(1))
    reason = "npu.npu_x: fxlab's CPU reference kernel does not implement this call (block_table have no CPU reference kernel)"
    assert recorder.run_of(gm).stopped == reason and recorder.stopped == reason and recorder.run_of(gm).outputs is None


def test_a_graph_that_cannot_run_on_cpu_says_why():
    gm = torch.fx.symbolic_trace(lambda x: torch.ops.aten.add.Tensor(x, "not a tensor"))
    ran = run_on_cpu(gm, [torch.ones(2)])
    assert ran.outputs is None and ran.not_run is None
    assert ran.reason.startswith("it failed on CPU: RuntimeError: aten::add() Expected a value of type")


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


def _written(x: torch.Tensor, y: torch.Tensor, scale: float, shift: float) -> tuple[torch.Tensor, ...]:
    """A functional graph's shape: a fresh buffer nothing writes, a value, a view of input
    x (which aot_autograd's runtime re-makes), and input y written back."""
    fresh = torch.ops.aten.empty_like.default(x)
    torch.ops.aten.copy_.default(y, torch.ops.aten.add.Tensor(y, shift))
    return fresh, torch.ops.aten.mul.Tensor(x, scale), torch.ops.aten.add.Tensor(torch.ops.aten.t.default(x), shift - 1.0)


def _graph(scale: float, shift: float) -> fx.GraphModule:
    gm = fx.symbolic_trace(lambda x, y: _written(x, y, scale, shift))
    gm.meta[REGENERATED_OUTPUTS] = {2: 0}  # output 2 is a view of input 0
    return gm


def _recorded(gm: fx.GraphModule) -> GraphRun:
    inputs = [torch.arange(6.0).reshape(2, 3), torch.zeros(4)]
    before = [t.clone() for t in inputs]
    ran = run_on_cpu(gm, inputs)
    return GraphRun(before, ran.outputs, inputs)


def test_a_graph_run_against_a_recorded_run_judges_only_the_values_the_runtime_uses():
    functional = _graph(2.0, 1.0)
    recorded = _recorded(functional)
    policy = OutputPolicy(functional, 0, "the test graph's")
    cmp, ran = run_against(recorded, lambda inputs: run_on_cpu(_graph(3.0, 2.0), inputs), policy)
    assert ran.reason is None and torch.equal(recorded.inputs_before[1], torch.zeros(4))  # the run wrote copies
    # output 1 and both inputs by value; the fresh buffer and the re-made view by shape and dtype
    assert (cmp.compared, cmp.formed) == (3, 2)
    assert cmp.mismatches == ["graph 0 output 1: max |diff| 5", "graph 0 input 1 after the call: max |diff| 1"]
    assert cmp.notes == [
        "graph 0 output 2 (add_tensor_1): the test graph's value differs from the compiled run's (max |diff| 1), but no one uses it: "
        "it is graph input 0 (x) or a view of it, which aot_autograd's runtime re-makes from the input the graph wrote back"
    ]


def test_a_graph_that_draws_is_compared_by_shape_and_dtype_outputs_and_written_inputs_alike():
    functional = _graph(2.0, 1.0)
    policy = OutputPolicy(functional, 0, "the test graph's", drawing=["aten.rand.default"])
    cmp, _ = run_against(_recorded(functional), lambda inputs: run_on_cpu(_graph(3.0, 2.0), inputs), policy)
    assert (cmp.compared, cmp.formed, cmp.mismatches) == (0, 5, [])


def test_a_run_with_another_number_of_outputs_or_another_shape_is_a_mismatch():
    functional = _graph(2.0, 1.0)
    policy = OutputPolicy(functional, 0, "the test graph's", positions=[0, 1])  # the run stands for outputs 0 and 1
    transposed = fx.symbolic_trace(lambda x, y: (torch.ops.aten.empty_like.default(x.t()),))
    cmp, _ = run_against(_recorded(functional), lambda inputs: run_on_cpu(transposed, inputs), policy)
    assert cmp.mismatches == [
        "graph 0: 1 output(s) for 2",
        "graph 0 output 0: torch.float32[3, 2] vs torch.float32[2, 3]",
        "graph 0 input 1 after the call: max |diff| 1",
    ]


def test_a_graph_that_cannot_run_leaves_the_comparison_empty_and_says_why():
    functional = _graph(2.0, 1.0)
    failing = fx.symbolic_trace(lambda x, y: torch.ops.aten.add.Tensor(x, "not a tensor"))
    cmp, ran = run_against(_recorded(functional), lambda inputs: run_on_cpu(failing, inputs), OutputPolicy(functional, 0, "its"))
    assert ran.outputs is None and ran.failure.startswith("RuntimeError: aten::add() Expected a value of type")
    assert (cmp.compared, cmp.formed, cmp.mismatches, cmp.notes) == (0, 0, [], [])


def test_why_a_graph_has_no_recorded_run():
    recorder = RunRecorder()
    assert why_not_recorded(None, recorder) == "the compiled run did not record this graph's inputs"
    assert why_not_recorded(GraphRun([], stopped="x has no CPU kernel"), recorder) == "the compiled run stopped in this graph: x has no CPU kernel"
    recorder.stopped = "y has no CPU kernel"
    assert why_not_recorded(GraphRun([]), recorder) == "the compiled run stopped before this graph ran: y has no CPU kernel"
    assert why_not_recorded(GraphRun([], outputs=[]), recorder) is None
