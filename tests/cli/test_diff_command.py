"""``fxlab diff`` end to end: stage diffs of the examples, two saved runs, fxlab's Ascend
IR against TorchAir's, and every bad input (exit code 2, before anything is captured)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fxlab.capture.serialize import failed_manifest_text
from fxlab.cli.diff_command import stage_pair
from fxlab.cli.main import main
from tests.conftest import EXAMPLES

INPLACE = str(EXAMPLES / "inplace_ops.py")
MY_INPLACE = str(EXAMPLES / "my_inplace.py")
# TorchAir itself warns when its lazily imported NPU custom-op converters need torch_npu ops.
pytestmark = pytest.mark.filterwarnings("ignore:Failed to import torchair")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(argv))
    captured = capsys.readouterr()
    return info.value.code, captured.out, " ".join(captured.err.split())


def entries(graph: dict) -> list[tuple[str | None, str | None, list[str]]]:
    return [
        (e["left"] and e["left"]["name"], e["right"] and e["right"]["name"], [c["code"] for c in e["changes"]])
        for group in graph["diff"]["groups"]
        for e in group["entries"]
    ]


@pytest.fixture(scope="module")
def saved_runs(tmp_path_factory) -> tuple[Path, Path]:
    """The same model traced twice with ``fxlab trace --out``."""
    root = tmp_path_factory.mktemp("runs")
    for name in ("run_a", "run_b"):
        with pytest.raises(SystemExit) as info:
            main(["trace", INPLACE, "--out", str(root / name), "--summary"])
        assert info.value.code == 0
    return root / "run_a", root / "run_b"


def test_before_functionalize_as_json(capsys) -> None:
    code, out, _ = run(capsys, "diff", INPLACE, "--before-functionalize", "--json")
    data = json.loads(out)
    assert code == 1 and (data["left"], data["right"], data["identical"]) == ("aten", "functional", False)
    (graph,) = data["graphs"]
    assert graph["kind"] == "fx" and graph["graph"] == 0
    rewrites = [(l, r, c) for l, r, c in entries(graph) if c and c != ["inputs_changed"]]
    assert rewrites == [
        ("mul_", "mul", ["functionalized"]),
        (None, "view_2", ["added"]),
        (None, "view_3", ["added"]),
        ("copy_", "copy", ["functionalized", "inputs_changed"]),
        (None, "slice_scatter", ["added"]),
        (None, "copy__1", ["copy_epilogue_added"]),
        ("add_", "add", ["functionalized"]),
        (None, "copy_", ["copy_epilogue_added"]),
    ]
    assert graph["diff"]["groups"][1]["code"] == "h.mul_(2)  # in place on an intermediate"


def test_stage_pair_defaults_to_before_functionalize() -> None:
    assert stage_pair(False, None, None, None) == stage_pair(True, None, None, None) == ("aten", "functional")
    assert stage_pair(False, "ascend_ir:torchair", "ascend_ir", Path("x")) == ("ascend_ir:torchair", "ascend_ir")


def test_human_view_groups_by_source_line(capsys) -> None:
    code, out, _ = run(capsys, "diff", MY_INPLACE, "--from", "functional", "--to", "aclgraph")
    assert code == 1  # as diff(1): differences found
    # mul (h = x * 2) keeps its own line through the passes: unchanged (issue 38 item 9)
    assert "graph 0 · functional → aclgraph: 5 changed, 1 added, 0 removed, 3 same" in out
    headers = [line.strip().split("  ")[0] for line in out.splitlines() if line.startswith("  examples/")]
    assert headers == [f"examples/my_inplace.py:{n}" for n in (23, 24, 25, 26, 27)]
    assert "auto_functionalized_v2(npu.my_inplace.default)" in out
    assert out.count("auto_functionalized_v2 unwrapped: in-place npu.my_inplace.default again") == 3
    assert out.count("functional aten.add.Tensor became in-place aten.add_.Tensor") == 2


def test_two_saved_runs_have_no_differences(capsys, saved_runs) -> None:
    code, out, _ = run(capsys, "diff", *map(str, saved_runs), "--json")
    data = json.loads(out)
    assert code == 0 and data["identical"] is True and data["notes"] == []
    assert [(g["left_stage"], g["kind"]) for g in data["graphs"]] == [
        ("dynamo", "fx"), ("aten", "fx"), ("functional", "fx"), ("pre_ge", "fx"), ("ascend_ir", "ir"),
    ]
    code, out, _ = run(capsys, "diff", *map(str, saved_runs))
    assert code == 0 and "run_a → run_b: no differences" in out


def test_an_edited_saved_trace_shows_the_edit(capsys, saved_runs, tmp_path) -> None:
    import shutil

    edited = tmp_path / "edited"
    shutil.copytree(saved_runs[1], edited)
    stage_file = edited / "graph_0" / "functional.json"
    stage = json.loads(stage_file.read_text())
    mul = next(n for n in stage["nodes"] if n["name"] == "mul")
    mul["outputs"][0]["dtype"] = "float16"
    stage_file.write_text(json.dumps(stage))
    ir_file = edited / "graph_0" / "ascend_ir.json"
    ir = json.loads(ir_file.read_text())
    next(op for op in ir["ops"] if op["type"] == "ReduceSum")["attrs"]["keep_dims"] = True
    ir_file.write_text(json.dumps(ir))
    code, out, _ = run(capsys, "diff", str(saved_runs[0]), str(edited), "--json", "--graph", "0")
    data = json.loads(out)
    assert code == 1 and data["identical"] is False
    by_stage = {g["left_stage"]: g for g in data["graphs"]}
    assert [s for s, g in by_stage.items() if not g["identical"]] == ["functional", "ascend_ir"]
    changed = [(l, r, c) for l, r, c in entries(by_stage["functional"]) if c]
    assert changed == [("mul", "mul", ["outputs_changed"])]
    (reduce_sum,) = [op for node in by_stage["ascend_ir"]["diff"]["nodes"] for op in node["ops"] if op["kind"] != "same"]
    assert reduce_sum["attrs"] == {"keep_dims": {"left": False, "right": True}}
    code, out, _ = run(capsys, "diff", str(saved_runs[0]), str(edited))
    assert "graph 0 · functional: run_a → edited: 1 changed" in out
    assert "attr keep_dims: False → True" in out


SMALL_MODEL = """
import torch
import torch.nn.functional as F

