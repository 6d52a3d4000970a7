"""On an NPU machine a program run turns on GE's phase dumps into the run folder and
collects what GE and TorchAir wrote, so ``fxlab dumps RUN/npu_dumps --trace RUN/trace_0``
reads it. No NPU is here: the settings are checked, and the program itself plays GE's
part, writing GE-named dumps (``tests/npu_dumps/ge_dump_maker``) where GE would."""

from __future__ import annotations

import json
import os
import time

from fxlab.cli.run_dumps import GE_PATH, NpuDumps
from tests.cli.cli_runner import run_cli, run_main
from tests.conftest import EXAMPLES, ROOT


def test_ges_dumps_go_into_the_process_folder_unless_the_program_chose_its_own(tmp_path):
    dumps = NpuDumps(tmp_path / ".scratch")
    assert dumps.environment({}) == {"DUMP_GE_GRAPH": "2", "DUMP_GRAPH_LEVEL": "2", GE_PATH: str(tmp_path / ".scratch" / "ge")}
    own = NpuDumps(tmp_path / ".scratch2")
    assert own.environment({"DUMP_GE_GRAPH": "1", GE_PATH: str(tmp_path / "mine")}) == {"DUMP_GRAPH_LEVEL": "2"}
    assert own.chosen == [tmp_path / "mine"] and own.torchair_folder == tmp_path / ".scratch2" / "torchair"


def test_only_dumps_the_program_run_wrote_are_collected(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    old = mine / "ge_proto_00000001_graph_1_PreRunBegin.txt"
    old.write_text("graph {}\n")
    os.utime(old, (time.time() - 3600, time.time() - 3600))  # from an earlier run
    dumps = NpuDumps(tmp_path / ".scratch")
    dumps.environment({GE_PATH: str(mine)})
    (mine / "ge_onnx_00000002_graph_1_PreRunBegin.pbtxt").write_text("graph {}\n")
    (mine / "notes.txt").write_text("not a dump\n")
    (tmp_path / ".scratch" / "torchair").mkdir(parents=True)
    (tmp_path / ".scratch" / "torchair" / "dynamo_optimized_graph_0_rank_0_pid_9.pbtxt").write_text("")
    (tmp_path / ".scratch" / "fusion_result.json").write_text("{}")
    moved = dumps.collect(tmp_path / "run")
    assert sorted(str(p.relative_to(tmp_path / "run")) for p in moved) == [
        "npu_dumps/collected/ge_onnx_00000002_graph_1_PreRunBegin.pbtxt",
        "npu_dumps/fusion_result.json",
        "npu_dumps/torchair/dynamo_optimized_graph_0_rank_0_pid_9.pbtxt",
    ]
    assert not (tmp_path / ".scratch").exists() and old.exists()


PLAYS_GE = f"""
import os
import runpy
import sys
from pathlib import Path

import torch

sys.path.insert(0, {str(ROOT)!r})
from tests.npu_dumps.ge_dump_maker import make_dumps

example = runpy.run_path({str(EXAMPLES / "superkernel_scopes.py")!r})
model = torch.compile(example["model"], backend=example["npu_backend"])
with torch.no_grad():
    model(*example["example_inputs"])
# GE's part on an NPU machine: the phase dumps of the graph TorchAir handed it
make_dumps(Path(os.environ["FXLAB_TRACE_STAGED"]) / "trace_0", Path(os.environ["DUMP_GRAPH_PATH"]))
print(os.environ["DUMP_GE_GRAPH"], os.environ["DUMP_GRAPH_LEVEL"])
"""


def test_a_run_on_an_npu_machine_is_read_by_fxlab_dumps(tmp_path, monkeypatch):
    import fxlab.cli.run_hook as run_hook

    monkeypatch.setattr(run_hook, "on_npu_machine", lambda: True)
    script = tmp_path / "ge.py"
    script.write_text(PLAYS_GE)
    out = tmp_path / "run"
    code, stdout, stderr = run_main("run", "--out", str(out), "--", "python", str(script))
    assert code == 0 and stdout == "2 2\n", stderr
    written = sorted(p.name for p in (out / "npu_dumps" / "ge").iterdir())
    assert written[:3] == [
        "dynamo_optimized_graph_1_rank_0_pid_1.py",  # TorchAir's "py" dump, as the maker writes it beside GE's
        "ge_proto_00000000_graph_1_PreRunBegin.txt",
        "ge_proto_00000001_graph_1_PreRunAfterOptimizeOriginalGraph.txt",
    ]
    code, text, _ = run_cli("dumps", str(out / "npu_dumps"), "--trace", str(out / "trace_0"), "--json")
    assert code == 0
    last = next(g for g in json.loads(text)["graphs"] if g["phase"] == "AfterSkGraph")
    sk = next(op for op in last["ops"] if op["name"] == "sk_mlp_split_7_13_start_Transpose_end_trans_TransData_1")
    assert sk["fx_nodes"] == ["addmm"] and sk["source"] == [f"{EXAMPLES / 'superkernel_scopes.py'}:28"]
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # fxlab's own dump folder is gone
