"""``FXLAB_TRACE``: every Python process of a traced program loads fxlab through
``fxlab-run.pth``, as pip installs it into site-packages. Here the hook is put on a site
folder of the test's own (``site.addsitedir`` from a ``sitecustomize``), so the child
processes read the very file the package ships, from this checkout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fxlab.capture.serialize import load_trace
from fxlab.cli.run_hook import HOOK_FILE
from tests.conftest import EXAMPLES, ROOT

PROGRAMS = EXAMPLES / "programs"


@pytest.fixture
def hooked_env(tmp_path):
    """The environment of a process whose Python reads fxlab's hook, and imports this checkout's fxlab."""
    site_folder = tmp_path / "site"
    site_folder.mkdir()
    shutil.copy(ROOT / "fxlab" / "cli" / HOOK_FILE, site_folder / HOOK_FILE)
    (site_folder / "sitecustomize.py").write_text(f"import site\nsite.addsitedir({str(site_folder)!r})\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FXLAB_TRACE")}
    env.update(PYTHONPATH=f"{ROOT}{os.pathsep}{site_folder}", FXLAB_WIDTH="200", NO_COLOR="1")
    # `python` in a command is this interpreter, as in an activated virtual environment.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_without_fxlab_trace_the_hook_loads_nothing(hooked_env):
    probe = "import sys; print(sorted(m for m in sys.modules if m.startswith('fxlab')))"
    done = subprocess.run([sys.executable, "-c", probe], env=hooked_env, capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n" and done.stderr == ""


def test_fxlab_trace_traces_a_program_any_launcher_starts(hooked_env, tmp_path):
    out = tmp_path / "run"
    env = {**hooked_env, "FXLAB_TRACE": str(out)}
    done = subprocess.run([sys.executable, str(PROGRAMS / "quickstart.py"), "--batch", "3"], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("batch 3: output (3, 32)")
    manifest = json.loads((out / "manifest.json").read_text())
    assert [(r["folder"], r["function"], r["status"]) for r in manifest["traces"]] == [("trace_0", "Model", "ok")]
    assert load_trace(out / "trace_0").ir_check.ok
    assert "trace_0" in done.stderr and f"run saved to {out}/" in done.stderr
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # nothing staged is left beside it


def test_torchrun_ranks_each_get_a_folder_with_the_cross_rank_check(hooked_env, tmp_path):
    out = tmp_path / "run"
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", str(PROGRAMS / "tp_allreduce.py")]
    done = subprocess.run(
        [sys.executable, "-m", "fxlab", "run", "--out", str(out), "--", *torchrun], env=hooked_env, capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.splitlines()) == ["rank 0/2: sum -2.2470", "rank 1/2: sum -2.2470"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert [p["folder"] for p in manifest["processes"]] == ["rank_0", "rank_1"]
    for rank in (0, 1):
        trace = load_trace(out / f"rank_{rank}" / "trace_0")
        assert trace.model == str(PROGRAMS / "tp_allreduce.py")  # the worker's script, not the launcher's command
        assert trace.status == "ok" and trace.ir_check.ok and trace.ir_check.compared > 0
        assert "HcomAllReduce" in [op.type for op in trace.graphs[0].ir.ops]
        notes = json.loads((out / f"rank_{rank}" / "manifest.json").read_text())["notes"]
        assert any("asks for 'hccl': fxlab made it with gloo" in note for note in notes)
    assert "rank_0/trace_0" in done.stderr and "rank_1/trace_0" in done.stderr
    assert [(p["folder"], p["exit_code"]) for p in manifest["processes"]] == [("rank_0", 0), ("rank_1", 0)]


def test_spawned_ranks_write_their_folders_inside_the_run(hooked_env, tmp_path):
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "fxlab", "run", "--out", str(out), "--", "python", str(PROGRAMS / "spawn_ranks.py")],
        env=hooked_env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.splitlines()) == ["rank 0: (2, 16)", "rank 1: (2, 16)"]
    rows = [(r["folder"], r["backend"], r["status"]) for r in _rows(out)]
    assert rows == [("rank_0/trace_0", "'npu'", "ok"), ("rank_1/trace_0", "'npu'", "ok")]
    processes = json.loads((out / "manifest.json").read_text())["processes"]
    assert [(p["folder"], p["exit_code"]) for p in processes] == [("rank_0", 0), ("rank_1", 0)]  # multiprocessing's sys.exit(0)
    assert load_trace(out / "rank_1" / "trace_0").model == str(PROGRAMS / "spawn_ranks.py")  # the program the root runs


ENDS = """
import os
import signal
import sys
import torch
import torch_npu

f = torch.compile(lambda x: x.cos() + 1, backend="npu")
f(torch.ones(3, device="npu"))
how = sys.argv[1]
if how == "exit":
    sys.exit(3)
