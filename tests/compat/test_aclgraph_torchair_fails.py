"""A graph TorchAir's own backend fails on, in both aclgraph modes: `fxlab trace` (its
built-in passes) runs TorchAir's backend end to end as the aclgraph check's reference
(``torch.compile`` with ``torchair.get_npu_backend``, or npugraph_ex's), and where that run
fails in TorchAir's own code the trace says so — partial, with the node, its source line
and the fix — instead of "not compared". Skipped without a TorchAir copy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
import torch._dynamo

from fxlab.capture.request import TraceRequest
from fxlab.passes.torchair_options import ACLGRAPH_STAGES
from fxlab.session import CaptureSession
from tests.compat.end_to_end import MODES

# `.item()` stays in the graph (an unbacked size) and torch._check compares it with an int:
# TorchAir's compiler evaluates the comparison on its own packed values and raises.
UNBACKED_SIZE_CHECK = """
import torch
import torch._dynamo

torch._dynamo.config.capture_scalar_outputs = True

class Cache(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(8, 4))
    def forward(self, x, n):
        k = n.item()
        torch._check(k >= 0)
        torch._check(k + 2 <= 8)
        self.cache[k:k + 2].copy_(x)
        return self.cache.sum(0) * k
model = Cache().eval()
example_inputs = (torch.randn(2, 4), torch.tensor(3))
"""


@pytest.mark.parametrize("mode", MODES)
def test_a_graph_torchairs_own_backend_fails_on_is_said_to_be_so_with_the_node_and_its_line(
    torchair_path: Any, tmp_path: Path, mode: str
) -> None:
    path = tmp_path / "program.py"
    path.write_text(UNBACKED_SIZE_CHECK)
    # The model file sets Dynamo's capture_scalar_outputs for the process: put back after.
    with torch._dynamo.config.patch(capture_scalar_outputs=False):
        with CaptureSession(TraceRequest(path, stages=ACLGRAPH_STAGES, mode=mode, torchair_path=torchair_path)) as session:
            captured = session.capture()
    assert torch._dynamo.config.capture_scalar_outputs is False
    assert captured.reference is not None
    run = captured.reference.run  # TorchAir's own backend, entered as a user enters it
    assert run.graphs == [] and run.error == "TypeError: '>=' not supported between instances of 'ValuePack' and 'int'"
    package = "npugraph_ex" if mode == "npugraph_ex" else "torchair"
    assert run.raised_in is not None and run.raised_in.startswith(f"{package}/npu_fx_compiler.py:") and run.failed_node == "ge"
    trace = captured.trace
    assert trace.status == "partial"
    check = trace.aclgraph_check
    (said,) = check.refused
    assert check.mismatches == [] and check.verdict.startswith("REFUSED: graph 0: TorchAir's backend fails on this graph")
    assert said.startswith("graph 0: TorchAir's backend fails on this graph, proven by its own run: ")
    assert f"fails to compile this graph at node ge ({path}:13): TypeError: '>=' not supported" in said
    assert "The node is a symbolic size comparison `u1 >= 0` (operator.ge)" in said and "Fix: keep size checks out" in said
    assert "internal error" not in said and trace.aclgraph_check.not_run == []
