"""``fxlab trace --nproc N`` and ``torchrun ... fxlab trace`` end to end, as subprocesses
(the ranks are processes): the saved layout, the views, the checks on every rank, the
cross-rank check, the converters' graphs against TorchAir's, and the fake process group
of a single process. Every run has a timeout; fxlab stops its own ranks."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fxlab.capture.request import TraceRequest
from tests.cli.cli_runner import run_cli
from tests.conftest import EXAMPLES, ROOT

DATA = ROOT / "tests" / "data" / "distributed"
RUN_SECONDS = 600


def fxlab(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    import os

    return subprocess.run(
        [sys.executable, "-m", "fxlab", "trace", *args],
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
        cwd=ROOT,
        env={**os.environ, "FXLAB_WIDTH": "200", "NO_COLOR": "1", **(env or {})},
    )


def _hcom_ops(folder: Path) -> list[tuple[str, list[str], dict]]:
    """Each graph's ops as compared with TorchAir's: type, inputs, attrs (TorchAir's
    own input/output name records aside)."""
    ops = []
    for path in sorted(folder.glob("graph_*/ascend_ir.json")):
        for op in json.loads(path.read_text())["ops"]:
            attrs = {k: v for k, v in op["attrs"].items() if not k.startswith(("_input_name", "_output_name"))}
            ops.append((op["type"], op["inputs"], attrs))
    return ops


@pytest.fixture(scope="module")
def tp_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("tp") / "trace"
    html = out.parent / "report.html"
    proc = fxlab("--nproc", "2", str(EXAMPLES / "distributed" / "tp_decoder.py"), "--json", "--out", str(out), "--html", str(html))
    return proc, out, html


def test_a_tensor_parallel_decoder_traces_on_two_ranks(tp_run):
    proc, out, _ = tp_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout)
    assert (summary["nproc"], summary["status"], summary["same_structure"]) == (2, "ok", [[0, 1]])
    for rank in summary["ranks"]:
        assert rank["check"]["ok"] and rank["check"]["compared"] > 0 and not rank["check"]["skipped"]
        assert rank["ir_check"]["ok"] and rank["ir_check"]["compared"] > 0 and not rank["ir_check"]["not_run"]
        assert rank["graphs"][0]["ascend_ir"]["types"].count("HcomAllReduce") == 3
        assert [c["op"] for c in rank["collectives"]] == ["all_reduce"] * 3
        assert {c["channel"] for c in rank["collectives"]} == {"tag=ptd:0;rank_list=0,1"}


def test_the_mode_reaches_every_rank_and_the_aclgraph_graph_runs_with_its_collectives():
    proc = fxlab("--nproc", "2", str(EXAMPLES / "distributed" / "tp_decoder.py"), "--mode", "reduce-overhead", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout)
    assert summary["status"] == "ok"
    for rank in summary["ranks"]:
        assert rank["mode"] == "reduce-overhead" and rank["ir_check"] is None
        check = rank["aclgraph_check"]
        assert check["ok"] and check["compared"] > 0 and not check["not_run"]
        assert list(rank["graphs"][0]["stages"]) == ["dynamo", "aten", "functional", "aclgraph"]


def test_the_saved_trace_holds_a_folder_per_rank_and_a_manifest_naming_them(tp_run):
    from fxlab.capture.serialize import load_trace
    from fxlab.errors import OutputError

    _, out, _ = tp_run
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["ranks"] == [{"rank": 0, "folder": "rank_0", "status": "ok"}, {"rank": 1, "folder": "rank_1", "status": "ok"}]
    assert load_trace(out / "rank_1").graphs[0].ir.ops_of_type("HcomAllReduce")
    with pytest.raises(OutputError, match="holds a trace of 2 ranks: pass one rank's folder"):
        load_trace(out)


def test_each_rank_folder_loads_and_saves_again_to_the_same_bytes(tp_run, tmp_path):
    from fxlab.capture.serialize import load_trace
    from fxlab.cli.files import save_trace

    _, out, _ = tp_run
    for rank in ("rank_0", "rank_1"):
        save_trace(load_trace(out / rank), tmp_path / rank)
        again = {p.relative_to(tmp_path / rank): p.read_bytes() for p in (tmp_path / rank).rglob("*") if p.is_file()}
        assert again and all((out / rank / name).read_bytes() == data for name, data in again.items())


def test_diff_between_two_ranks_names_the_constant_that_differs(tp_run):
    _, out, _ = tp_run
    code, stdout, _ = run_cli("diff", str(out / "rank_0"), str(out / "rank_1"))
    assert code == 0 or code == 1
    assert "attr _readable_value: 0 → 64" in stdout and "rank_0 → rank_1: differences found" in stdout


def test_the_html_report_has_a_rank_selector(tp_run):
    _, _, html = tp_run
    text = html.read_text()
    assert '<select id="rank"><option value="0">rank 0</option><option value="1">rank 1</option></select>' in text
    assert text.count("<iframe data-rank=") == 2 and "graphs identical in structure on ranks 0-1" in text


def test_ranks_that_disagree_on_a_collective_stop_with_both_source_lines():
    start = time.monotonic()
    proc = fxlab("--nproc", "2", str(EXAMPLES / "distributed" / "rank_mismatch.py"), "--summary", "--timeout", "120")
    assert proc.returncode == 1 and time.monotonic() - start < 120
    message = " ".join(proc.stderr.split())
    assert "ranks 0 and 1 disagree on collective #1 on group tag=ptd:0;rank_list=0,1: they call different collectives" in message
    assert "rank_mismatch.py:37" in message and "rank_mismatch.py:36" in message


def test_a_rank_calling_one_collective_more_stops_at_once_not_at_the_timeout():
    start = time.monotonic()
    proc = fxlab("--nproc", "2", str(DATA / "rank_extra_collective.py"), "--summary", "--timeout", "120")
    message = " ".join(proc.stderr.split())
    assert proc.returncode == 1 and time.monotonic() - start < 60
    assert "ranks 0 and 1 disagree on collective #2 on group tag=ptd:0;rank_list=0,1: rank 1 calls all_reduce (sum) of float32[3, 8] at" in message
    assert "rank_extra_collective.py:12" in message and "rank 0 ended its compiled run after 1 collective(s) there and never calls it" in message


def test_a_rank_whose_graph_broke_where_its_peers_did_not_is_traced_not_said_to_hang(write_model):
    # The same collectives in the same order; one rank's print breaks its graph between them.
    proc = fxlab("--nproc", "2", str(write_model(BREAK_ON_ONE_RANK)), "--summary", "--timeout", "120")
    said = " ".join(proc.stdout.split())
    assert proc.returncode == 0, proc.stderr
    assert "disagree" not in proc.stderr and "every rank's calls agreed with its peers'" in said
    # graph 0 calls two all_reduces on rank 0 and one on rank 1: not run on CPU, where it would wait for ever
    assert "another rank's graph of that number calls other collectives" in said and "status: unverified" in said


BREAK_ON_ONE_RANK = """
import torch
import torch.distributed as dist