class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 4)

    def forward(self, x):
        return F.softmax(self.proj(x), dim=-1)

model = Small()
example_inputs = (torch.randn(2, 8),)
"""


@pytest.mark.torchair
def test_builtin_ir_against_torchair(capsys, write_model) -> None:
    model = str(write_model(SMALL_MODEL))
    code, out, _ = run(capsys, "diff", model, "--from", "ascend_ir", "--to", "ascend_ir:torchair", "--json")
    data = json.loads(out)
    assert code == 0 and (data["left"], data["right"]) == ("ascend_ir", "ascend_ir:torchair")
    (graph,) = data["graphs"]
    nodes = {n["fx_node"]: n for n in graph["diff"]["nodes"]}
    assert nodes["_softmax"]["left_types"] == nodes["_softmax"]["right_types"] == ["SoftmaxV2"]
    # Both sides rebuild the transposed weight at its reader (TorchAir's view optimisation).
    assert "t" not in nodes and nodes["addmm"]["left_types"] == nodes["addmm"]["right_types"]
    assert "Transpose" in nodes["addmm"]["left_types"]
    notes = " ".join(data["notes"])
    assert "stood in" in notes and "GE compilation and fusion do not run" in notes

    code, out, _ = run(capsys, "diff", model, "--from", "ascend_ir:torchair", "--to", "ascend_ir")
    assert code == 0 and "graph 0 · ascend_ir:torchair → ascend_ir:" in out
    assert "(identical)" in out and "ascend_ir:torchair → ascend_ir: no differences" in out
    assert "note: GE compilation and fusion do not run" in " ".join(out.split())


NPU_OP_MODEL = """
import torch
import torch_npu


class Gated(torch.nn.Module):
    def forward(self, x):
        return torch_npu.npu_swiglu(x * 2.0, dim=-1)


model = Gated()
example_inputs = (torch.randn(4, 16),)
"""


@pytest.mark.torchair
def test_torch_npu_op_against_torchair(capsys, write_model) -> None:
    """The capture's torch_npu operators are still defined when TorchAir converts the
    graph: TorchAir's session is open for the capture as well."""
    model = str(write_model(NPU_OP_MODEL))
    code, out, err = run(capsys, "diff", model, "--from", "ascend_ir", "--to", "ascend_ir:torchair", "--json")
    assert code == 0, err
    (graph,) = json.loads(out)["graphs"]
    nodes = {n["fx_node"]: n for n in graph["diff"]["nodes"]}
    assert nodes["npu_swiglu"]["left_types"] == nodes["npu_swiglu"]["right_types"] == ["SwiGlu"]


def test_one_model_in_two_checkouts_diffs_clean(capsys, tmp_path) -> None:
    """Source files are compared relative to the model file: /a/model.py:21 and
    /b/model.py:21 are the same line."""
    runs = []
    for checkout in ("a", "b"):
        folder = tmp_path / checkout / "models"
        folder.mkdir(parents=True)
        (folder / "inplace_ops.py").write_text(Path(INPLACE).read_text())
        with pytest.raises(SystemExit) as info:
            main(["trace", str(folder / "inplace_ops.py"), "--out", str(tmp_path / f"run_{checkout}"), "--summary", "--stages", "aten,functional"])
        assert info.value.code == 0
        runs.append(str(tmp_path / f"run_{checkout}"))
    capsys.readouterr()
    code, out, err = run(capsys, "diff", *runs, "--json")
    data = json.loads(out)
    assert code == 0 and data["identical"] is True, err
    assert any("model differs" in note for note in data["notes"])  # the paths do differ: said once


