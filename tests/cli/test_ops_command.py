"""``fxlab ops list`` / ``fxlab ops check``: output, JSON, exit codes."""
from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from fxlab.cli.main import main

DATA = Path(__file__).parents[1] / "data"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(argv)
    captured = capsys.readouterr()
    return int(info.value.code or 0), captured.out, captured.err


def test_ops_list_json_shows_seed_ops_and_the_active_plugin_converter(capsys, monkeypatch) -> None:
    monkeypatch.setenv("FXLAB_WIDTH", "200")
    code, out, err = _run(["ops", "list", "--json", "--plugin", str(DATA / "seed_plugins" / "my_inplace_plugin.py")], capsys)
    assert code == 0
    rows = {row["op"]: row for row in json.loads(out)}
    assert set(rows) >= {"npu::npu_add_custom", "npu::my_op", "npu::my_inplace"}
    inplace = rows["npu::my_inplace"]
    assert inplace["converter"]["origin"] == "torchair" and inplace["converter"]["where"].endswith("my_inplace_plugin.py:13")
    from fxlab.ops.seeds import convert_my_inplace

    assert inplace["converter"]["replaces"].endswith(f"seeds.py:{inspect.getsourcelines(convert_my_inplace)[1]}")
    assert inplace["fake"].endswith("my_inplace_plugin.py:5") and "CPU" in inplace["kernels"]
    assert rows["npu::my_op"]["converter"]["origin"] == "fxlab" and rows["npu::my_op"]["prototype"]["op"] == "MyOp"
    assert "torchair is not installed: `import torchair` gets fxlab's TorchAir-compatible layer" in err


def test_ops_check_seed_op_passes(capsys, monkeypatch) -> None:
    monkeypatch.setenv("FXLAB_WIDTH", "200")
    code, out, _ = _run(["ops", "check", "npu::my_inplace"], capsys)
    assert code == 0
    assert "PASS prototype outputs: ref output(s) x then 1 own output(s): ['x', 'z']" in out
    assert out.strip().endswith("all checks passed")


def test_ops_check_failure_exits_1_with_fixes_in_json(capsys) -> None:
    code, out, _ = _run(["ops", "check", "my_inplace", "--prototype", str(DATA / "prototypes" / "bad_noref.json"), "--json"], capsys)
    assert code == 1
    report = json.loads(out)
    failed = [c for c in report["checks"] if c["status"] == "fail"]
    assert report["ok"] is False
    assert [c["name"] for c in failed] == ["prototype outputs"]
    assert "no ref output named x" in failed[0]["detail"] and failed[0]["fix"]


def test_ops_check_unknown_op_exits_2_with_suggestion(capsys) -> None:
    code, _, err = _run(["ops", "check", "npu::my_opp"], capsys)
    assert code == 2
    assert "no custom op named 'npu::my_opp'" in err and "npu::my_op" in err


def test_ops_check_of_a_torch_npu_operator_says_it_is_torch_npus_own(capsys) -> None:
    for name in ("npu::npu_rms_norm", "torch.ops.npu.npu_rms_norm.default", "npu_rms_norm"):
        code, _, err = _run(["ops", "check", name], capsys)
        said = " ".join(err.split())
        assert code == 2 and f"{name!r} is one of torch_npu's own operators" in said and "not a custom op" in said, name
        assert "Did you mean" not in said


REFUSED_MODEL = """
import torch

class M(torch.nn.Module):
    def forward(self, x):
        return torch.clamp_max(x.unsqueeze(1).squeeze((1,)), 0.5) + 1

model = M()
example_inputs = (torch.randn(3, 4),)
"""


def rows_of(data: dict) -> dict:
    return {row["op"]: row for row in data["ops"]}


