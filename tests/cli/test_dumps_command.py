"""``fxlab dumps`` and ``fxlab diff TRACE NPU_DUMP`` as a user runs them."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.cli_runner import run_cli, run_main
from tests.conftest import EXAMPLES, ROOT
from tests.npu_dumps.ge_dump_maker import rename_op
from tests.npu_dumps.made_dumps import GOLDEN_TRACE, line, made_dumps


@pytest.fixture(autouse=True)
def fresh_console():
    """Each command's console with the width it asks for (the console is made once per process)."""
    from fxlab.cli import console

    console.out.cache_clear()
    yield
    console.out.cache_clear()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return made_dumps(tmp_path_factory.mktemp("ge"))


def test_console_view_lists_what_ge_did_with_lines(folder):
    code, out, _ = run_cli("dumps", str(folder), "--trace", str(GOLDEN_TRACE), width=400)
    assert code == 0
    assert "graph 1 (ge_proto): 4 phase(s) in order" in out
    assert "PreRunAfterOptimizeOriginalGraph (25 ops): 2 fused, 0 inserted, 2 removed" in out
    row = next(r for r in out.splitlines() if r.startswith("│ sk_norm_start_Mul_3Cast_1_end_Add_3"))
    assert re.split(r"\s*│\s*", row.strip("│ ")) == [
        "sk_norm_start_Mul_3Cast_1_end_Add_3",
        "SuperKernel",
        "SuperKernel of Mul_3Cast_1, Add_3",
        "add_1, mul_1",
        f"{line(39)}, {line(40)}",
    ]
    assert "graph 0 scope mlp segment 2 (4 op(s)): one SuperKernel, as predicted" in out
    assert "trans_TransData_1 has core limit (none), Swish 8|16" in out


def test_json_has_the_documented_shape_and_the_mapping(folder):
    code, out, _ = run_cli("dumps", str(folder), "--trace", str(GOLDEN_TRACE), "--json")
    assert code == 0
    data = json.loads(out)
    last = next(g for g in data["graphs"] if g["phase"] == "AfterSkGraph")
    assert (last["file"], last["format"], last["graph"]) == (str(folder / "ge_proto_00000007_graph_1_AfterSkGraph.txt"), "ge_proto", 1)
    sk = next(op for op in last["ops"] if op["name"] == "sk_mlp_split_7_13_start_Transpose_end_trans_TransData_1")
    assert {k: sk[k] for k in ("type", "originals", "passes", "fusion_scope", "inserted", "fx_nodes", "source")} == {
        "type": "SuperKernel",
        "originals": ["Transpose", "MatMulV2", "Mul", "Add"],
        "passes": [],
        "fusion_scope": None,
        "inserted": False,
        "fx_nodes": ["addmm"],
        "source": [line(28)],
    }
    assert [v["as_predicted"] for v in data["super_kernels"]] == [False, True, True]


def test_out_and_html_write_a_page_with_ge_phases_beside_the_trace(folder, tmp_path):
    code, _, err = run_cli(
        "dumps", str(folder), "--trace", str(GOLDEN_TRACE), "--out", str(tmp_path / "o"), "--html", str(tmp_path / "p.html")
    )
    assert code == 0 and "written" in err
    assert json.loads((tmp_path / "o" / "dumps.json").read_text())["graphs"]
    page = (tmp_path / "p.html").read_text()
    assert page == (tmp_path / "o" / "dumps.html").read_text()
    data = json.loads(re.search(r'<script type="application/json" id="fxlab-data">(.*?)</script>', page, re.S).group(1))
    stages = [s["name"] for s in data["graphs"][0]["stages"]]
    assert stages[:5] == ["dynamo", "aten", "functional", "pre_ge", "ascend_ir"]
    assert stages[5:] == ["ge:PreRunBegin", "ge:PreRunAfterOptimizeOriginalGraph", "ge:PreRunAfterOptimizeSubgraph", "ge:AfterSkGraph"]
    assert ["ascend_ir", "Swish", "ge:AfterSkGraph", "sk_mlp_split_9_11_start_Swish_end_Swish"] in data["graphs"][0]["links"]