# -- bad input: exit 2 with the cause and the fix ---------------------------------------------
@pytest.mark.parametrize(
    "argv, message",
    [
        (["--from", "nope", "--to", "aten"], "--from 'nope' is not a stage: the stages are dynamo, aten"),
        (["--from", "aten", "--to", "aten"], "--from and --to are both 'aten'"),
        (["--from", "aten", "--to", "ascend_ir"], "aten and ascend_ir cannot be compared"),
        (["--from", "aten"], "give both --from STAGE and --to STAGE"),
        (["--before-functionalize", "--to", "functional"], "give it or --from/--to, not both"),
        (["--torchair-path", "somewhere"], "--torchair-path is used only with ascend_ir:torchair"),
        (["--from", "ascend_ir", "--to", "ascend_ir:torchair", "--torchair-path", "no/such/dir"], "is not a TorchAir source tree"),
    ],
)
def test_bad_options_fail_before_capturing(capsys, argv: list[str], message: str) -> None:
    code, out, err = run(capsys, "diff", INPLACE, *argv)
    assert code == 2 and message in err and out == ""


def test_bad_saved_traces(capsys, tmp_path, saved_runs) -> None:
    empty, failed, corrupt = (tmp_path / name for name in ("empty", "failed", "corrupt"))
    for folder in (empty, failed, corrupt):
        folder.mkdir()
    (failed / "manifest.json").write_text(failed_manifest_text("m.py", "the model raised"))
    (corrupt / "manifest.json").write_text("{not json")
    whole = {"model": "m.py", "entry": "model", "fxlab_version": "0", "torch_version": "0"}  # all but what is hostile
    hostile = {"null": "null", "list": "[1]", "index": json.dumps({**whole, "graphs": [{"index": "../x", "stages": []}]}),
               "graphs": json.dumps({**whole, "graphs": 3}), "binary": b"\xff\xfe\x00"}
    for name, text in hostile.items():
        (tmp_path / name).mkdir()
        manifest = tmp_path / name / "manifest.json"
        manifest.write_bytes(text) if isinstance(text, bytes) else manifest.write_text(text)
    good = str(saved_runs[0])
    cases = [
        ([good, str(empty)], "holds neither a saved trace (manifest.json) nor GE dumps fxlab reads"),
        ([str(failed), good], "is from a failed run: the model raised"),
        ([good, str(corrupt)], "is not a readable saved trace (JSONDecodeError"),
        ([good, str(tmp_path / "null")], "manifest.json holds null, not the object `fxlab trace --out` writes"),
        ([str(tmp_path / "list"), good], "manifest.json holds a JSON array, not the object"),
        ([good, str(tmp_path / "index")], "graph index '../x' is not an integer"),
        ([good, str(tmp_path / "graphs")], "is not a readable saved trace (TypeError"),
        ([good, str(tmp_path / "binary")], "is not a readable saved trace (UnicodeDecodeError"),
        ([good, INPLACE], "is not a directory"),
        ([good, str(tmp_path / "absent")], "does not exist"),
        ([good], "is a directory: give a model file, or two saved trace directories"),
        ([good, good, good], "not 3 paths"),
        ([good, good, "--from", "aten", "--to", "functional"], "apply to a model file only"),
        ([good, good, "--graph", "1"], "--graph 1 does not exist: the trace has 1 graph(s), numbered 0 to 0"),
    ]
    for argv, message in cases:
        code, out, err = run(capsys, "diff", *argv)
        assert (code, message in err, out) == (2, True, ""), (argv, err)


def test_missing_model_and_missing_graph(capsys) -> None:
    code, _, err = run(capsys, "diff", str(EXAMPLES / "no_such_model.py"))
    assert code == 2 and "does not exist" in err
    code, out, err = run(capsys, "diff", INPLACE, "--graph", "4")
    assert code == 2 and "--graph 4 does not exist: the trace has 1 graph(s)" in err and out == ""


PLUGIN = """
import torch

lib = torch.library.Library("fxlab_difftest", "DEF")
lib.define("scale_(Tensor(a!) x, float factor) -> ()")


def scale_(x, factor):
    x.mul_(factor)


lib.impl("scale_", scale_, "CompositeExplicitAutograd")
torch.library.register_fake("fxlab_difftest::scale_", lambda x, factor: None, lib=lib)
"""

PLUGIN_MODEL = """
import torch

def build():
    def fn(x):
        y = x + 1
        torch.ops.fxlab_difftest.scale_(y, 2.0)
        return y
    return fn, (torch.randn(3),)
"""


def test_plugin_and_entry_reach_the_capture(capsys, write_model) -> None:
    plugin = write_model(PLUGIN, "scale_plugin.py")
    model = write_model(PLUGIN_MODEL, "scale_model.py")
    code, out, _ = run(capsys, "diff", str(model), "--plugin", str(plugin), "--entry", "build", "--json")
    assert code == 1
    (graph,) = json.loads(out)["graphs"]
    assert entries(graph) == [("add", "add", []), ("scale_", "auto_functionalized_v2", ["auto_functionalized"])]
