"""TorchAir's graph-only ``air::wait_tensor`` (``torchair.scope.npu_wait_tensor``) while
fxlab runs a model: a copy when run eagerly, an ``Identity`` with a control edge in the GE
graph (fxlab's converter and TorchAir's), and the stop TorchAir's ACL graph capture makes
on the aclgraph path; the multi-stream SuperKernel MoE example traced both ways."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from fxlab.compat.graph_only_ops import TORCHAIR_WAIT_TENSOR_ERROR
from fxlab.compat.layer import compat_layer
from fxlab.npu_streams import CaptureStops, as_captured
from tests.cli.cli_runner import run_cli
from tests.conftest import EXAMPLES

MOE = EXAMPLES / "multistream_moe.py"


def _wait_tensor_defined() -> bool:
    return hasattr(torch.ops.air, "wait_tensor")


def test_npu_wait_tensor_runs_eagerly_as_a_copy_and_leaves_with_the_block() -> None:
    x, dependency = torch.randn(4, 8), torch.randn(2)
    with compat_layer():
        from torchair.scope import npu_wait_tensor

        waited = npu_wait_tensor(x, dependency)
        assert torch.equal(waited, x) and waited.data_ptr() != x.data_ptr()
        waited.add_(1)  # the result is a new tensor, as the GE Identity's output is
        assert torch.equal(waited, x + 1)
        with as_captured(), pytest.raises(CaptureStops) as info:
            npu_wait_tensor(x, dependency)
        assert f'raises "{TORCHAIR_WAIT_TENSOR_ERROR}" (TorchAir 2.13\'s torchair/scope/_wait_tensor.py)' in str(info.value)
        assert torch.equal(npu_wait_tensor(x, dependency), x)  # the eager meaning is back after the check
    assert not _wait_tensor_defined()


def _capture(mode: str) -> Any:
    from tests.sessions import trace_of

    return trace_of(MOE, mode=mode)


def test_the_moe_example_converts_the_wait_to_an_identity_after_the_router() -> None:
    trace = _capture("max-autotune")
    assert trace.status == "ok" and trace.check.ok and trace.ir_check.ok and trace.ir_check.compared > 0
    (graph,) = trace.graphs
    ops = {op.name: op for op in graph.ir.ops}
    (identity,) = [op for op in graph.ir.ops if op.fx_node == "wait_tensor"]
    router = ops[identity.inputs[1].split(":")[0]]
    assert identity.type == "Identity" and identity.inputs[1].endswith(":-1") and router.fx_node == "mm"
    assert ops[identity.inputs[0].split(":")[0]].type == "Data"  # the hidden state itself, waited for
    assert identity.attr_value("_user_stream_label") == "moe_shared"
    expert_scopes = {op.attr_value("_super_kernel_scope") for op in graph.ir.ops if op.fx_node in ("topk", "bmm", "bmm_1")}
    assert expert_scopes == {"moe_experts"}


def test_on_the_aclgraph_path_the_check_stops_where_torchairs_capture_stops() -> None:
    trace = _capture("reduce-overhead")
    assert trace.status == "partial" and trace.check.ok
    check = trace.aclgraph_check
    (stop,) = check.refused
    assert check.mismatches == [] and check.verdict.startswith("REFUSED: ")  # not a numeric disagreement
    assert stop.startswith("graph 0: TorchAir's capture of the ACL graph stops at air::wait_tensor")
    assert "leave it out of the graphs of reduce-overhead / npugraph_ex" in stop


def test_fxlab_scopes_reports_the_stream_the_superkernel_and_the_core_limits() -> None:
    code, out, err = run_cli("scopes", str(MOE), "--json")
    assert code == 0, err
    report = json.loads(out)
    (graph,) = report["graphs"]
    stream = next(s for s in graph["scopes"] if s["attrs"].get("_user_stream_label") == "moe_shared")
    assert stream["nodes"][0] == "wait_tensor"
    (kernel,) = report["super_kernels"]
    assert kernel["name"] == "moe_experts" and kernel["options"]["values"] == {"stream-fusion": "1"}
    assert {(c["aicore"], c["vectorcore"]) for c in report["core_limits"]} == {("16", "32")}
    assert report["findings"] == []


# -- TorchAir's own code (each session closed before the next opens) -----------------------------------
def test_torchairs_own_wait_tensor_runs_eagerly_in_the_block_and_raises_again_after(torchair_path: Path) -> None:
    from fxlab.compat.bridge import open_torchair

    x, dependency = torch.randn(3), torch.randn(1)
    with open_torchair(torchair_path):
        with compat_layer():
            import torchair as loaded

            assert not loaded.__file__.startswith(str(Path(__file__).parents[2] / "fxlab"))  # TorchAir's sources
            assert torch.equal(loaded.scope.npu_wait_tensor(x, dependency), x)
            with as_captured(), pytest.raises(CaptureStops) as info:
                loaded.scope.npu_wait_tensor(x, dependency)
            assert f'raises "{TORCHAIR_WAIT_TENSOR_ERROR}" (TorchAir\'s own NPU kernel, run here)' in str(info.value)
        with pytest.raises(NotImplementedError, match="npu_wait_tensor is not support in this mode"):
            torch.ops.air.wait_tensor(x, dependency)  # TorchAir's own kernel again, once the compat block closed
    assert not _wait_tensor_defined()


@pytest.mark.parametrize("mode,code,status", [("max-autotune", 0, "ok"), ("reduce-overhead", 1, "partial")])
def test_the_moe_example_traces_the_same_both_ways(torchair_path: Path, mode: str, code: int, status: str) -> None:
    for converter in ("builtin", "torchair"):
        exit_code, out, err = run_cli(
            "trace", str(MOE), "--converter", converter, "--torchair-path", str(torchair_path), "--mode", mode, "--json"
        )
        assert exit_code == code, (converter, err)
        assert json.loads(out)["status"] == status
        assert "no NPU here" not in err  # the file never uses the npu device: no emulation, no note