if how == "raise":
    raise RuntimeError("the program failed")
if how == "os_exit":
    os._exit(5)
if how == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_each_process_of_the_program_records_how_it_ended(hooked_env, tmp_path):
    (tmp_path / "ends.py").write_text(ENDS)
    shell = "python -u ends.py exit; python -u ends.py raise; python -u ends.py os_exit; exit 0"  # none is fxlab's own child
    done = subprocess.run(
        [sys.executable, "-m", "fxlab", "run", "--out", "run", "--", "sh", "-c", shell], env=hooked_env, capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0 and "RuntimeError: the program failed" in done.stderr
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert [(p["folder"], p["exit_code"], p["status"]) for p in manifest["processes"]] == [
        ("process_0", 3, "ok"),
        ("process_1", 1, "ok"),
        ("process_2", 5, "ok"),  # os._exit: saved before it ended
    ]
    assert [r["folder"] for r in _rows(tmp_path / "run")] == ["process_0/trace_0", "process_1/trace_0", "process_2/trace_0"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # nothing staged is left beside it


def test_a_python_parent_records_the_code_its_child_raised_systemexit_with(hooked_env, tmp_path):
    # The child's own record cannot see a `raise SystemExit(n)` written out (it notes sys.exit
    # only); the traced program that waits for it sees the code.
    (tmp_path / "child.py").write_text(ENDS.replace("sys.exit(3)", "raise SystemExit(4)"))
    parent = "import subprocess, sys\nfor how in ('exit', 'os_exit'):\n    print(subprocess.run([sys.executable, 'child.py', how]).returncode)\n"
    (tmp_path / "parent.py").write_text(parent)
    done = subprocess.run(
        [sys.executable, "-m", "fxlab", "run", "--out", "run", "--", "python", "parent.py"], env=hooked_env, capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0 and done.stdout.split() == ["4", "5"], done.stderr
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert [(p["folder"], p["exit_code"]) for p in manifest["processes"]] == [("process_0", 4), ("process_1", 5)]


def test_a_child_killed_outright_keeps_its_traces_and_the_signal_is_recorded(hooked_env, tmp_path):
    (tmp_path / "ends.py").write_text(ENDS)
    done = subprocess.run(
        [sys.executable, "-m", "fxlab", "run", "--out", "run", "--", "python", "-u", "ends.py", "kill"],
        env=hooked_env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == -9, done.stderr
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["exit_code"] == 137 and [(p["folder"], p["exit_code"]) for p in manifest["processes"]] == [("process_0", 137)]
    assert [r["folder"] for r in _rows(tmp_path / "run")] == ["process_0/trace_0"]
    assert "process_0/trace_0" in done.stderr


def test_a_root_ending_by_os_exit_moves_the_run_into_place(hooked_env, tmp_path):
    (tmp_path / "ends.py").write_text(ENDS)
    env = {**hooked_env, "FXLAB_TRACE": "run"}
    done = subprocess.run([sys.executable, "ends.py", "os_exit"], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 5, done.stderr
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert (manifest["exit_code"], [r["folder"] for r in manifest["traces"]]) == (5, ["trace_0"])
    assert "note: run saved to run/ (manifest.json, 1 trace folder(s)) · status: ok" in done.stderr
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # nothing staged is left beside it


def _rows(out: Path) -> list[dict]:
    rows = []
    for process in json.loads((out / "manifest.json").read_text())["processes"]:
        rows += [{**row, "folder": f"{process['folder']}/{row['folder']}"} for row in json.loads((out / process["folder"] / "manifest.json").read_text())["traces"]]
    return rows


MISMATCH = """
import torch
import torch.distributed as dist
import torch_npu
import torchair

dist.init_process_group("hccl")
rank = dist.get_rank()


def step(x):
    partial = x * 2
    if rank == 1:
        partial = partial[:, :-1]  # an off-by-one slice on one rank
    dist.all_reduce(partial)
    return partial

print("result", torch.compile(step, backend=torchair.get_npu_backend())(torch.ones(2, 4)).shape)
"""


def test_ranks_that_disagree_stop_with_fxlabs_paragraph_before_the_collective_runs(hooked_env, tmp_path):
    script = tmp_path / "mismatch.py"
    script.write_text(MISMATCH)
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", str(script)]
    done = subprocess.run(
        [sys.executable, "-m", "fxlab", "run", "--out", str(tmp_path / "run"), "--", *torchrun],
        env=hooked_env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 1 and "result" not in done.stdout
    said = [line for line in done.stderr.splitlines() if "error: ranks " in line]  # torchrun puts "[rank1]: " before each line
    assert len(said) == 2 and all("disagree on collective #1 on group" in line and f"{script}:15" in line for line in said)
    assert "Traceback" not in "".join(line for line in done.stderr.splitlines() if line.startswith("[rank"))
