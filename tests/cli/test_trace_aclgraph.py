"""``fxlab trace --mode reduce-overhead`` (and npugraph_ex) end to end: the aclgraph stage
saved and shown with TorchAir's passes named, TorchAir's own passes giving the same graph
(``--converter torchair``), users' patterns fusing in both modes, and a wrong user pass
making the trace partial with its name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.cli_runner import run_cli
from tests.conftest import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "examples" / "plugins" / "swish_fusion.py"
TORCHAIR_PASSES = [
    "replace_stream_event_pass", "remove_noop_ops", "recover_view_inplace_pattern", "apply_pattern_passes", "view_to_reshape", "valid_graph",
    "remove_cat_ops", "apply_event_closure_with_multi_stream", "apply_event_record", "eliminate_dead_code", "reinplace_inplaceable_ops",
    "reinplace_input_mutated_ops", "decompose_auto_functionalized", "replace_dynamic_workspace_ops", "replace_core_limit_nodes",
    "resolve_default_stream_markers",
]

ATEN_MIX = """
import torch

class Mix(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(4, 8))

    def forward(self, x, y):
        h = x @ y
        h.relu_()
        h.add_(1.0)
        g = h.sigmoid()
        g.mul_(2.0)
        self.cache[1:3] = g[:2]
        x.sigmoid_()
        return g + h

model = Mix()
example_inputs = (torch.randn(4, 8), torch.randn(8, 8))
"""

WRONG_PASS = """
import torch
import torchair

def sub_for_add(gm, example_inputs, config):
    for node in gm.graph.nodes:
        if node.target is torch.ops.aten.add.Tensor:
            node.target = torch.ops.aten.sub.Tensor

compiler_config = torchair.CompilerConfig()
compiler_config.post_grad_custom_post_pass = sub_for_add

def model(x, y):
    return ((x + y) * 2,)

example_inputs = (torch.randn(4), torch.randn(4))
"""


def trace(*args: str) -> tuple[int, dict, str]:
    code, out, err = run_cli("trace", *args, "--json", width=200)
    return code, json.loads(out) if out.strip().startswith("{") else {}, err


def _passes(graph: dict) -> list[str]:
    return [p["pass"] for p in graph["passes"]["aclgraph"]]


def test_an_aten_inplace_mix_is_saved_with_torchairs_passes_named(write_model, tmp_path):
    model = write_model(ATEN_MIX)
    out = tmp_path / "out"
    code, summary, err = trace(str(model), "--mode", "reduce-overhead", "--out", str(out))
    assert code == 0, (err, summary.get("aclgraph_check"))
    (graph,) = summary["graphs"]
    assert summary["mode"] == "reduce-overhead" and list(graph["stages"]) == ["dynamo", "aten", "functional", "aclgraph"]
    assert _passes(graph) == TORCHAIR_PASSES and graph["ascend_ir"] is None
    assert summary["aclgraph_check"]["ok"] and summary["aclgraph_check"]["compared"] > 0
    files = sorted(p.name for p in (out / "graph_0").iterdir())
    assert files == ["aclgraph.json", "aclgraph.py", "aclgraph_capture.py", "aten.json", "aten.py", "dynamo.json", "dynamo.py", "functional.json", "functional.py"]
    code_text = (out / "graph_0" / "aclgraph.py").read_text()
    for op in ("aten.relu_.default", "aten.add_.Tensor", "aten.mul_.Tensor", "aten.sigmoid_.default"):
        assert op in code_text
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["mode"] == "reduce-overhead" and manifest["graphs"][0]["passes"]["aclgraph"][0]["pass"] == "replace_stream_event_pass"


def test_stages_of_the_other_mode_are_refused_before_anything_runs(tmp_path):
    code, _, err = run_cli("trace", str(EXAMPLES / "inplace_ops.py"), "--mode", "reduce-overhead", "--stages", "pre_ge,ascend_ir", "--out", str(tmp_path / "o"))
    assert code == 2 and "is not part of reduce-overhead mode" in err and not (tmp_path / "o").exists()
    code, _, err = run_cli("trace", str(EXAMPLES / "inplace_ops.py"), "--mode", "fast")
    assert code == 2 and "--mode 'fast'" in err


@pytest.mark.parametrize("mode", ["reduce-overhead", "npugraph_ex"])
def test_a_users_pattern_fuses_where_it_should_in_both_modes(mode):
    code, summary, err = trace(str(ROOT / "examples" / "user_passes.py"), "--plugin", str(PLUGIN), "--mode", mode)
    assert code == 0, err
    (graph,) = summary["graphs"]
    assert graph["patterns"] == [{"pattern": "swish_by_hand (swish_fusion.py:31)", "matches": 1}]
    assert [p["origin"] for p in graph["passes"]["aclgraph"] if p["pass"] in ("apply_pattern_passes", "post_grad_custom_post_pass")] == ["user", "user"]
    assert summary["user_pass_check"]["ok"] and summary["user_pass_check"]["compared"] > 0


def test_the_pattern_fuses_in_max_autotune_mode_too_and_converts():
    code, summary, err = trace(str(ROOT / "examples" / "user_passes.py"), "--plugin", str(PLUGIN))
    assert code == 0, err
    (graph,) = summary["graphs"]
    assert graph["patterns"][0]["matches"] == 1 and "Swish" in graph["ascend_ir"]["types"] and "Sigmoid" not in graph["ascend_ir"]["types"]
    assert summary["ir_check"]["ok"]


@pytest.mark.parametrize("mode", ["max-autotune", "reduce-overhead"])
def test_a_wrong_user_pass_makes_the_trace_partial_and_is_named(write_model, mode):
    code, summary, _ = trace(str(write_model(WRONG_PASS)), "--mode", mode)
    assert code == 1 and summary["status"] == "partial"
    (mismatch,) = summary["user_pass_check"]["mismatches"]
    assert mismatch.startswith("graph 0: the user's post_grad_custom_post_pass (sub_for_add (model.py:5)) changes the results: output 0")


def test_npugraph_ex_mode_runs_its_own_passes(write_model):
    code, summary, err = trace(str(EXAMPLES / "my_inplace.py"), "--mode", "npugraph_ex")
    assert code == 0, err
    passes = _passes(summary["graphs"][0])
    assert passes[passes.index("decompose_auto_functionalized") + 1] == "eliminate_self_copy" and "replace_deterministic_nodes" in passes


NPU_ONLY_KERNEL = """
import torch
import torch_npu