class M(torch.nn.Module):
    def forward(self, x):
        y = x * 2
        dist.all_reduce(y)
        if dist.get_rank() == 1:
            torch._dynamo.graph_break()
        y = y + 1
        dist.all_reduce(y)
        return y


def get_model_and_inputs():
    return M(), (torch.ones(2, 8),)
"""


def test_a_rank_failing_in_its_own_code_is_named_not_the_rank_stopped_for_it(tmp_path):
    proc = fxlab("--nproc", "2", str(DATA / "rank_raises.py"), "--summary", "--timeout", "120", "--out", str(tmp_path / "run"))
    message = " ".join(proc.stderr.split())
    # the model's own error, as for one process (exit 2), though the compiled run comes first on ranks
    assert proc.returncode == 2 and "rank 1 failed" in message and "the model's own code raised ValueError at" in message
    assert "rank_raises.py:10: rank 1 has no shard" in message and "Rank(s) 0 were stopped." in message and "SignalException" not in message
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["status"] == "failed"


def _torchair_or_skip() -> None:
    from fxlab.compat.torchair_copies import TorchAirNotFoundError, find_torchair

    try:
        find_torchair()
    except TorchAirNotFoundError as exc:
        pytest.skip(f"needs TorchAir's sources: {exc}")


@pytest.mark.torchair
def test_builtin_collectives_are_torchairs_graphs(tmp_path):
    _torchair_or_skip()
    model = str(DATA / "every_collective.py")
    builtin = fxlab("--nproc", "2", model, "--summary", "--out", str(tmp_path / "b"))
    torchair = fxlab("--nproc", "2", model, "--summary", "--converter", "torchair", "--out", str(tmp_path / "t"))
    assert builtin.returncode == 0 and torchair.returncode == 0, (builtin.stderr[-2000:], torchair.stderr[-2000:])
    # The ranks gather different rows, so their graphs differ: each rank's summary, then a row per rank.
    assert builtin.stdout.count("fxlab trace · ") == 3 and "─ rank 0 ─" in builtin.stdout and "─ rank 1 ─" in builtin.stdout
    rows = [line.split() for line in builtin.stdout.splitlines() if line.strip()[:1] in ("0", "1") and "match" in line]
    assert [r[0] for r in rows] == ["0", "1"] and all(r[-1] == "ok" for r in rows)
    for rank in ("rank_0", "rank_1"):
        ours, theirs = _hcom_ops(tmp_path / "b" / rank), _hcom_ops(tmp_path / "t" / rank)
        assert [t for t, _, _ in ours if t.startswith("Hcom")] == [
            "HcomAllReduce", "HcomAllReduce", "HcomAllGather", "HcomReduceScatter", "HcomAllToAll", "HcomAllToAllV", "HcomBroadcast",
            "HcomAllGatherV", "HcomReduceScatterV",
        ]
        assert ours == theirs


def test_under_torchrun_each_process_is_a_rank_and_rank_0_reports():
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", "-m", "fxlab", "trace", str(DATA / "every_collective.py"), "--json"],
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
        cwd=ROOT,
        env={**__import__("os").environ, "FXLAB_WIDTH": "200", "NO_COLOR": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout)
    assert summary["nproc"] == 2 and summary["status"] == "ok" and [r["rank"] for r in summary["ranks"]] == [0, 1]


def test_a_single_process_on_the_fake_group_says_the_collectives_did_not_run(tmp_path):
    import torch.distributed as dist

    model = tmp_path / "fake_group.py"
    model.write_text(
        "import torch.distributed as dist\n"
        "from torch.testing._internal.distributed.fake_pg import FakeStore\n"
        "dist.init_process_group('fake', store=FakeStore(), rank=0, world_size=4)\n"
        f"exec(open({str(DATA / 'every_collective.py')!r}).read())\n"
    )
    try:
        code, stdout, _ = run_cli("trace", str(model), "--summary")
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
    assert code == 0
    assert "eager vs compiled: not run: collectives not executed under the fake process group" in stdout
    assert "Ascend IR on CPU vs compiled: not run: collectives not executed under the fake process group" in stdout


def test_an_expert_parallel_moe_with_split_sizes_read_on_the_host():
    proc = fxlab("--nproc", "2", str(EXAMPLES / "distributed" / "moe_expert_parallel.py"), "--entry", "uneven", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout)
    assert summary["status"] == "ok" and summary["same_structure"] == [[0], [1]]  # each rank sends its own counts
    for rank in summary["ranks"]:
        types = [t for g in rank["graphs"] if g["ascend_ir"] for t in g["ascend_ir"]["types"] if t.startswith("Hcom")]
        assert types == ["HcomAllToAll", "HcomAllToAllV", "HcomAllToAllV", "HcomAllToAllV"]
        assert rank["check"]["ok"] and rank["ir_check"]["ok"] and rank["ir_check"]["compared"] > 0 and not rank["ir_check"]["not_run"]


def test_alike_ranks_views_are_printed_once(capsys, monkeypatch):
    from fxlab.cli import trace_ranks

    monkeypatch.setenv("FXLAB_WIDTH", "160")
    trace_ranks.console.out.cache_clear()

    def result(rank: int, structure: str) -> dict:
        return {
            "rank": rank, "status": "ok", "views": f"VIEWS OF RANK {rank}\n", "summary": f"SUMMARY OF RANK {rank}\n", "json": {},
            "collectives": [{"op": "all_reduce"}], "graphs": 1, "ge_ops": 5, "check": "match (1 tensors, max |diff| 0)",
            "ir_check": "match (1 tensors, max |diff| 0)", "structure": structure, "exact": str(rank), "html": None,
        }

    request = TraceRequest(Path("m.py"), stages=("ascend_ir",), timeout=60.0)
    code = trace_ranks.report_ranks([result(0, "a"), result(1, "a"), result(2, "b"), result(3, "a")], request, trace_ranks.RankOutput())
    out = capsys.readouterr().out
    trace_ranks.console.out.cache_clear()
    assert code == 0
    assert out.count("VIEWS OF RANK") == 2 and "VIEWS OF RANK 0" in out and "VIEWS OF RANK 2" in out
    assert "ranks 0, 1, 3: graphs identical in structure" in out
    assert "graphs differ between ranks: ranks 0, 1, 3 alike; rank 2 unlike the others" in out


def test_a_disagreement_is_the_cause_whichever_rank_found_it():
    """The rank that found a disagreement stops; its peer's collective then fails
    (gloo: connection closed). The report is the disagreement, not rank 0's error."""
    from fxlab.cli.trace_ranks import _failure_error
    from fxlab.distributed.launch import LaunchResult, RankFailure

    launched = LaunchResult(
        failures={
            0: RankFailure(0, "the model failed under torch.compile (RuntimeError: Connection closed by peer)", 3, "error"),
            1: RankFailure(1, "ranks 1 and 0 disagree on collective #2 on group g: ...", 1, "mismatch"),
        }
    )
    error = _failure_error(launched, 2)
    assert str(error) == "ranks 1 and 0 disagree on collective #2 on group g: ..." and error.exit_code == 1