def test_ops_coverage_counts_torchairs_converters_and_fxlabs_agreement(capsys) -> None:
    code, out, _ = _run(["ops", "coverage", "--json"], capsys)
    data = json.loads(out)
    summary = data["summary"]
    # 327 ATen/prims converters do more than raise; 2 of them fail when run on Atlas A2/A3
    # (arch35-only batch norm). torch_npu's operators and the collectives count alike; 5
    # torch_npu converters fail when run (4 return fewer outputs than the schema, and
    # gating top-k softmax v2 passes keywords its builder does not take).
    aten = [r for r in data["ops"] if r["op"].split(".")[0] in ("aten", "prims")]
    assert code == 0 and len(aten) == 1911 and sum(r["torchair"] == "converts" for r in aten) == 325
    assert summary["torchair_converts"] == 479 and summary["ops"] == 2082
    assert rows_of(data)["npu.npu_grouped_matmul.default"]["torchair"] == "converts"
    assert rows_of(data)["npu.npu_moe_gating_top_k_softmax_v2.default"]["torchair"] == "refuses"
    assert rows_of(data)["npu.npu_rms_norm.default"] == {**rows_of(data)["npu.npu_rms_norm.default"], "fxlab": "converts", "agrees": True}
    assert rows_of(data)["_c10d_functional.all_reduce.default"]["torchair"] == "converts"
    assert rows_of(data)["aten._native_batch_norm_legit.no_stats"]["torchair"] == "refuses"
    rows = {row["op"]: row for row in data["ops"]}
    assert rows["aten.add.Tensor"] == {**rows["aten.add.Tensor"], "torchair": "converts", "fxlab": "converts", "agrees": True}
    assert rows["aten.roll.default"]["torchair"] == "refuses" and rows["aten.roll.default"]["fxlab"] == "refuses"
    assert summary["fxlab_converts_of_torchair_converts"] == sum(r["torchair"] == r["fxlab"] == "converts" for r in data["ops"])


def test_ops_coverage_of_a_model_lists_its_ops_and_fails_on_refused_ones(capsys, write_model, monkeypatch) -> None:
    monkeypatch.setenv("FXLAB_WIDTH", "250")
    code, out, _ = _run(["ops", "coverage", str(write_model(REFUSED_MODEL))], capsys)
    assert code == 1
    lines = [line for line in out.splitlines() if line.startswith("│ aten.")]
    assert [[cell.strip() for cell in line.split("│")[1:6]] for line in lines] == [
        ["aten.add.Tensor", "1", "converts", "converts", "yes"],
        ["aten.clamp_max.default", "1", "refuses", "refuses", "yes"],
        ["aten.squeeze.dims", "1", "refuses", "refuses (own converter: --convert-refused)", "yes"],
        ["aten.unsqueeze.default", "1", "converts", "converts", "yes"],
    ]
    assert "4 ops: TorchAir converts 2, refuses 2" in out


LEFT_OUT_MODEL = """
import torch
lib = torch.library.Library("acme_cov", "DEF")
lib.define("scale(Tensor x) -> Tensor")
lib.impl("scale", lambda x: x * 3, "CPU")

def model(x):
    return torch.ops.acme_cov.scale(x.sin()).cos()

example_inputs = (torch.randn(4),)
"""


def test_ops_coverage_of_a_model_names_a_custom_op_a_graph_break_left_out(capsys, write_model, monkeypatch) -> None:
    monkeypatch.setenv("FXLAB_WIDTH", "400")
    code, out, err = _run(["ops", "coverage", str(write_model(LEFT_OUT_MODEL))], capsys)
    assert code == 0 and "│ aten.sin.default" in out and "│ aten.cos.default" in out
    assert (
        "note: custom op acme_cov::scale ran outside the graphs: Dynamo broke the graph around it (it has no fake/Meta "
        "function), so no converter is asked for it. `fxlab ops check acme_cov::scale` says what it lacks." in " ".join(err.split())
    )


NPU_DEFINE_COLLECTIVES = ("all_to_all_single_npu", "broadcast", "_send", "_recv")


def test_ops_coverage_counts_the_converters_of_operators_that_exist_only_while_defined(capsys) -> None:
    code, out, _ = _run(["ops", "coverage", "--json"], capsys)
    rows = rows_of(json.loads(out))
    # TorchAir's npu_define collectives exist only while a trace defines them; fxlab converts them then.
    for name in NPU_DEFINE_COLLECTIVES:
        row = rows[f"npu_define.{name}.default"]
        assert (row["torchair"], row["fxlab"], row["agrees"]) == ("converts", "converts", True), row


def test_ops_coverage_of_a_multi_rank_model_reads_it_as_one_rank(capsys, monkeypatch) -> None:
    import os

    import torch.distributed as dist

    from tests.conftest import EXAMPLES

    monkeypatch.setenv("FXLAB_WIDTH", "250")
    code, out, err = _run(["ops", "coverage", str(EXAMPLES / "distributed" / "moe_expert_parallel.py"), "--json"], capsys)
    assert code == 0, err
    rows = rows_of(json.loads(out))
    assert rows["npu_define.all_to_all_single_npu.default"] == {
        **rows["npu_define.all_to_all_single_npu.default"], "count": 3, "torchair": "converts", "fxlab": "converts", "agrees": True
    }
    assert "uses torch.distributed: its ops were read from rank 0 of a world of one" in " ".join(err.split())
    assert not dist.is_initialized() and "RANK" not in os.environ and "MASTER_PORT" not in os.environ  # all put back
