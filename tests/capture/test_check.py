"""fxlab.capture.check: what the compiled run records for the IR check."""
from __future__ import annotations

import torch
import torch.fx as fx

from fxlab.capture.check import RunRecorder


def _graph_module(nodes: int) -> fx.GraphModule:
    def fn(x: torch.Tensor) -> tuple[torch.Tensor]:
        for _ in range(nodes):
            x = x + 1
        return (x,)

    return fx.symbolic_trace(fn)


def test_runs_are_recorded_up_to_the_node_limit():
    recorder = RunRecorder(node_limit=10)
    small, big = _graph_module(3), _graph_module(20)
    assert recorder.wrap(big) is big  # called as it is: nothing copied
    wrapped = recorder.wrap(small)
    (out,) = wrapped(torch.zeros(2))
    run = recorder.run_of(small)
    assert run is not None and torch.equal(run.outputs[0], out) and torch.equal(run.inputs_before[0], torch.zeros(2))
    big(torch.zeros(2))
    assert recorder.run_of(big) is None


def test_without_a_limit_every_graph_is_recorded():
    recorder = RunRecorder()
    big = _graph_module(20)
    recorder.wrap(big)(torch.ones(1))
    assert recorder.run_of(big).outputs[0].item() == 21