def test_a_cut_short_dump_is_exit_2_with_file_and_line(folder, tmp_path):
    text = (folder / "ge_proto_00000007_graph_1_AfterSkGraph.txt").read_text()
    cut = tmp_path / "ge_proto_00000007_graph_1_AfterSkGraph.txt"
    cut.write_text(text[: len(text) // 2])
    code, out, err = run_main("dumps", str(cut))
    assert code == 2 and out == ""
    assert err.startswith(f"error: {cut}, line ") and "Traceback" not in err


def test_hostile_op_names_are_shown_as_text(tmp_path):
    name = "[/]op[link=http://x]\u202eevil"
    text = f'graph {{\n  name: "g"\n  op {{\n    name: "{name}"\n    type: "Add"\n    attr {{\n      key: "_datadump_original_op_names"\n      value {{\n        list {{\n          val_type: VT_LIST_STRING\n        }}\n      }}\n    }}\n  }}\n}}\n'
    path = tmp_path / "ge_proto_00000001_graph_1_Build.txt"
    path.write_text(text)
    code, out, err = run_main("dumps", str(path), "--html", str(tmp_path / "h.html"))
    assert code == 0, err
    assert "[/]op[link=http://x]\\u202eevil" in out and "\u202e" not in out
    page = (tmp_path / "h.html").read_text()
    assert "\u202e" not in page and "<code>[/]op[link=http://x]\\u202eevil</code>" in page


def test_a_fusion_result_json_with_no_pass_alone_says_it_was_read(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "fusion_result.json").write_text("[]\n")
    code, out, err = run_main("dumps", str(run))
    assert (code, out) == (2, "")
    assert " ".join(err.split()) == (
        f"error: {run / 'fusion_result.json'} was read and records no fusion pass (GE's FE writes there, when the process "
        "exits, how often each graph and UB fusion pass matched: this run recorded none), and no GE graph dump was found in "
        f"{run}: fxlab reads GE's ge_proto_*.txt / ge_onnx_*.pbtxt phase dumps (DUMP_GE_GRAPH), OM models as JSON "
        "(atc --mode=1), TorchAir's graph dumps (dynamo_*.txt|pbtxt|py) and fusion_result.json. To see what GE did, set "
        "DUMP_GE_GRAPH=2 and DUMP_GRAPH_PATH=DIR on the NPU machine, run the model again and copy DIR's ge_proto_*.txt files."
    )


def test_an_op_ge_only_renamed_is_shown_renamed_not_fused(tmp_path):
    """One TorchAir op as one GE op under another name: renamed, with its FX node and line."""
    folder = made_dumps(tmp_path / "ge")
    rename_op(folder / "ge_proto_00000007_graph_1_AfterSkGraph.txt", "Add_2", "Add_2_GE")
    code, out, _ = run_cli("dumps", str(folder), "--trace", str(GOLDEN_TRACE), width=400)
    assert code == 0
    lines = out.splitlines()
    at = lines.index("  AfterSkGraph (22 ops): 4 fused, 1 renamed, 0 inserted, 0 removed")
    assert lines[at + 2] == "      renamed: Add_2_GE (from Add_2)"
    row = next(r for r in lines if r.startswith("│ Add_2_GE "))
    assert re.split(r"\s*│\s*", row.strip("│ ")) == ["Add_2_GE", "Add", "renamed from Add_2", "add", line(37)]
    code, out, _ = run_cli("dumps", str(folder), "--trace", str(GOLDEN_TRACE), "--json", "--html", str(tmp_path / "p.html"))
    assert code == 0
    (step,) = [s for s in json.loads(out)["phases"] if s["to"] == "AfterSkGraph"]
    assert [f["op"] for f in step["fused"]] == [
        "sk_mlp_split_7_13_start_Transpose_end_trans_TransData_1",
        "sk_mlp_split_9_11_start_Swish_end_Swish",
        "sk_mlp_split_14_20_start_Transpose_1_end_trans_TransData_3",
        "sk_norm_start_Mul_3Cast_1_end_Add_3",
    ]
    assert step["renamed"] == [{"op": "Add_2_GE", "original": "Add_2"}]
    page = (tmp_path / "p.html").read_text()
    data = json.loads(re.search(r'<script type="application/json" id="fxlab-data">(.*?)</script>', page, re.S).group(1))
    stage = next(s for s in data["graphs"][0]["stages"] if s["name"] == "ge:AfterSkGraph")
    kind = data["node_fields"].index("kind")
    assert {n[0]: n[kind] for n in stage["nodes"] if n[0] in ("Add_2_GE", "sk_mlp_split_9_11_start_Swish_end_Swish")} == {
        "Add_2_GE": "renamed",
        "sk_mlp_split_9_11_start_Swish_end_Swish": "fused",
    }


def test_diff_trace_against_npu_dump(folder):
    code, out, _ = run_cli("diff", str(GOLDEN_TRACE), str(folder), width=300)
    assert code == 1  # as diff(1): differences
    assert "graph 0 · ascend_ir → graph 1 AfterSkGraph: 4 fused, 0 renamed, 0 changed, 8 inserted, 9 removed" in out
    assert "~ fused    Transpose, MatMulV2, Mul, Add → sk_mlp_split_7_13_start_Transpose_end_trans_TransData_1" in out
    code, out, _ = run_cli("diff", str(GOLDEN_TRACE), str(folder), "--json")
    assert json.loads(out)["graphs"][0]["counts"] == {"same": 10, "fused": 4, "renamed": 0, "changed": 0, "inserted": 8, "removed": 9}


# -- the docs show what the command prints ------------------------------------------------------
DOCS = ROOT / "docs" / "dumps.md"
GOLDEN_HOME = Path("/tmp/fxlab-golden")  # where the golden trace's sources say the example was


def _doc_block(command: str, doc: Path = DOCS) -> list[str]:
    text = doc.read_text(encoding="utf-8")
    start = text.index(f"$ {command}\n") + len(command) + 3
    return text[start : text.index("```", start)].rstrip("\n").split("\n")


@pytest.fixture
def docs_home(monkeypatch):
    """The golden trace's example folder as the working directory, the dumps in npu_run/."""
    GOLDEN_HOME.mkdir(parents=True, exist_ok=True)
    with open(f"{GOLDEN_HOME}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        shutil.rmtree(GOLDEN_HOME / "npu_run", ignore_errors=True)
        made_dumps(GOLDEN_HOME / "npu_run")
        monkeypatch.chdir(GOLDEN_HOME)
        yield
        shutil.rmtree(GOLDEN_HOME / "npu_run", ignore_errors=True)


def _run(*args: str, width: int) -> tuple[int, str]:
    """``fxlab ARGS`` in its own process, as a user runs it (the console's width is fixed per process)."""
    env = dict(os.environ, FXLAB_WIDTH=str(width), NO_COLOR="1", PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "fxlab", *args], capture_output=True, text=True, env=env, timeout=300)
    return done.returncode, done.stdout


def test_docs_show_the_dumps_command_as_it_prints(docs_home):
    code, out = _run("dumps", "npu_run", "--trace", str(GOLDEN_TRACE), width=120)
    assert code == 0
    assert out.rstrip("\n").split("\n") == _doc_block("fxlab dumps npu_run --trace trace_sk")
    shown = [ln for ln in _doc_block("fxlab dumps npu_run --trace trace_sk", ROOT / "README.md") if ln != "..."]
    lines = out.split("\n")
    positions = [lines.index(ln) for ln in shown]  # the README shows some of the lines, in order
    assert positions == sorted(positions)


def test_docs_show_the_npu_diff_as_it_prints(docs_home):
    code, out = _run("diff", str(GOLDEN_TRACE), "npu_run", width=200)
    assert code == 1
    lines = out.split("\n")
    shown = [ln for ln in _doc_block("fxlab diff trace_sk npu_run") if ln.strip() != "..."]
    positions = [lines.index(ln) for ln in shown]
    assert positions == sorted(positions)


def test_phase_picks_the_table_and_an_unknown_phase_is_an_error(folder):
    code, out, _ = run_cli("dumps", str(folder), "--phase", "PreRunAfterOptimizeOriginalGraph", "--all-ops", width=300)
    assert code == 0
    assert "PreRunAfterOptimizeOriginalGraph · graph_1" in out
    assert re.search(r"│ MatMulV2 +│ MatMulV2 +│ fused from MatMulV2, Mul, Add; by MatMulBiasAddFusionPass", out)
    assert re.search(r"│ Mul_1 +│ Mul +│ +│ mul ", out)  # --all-ops: an op GE left alone, its FX node from TorchAir's py dump
    code, _, err = run_cli("dumps", str(folder), "--phase", "Nope")
    assert code == 2 and "--phase 'Nope' is in none of the dumps read: their phases are PreRunBegin, " in err


def test_a_trace_without_the_ascend_ir_stage_says_it_maps_nothing(folder, tmp_path, write_model):
    model = write_model("import torch\nmodel = torch.nn.Linear(4, 2)\nexample_inputs = (torch.randn(3, 4),)\n")
    code, _, _ = run_cli("trace", str(model), "--stages", "dynamo,functional", "--out", str(tmp_path / "t"), "--summary")
    assert code == 0
    code, out, _ = run_cli("dumps", str(folder), "--trace", str(tmp_path / "t"), "--json")
    assert code == 0
    assert f"the trace in {tmp_path / 't'} has no ascend_ir stage" in " ".join(json.loads(out)["notes"])


def test_an_output_that_cannot_be_written_leaves_no_half_of_the_outputs(folder, tmp_path):
    (tmp_path / "o" / "dumps.html").mkdir(parents=True)
    code, _, err = run_cli("dumps", str(folder), "--out", str(tmp_path / "o"))
    assert code == 2 and "is a folder, not a file" in " ".join(err.split())
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["dumps.html"]  # no dumps.json written before the failure


def test_diff_of_a_trace_and_dumps_says_what_is_wrong_with_the_pair(tmp_path):
    """Dumps given first, and a trace saved without the Ascend IR, are said as such."""
    from tests.npu_dumps.made_dumps import GOLDEN_TRACE, made_dumps

    dumps = made_dumps(tmp_path / "ge")
    code, _, err = run_cli("diff", str(dumps), str(GOLDEN_TRACE))
    assert code == 2 and "holds NPU dumps and" in err and "give the trace first (fxlab diff TRACE NPU_DUMP)" in " ".join(err.split())
    functional_only = tmp_path / "functional_only"
    code, _, err = run_cli("trace", str(EXAMPLES / "superkernel_scopes.py"), "--stages", "functional", "--out", str(functional_only))
    assert code == 0, err
    code, _, err = run_cli("diff", str(functional_only), str(dumps))
    assert code == 2 and "holds no Ascend IR (its stages: functional)" in " ".join(err.split())


def test_a_second_trace_is_refused_not_one_of_them_taken_silently(folder, tmp_path):
    code, _, err = run_cli("dumps", str(folder), "--trace", str(GOLDEN_TRACE), "--trace", str(tmp_path), width=400)
    assert code == 2 and "--trace is given 2 times" in err and "Give the one trace folder" in err