@torch.library.custom_op("fxlab_trace_npu_kernel::add_into", mutates_args=("out",), device_types="npu")
def add_into(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor) -> None:
    out.copy_(x + y)


@add_into.register_fake
def _(x, y, out):
    return None


class M(torch.nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        torch.ops.fxlab_trace_npu_kernel.add_into(x, y, out)
        return out * 2


model = M()
example_inputs = (torch.randn(2, 4), torch.randn(2, 4))
"""


@pytest.mark.parametrize("mode", ["reduce-overhead", "max-autotune"])
def test_a_custom_op_whose_kernel_is_for_the_npu_alone_runs_and_checks(write_model, mode):
    """``device_types="npu"``: torch knows no npu device type, and here npu tensors are
    CPU tensors; the kernel serves them, and the checks run it."""
    code, summary, err = trace(str(write_model(NPU_ONLY_KERNEL)), "--mode", mode)
    assert code == 0 and summary["check"]["ok"], err
    # max-autotune: the op is auto-converted without an Ascend C prototype, so its GE op is assumed
    assert summary["status"] == ("ok" if mode == "reduce-overhead" else "unverified")


STREAM_IN_FORWARD = """
import torch
import torch_npu


class Side(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.side = torch.npu.Stream()

    def forward(self, x):
        h = self.lin(x)
        with torch.npu.stream(self.side):
            g = torch.sigmoid(h)
        return h * g


torch.manual_seed(0)
model = Side().eval()
example_inputs = (torch.randn(2, 8),)
"""


def test_a_forward_using_torch_npu_streams_is_compared_with_torchairs_own_backend(torchair_path, write_model):
    """The model's own ``torch.npu.stream(...)`` runs again inside TorchAir's reference run."""
    where = ["--torchair-path", str(torchair_path)] if torchair_path is not None else []
    code, summary, err = trace(str(write_model(STREAM_IN_FORWARD)), "--mode", "reduce-overhead", *where)
    assert code == 0 and summary["status"] == "ok", err
    assert summary["aclgraph_check"]["ok"] and "graph 0: the same graph and capture code as TorchAir's own backend" in summary["aclgraph_check"]["verdict"]


@pytest.mark.parametrize(
    "model,extra",
    [("ATEN_MIX", []), ("my_inplace", []), ("llama_decoder", []), ("user_passes", ["--plugin", str(PLUGIN)])],
    ids=["aten-mix", "custom-inplace-on-a-view", "decoder-kv-cache", "user-pattern-and-pass"],
)
def test_torchairs_own_passes_give_the_same_graph(torchair_path, write_model, model, extra):
    path = str(write_model(ATEN_MIX)) if model == "ATEN_MIX" else str(EXAMPLES / f"{model}.py")
    where = ["--torchair-path", str(torchair_path)] if torchair_path is not None else []
    code, summary, err = trace(path, "--mode", "reduce-overhead", "--converter", "torchair", *where, *extra)
    assert code == 0, err
    for graph in summary["graphs"]:
        assert graph["torchair_aclgraph"]["same"] is True, graph["torchair_aclgraph"]["differences"]
    assert summary["aclgraph_check"]["ok"]
