"""``fxlab run -- python ...``: the program runs as Python runs it (its output, argv, exit
code and traceback its own), each compile is saved as a trace, the table names them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from fxlab.capture.serialize import load_trace
from fxlab.errors import OutputError
from tests.cli.cli_runner import run_main
from tests.conftest import EXAMPLES

PROGRAMS = EXAMPLES / "programs"


def test_a_quick_start_script_runs_with_its_arguments_and_its_compile_is_saved(tmp_path):
    out = tmp_path / "run"
    code, stdout, stderr = run_main("run", "--out", str(out), "--", "python", str(PROGRAMS / "quickstart.py"), "--batch", "4")
    assert code == 0 and stdout.startswith("batch 4: output (4, 32), sum ")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["command"] == ["python", str(PROGRAMS / "quickstart.py"), "--batch", "4"]
    assert (manifest["exit_code"], manifest["status"], [row["folder"] for row in manifest["traces"]]) == (0, "ok", ["trace_0"])
    row = manifest["traces"][0]
    assert (row["function"], row["backend"], row["mode"], row["graphs"]) == ("Model", "torchair.get_npu_backend(...)", "max-autotune", 1)
    assert row["compiled_at"] == f"{PROGRAMS / 'quickstart.py'}:39" and row["called_at"] == f"{PROGRAMS / 'quickstart.py'}:43"
    assert any(note.startswith("no NPU here: the npu device runs on the CPU") for note in manifest["notes"])
    trace = load_trace(out / "trace_0")
    assert trace.status == "ok" and trace.program.function == "Model" and trace.check.ok and trace.ir_check.ok
    assert "trace_0" in stderr and "quickstart.py:39" in stderr and "max-autotune" in stderr
    assert stderr.count("no NPU here") == 1  # one note
    with pytest.raises(OutputError, match=r"holds a program run \(1 trace\(s\), `fxlab run --out`\): pass one trace's folder, e.g. .*run/trace_0"):
        load_trace(out)


NPUGRAPH_EX_OPTIONS = """
import torch
import torch_npu

step = torch.compile(lambda x: x.cos() + 1, backend="npugraph_ex", options={OPTIONS})
print("compiled")
print(round(step(torch.ones(3)).sum().item(), 4))
"""


def test_npugraph_ex_takes_every_option_of_its_own_and_refuses_a_misspelt_one_at_the_first_call(tmp_path):
    program = tmp_path / "serve.py"
    options = '{"capture_error_mode": "thread_local", "deadlock_check": True, "reuse_graph_pool_in_same_fx": False}'
    program.write_text(NPUGRAPH_EX_OPTIONS.replace("{OPTIONS}", options))
    code, stdout, _ = run_main("run", "--out", str(tmp_path / "run"), "--", "python", str(program))
    rows = json.loads((tmp_path / "run" / "manifest.json").read_text())["traces"]
    assert code == 0 and stdout.split() == ["compiled", "4.6209"] and [row["status"] for row in rows] == ["ok"]
    program.write_text(NPUGRAPH_EX_OPTIONS.replace("{OPTIONS}", '{"frozen_paramter": True}'))
    code, stdout, stderr = run_main("run", "--out", str(tmp_path / "run"), "--", "python", str(program))
    assert code == 1 and stdout.split() == ["compiled"]  # raised by the backend at the first compile, as npugraph_ex does
    assert "ValueError: Invalid option 'frozen_paramter'. The 'CompilerConfig' object does not have attribute 'frozen_paramter'." in stderr
    said = " ".join(stderr.split())
    assert "backend='npugraph_ex' raised" in said  # Dynamo's words name the backend as the program did
    assert (
        f"note: the call of <lambda> at {program}:7 (torch.compile at {program}:5, backend 'npugraph_ex') the backend raised as it "
        "compiled the call's first graph, so it has no trace: ValueError: Invalid option 'frozen_paramter'." in said
    )


INFERENCE_MODE = """
import torch
import torch_npu


class Decode(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.steps = 0

    def forward(self, x, cache):
        self.steps += 1
        cache.add_(x.sum())  # a cache made under inference_mode: an inference tensor, written in place
        return self.proj(x) + cache


model = torch.compile(Decode(), backend="npugraph_ex")
with torch.inference_mode():
    cache = torch.zeros(4, device="npu")
    for n in (1, 1):
        out = model(torch.ones(n, 4, device="npu"), cache)
    print(model.steps, [round(v, 4) for v in cache.tolist()], tuple(out.shape))
"""


def test_a_model_compiled_and_called_under_inference_mode_runs_as_serving_code_runs_it(tmp_path):
    program = tmp_path / "serve.py"
    program.write_text(INFERENCE_MODE)
    code, stdout, stderr = run_main("run", "--out", str(tmp_path / "run"), "--", "python", str(program))
    assert code == 0, stderr
    assert stdout.split("\n")[0] == "2 [8.0, 8.0, 8.0, 8.0] (1, 4)"  # each call once: the eager check puts the cache back
    rows = json.loads((tmp_path / "run" / "manifest.json").read_text())["traces"]
    assert [row["status"] for row in rows] == ["ok", "ok"]  # Dynamo compiles again for self.steps, as without fxlab
    for row in rows:
        trace = load_trace(tmp_path / "run" / row["folder"])
        assert trace.check.ok and trace.check.compared > 0 and trace.aclgraph_check.ok  # checked on the inference tensors


UNVERIFIED = """
import torch
import torch_npu


@torch.library.custom_op("run_test_ns::scaled_add", mutates_args=())
def scaled_add(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    return x + alpha * y


@scaled_add.register_fake
def _(x, y, alpha):
    return torch.empty_like(x)


step = torch.compile(lambda x, y: torch.ops.run_test_ns.scaled_add(x, y, 0.5) * 2, backend="npu")
print(step(torch.ones(2), torch.ones(2)).tolist())
"""


def test_an_unverified_trace_says_why_under_the_table_and_in_its_row(tmp_path):
    program = tmp_path / "custom.py"
    program.write_text(UNVERIFIED)
    code, stdout, stderr = run_main("run", "--out", str(tmp_path / "run"), "--", "python", str(program))
    (row,) = json.loads((tmp_path / "run" / "manifest.json").read_text())["traces"]
    reason = "graph 0: run_test_ns.scaled_add.default -> ScaledAdd: no Ascend C prototype found, so the GE op is assumed"
    assert code == 0 and stdout.strip() == "[3.0, 3.0]"
    assert (row["status"], row["why_unverified"], row["why_partial"]) == ("unverified", [reason], [])
    assert f"trace_0: unverified: {reason}" in " ".join(stderr.split())


def test_python_c_runs_with_fxlabs_interpreter_and_names_its_lines(tmp_path, monkeypatch, capfd):
    # ``python script.py`` runs in fxlab's process, so ``python -c`` runs with fxlab's
    # interpreter too, not another ``python`` PATH finds first.
    other = tmp_path / "bin"
    other.mkdir()
    (other / "python").write_text("#!/bin/sh\nexit 99\n")
    (other / "python").chmod(0o755)
    monkeypatch.setenv("PATH", f"{other}{os.pathsep}{os.environ['PATH']}")
    code = "import torch, torch_npu\nf = torch.compile(lambda x: x * 2, backend='npu')\nprint(f(torch.ones(2)).tolist())\n"
    status, _, _ = run_main("run", "--out", str(tmp_path / "run"), "--", "python", "-c", code)
    assert status == 0 and capfd.readouterr().out.strip() == "[2.0, 2.0]"  # the child's own output
    (row,) = json.loads((tmp_path / "run" / "process_0" / "manifest.json").read_text())["traces"]
    assert (row["compiled_at"], row["called_at"], row["status"]) == ("<string>:2", "<string>:3", "ok")


FULLGRAPH_BREAK = """
import torch
import torch_npu


@torch.compile(backend="npu", fullgraph=True)
def f(x):
    y = x.sin()
    torch._dynamo.graph_break()
    return y.cos()


f(torch.ones(2))
"""


def test_a_compile_dynamo_stops_before_the_backend_is_said_not_taken_for_nothing_compiled(tmp_path):
    program = tmp_path / "fullgraph.py"
    program.write_text(FULLGRAPH_BREAK)
    code, _, stderr = run_main("run", "--out", str(tmp_path / "run"), "--", "python", str(program))
    said = " ".join(stderr.split())
    assert code == 1 and "Unsupported" in stderr
    assert (
        f"note: the call of f at {program}:13 (torch.compile at {program}:6, backend 'npu') stopped in Dynamo before any graph "
        "reached the backend, so it has no trace: Unsupported:" in said
    )


CONFIG_NOT_FOLLOWED = """
import torch
import torchair

config = torchair.CompilerConfig()
config.experimental_config.frozen_parameter = True
step = torch.compile(lambda x: x.sin() * 2, backend=torchair.get_npu_backend(compiler_config=config))
for n in (2, 3):
    step(torch.ones(n))
"""


def test_what_the_config_sets_that_fxlab_does_not_follow_is_said_once_at_the_end(tmp_path):
    program = tmp_path / "frozen.py"
    program.write_text(CONFIG_NOT_FOLLOWED)
    code, _, stderr = run_main("run", "--out", str(tmp_path / "run"), "--", "python", str(program))
    rows = json.loads((tmp_path / "run" / "manifest.json").read_text())["traces"]
    assert code == 0 and len(rows) == 2
    note = (
        "the config of torchair.get_npu_backend(...) also sets experimental_config.frozen_parameter=True, which fxlab does "
        "not follow: its graphs (and TorchAir's own run, where it compares them with one) are made without it"
    )
    assert " ".join(stderr.split()).count(f"note: {note}") == 1
    assert all(len(row["config_notes"]) == 1 and row["config_notes"][0].startswith(note) for row in rows)


def test_a_serving_warm_up_recompiles_with_its_reason_and_the_traces_diff(tmp_path):
    out = tmp_path / "run"
    code, stdout, stderr = run_main("run", "--out", str(out), "--html", str(tmp_path / "run.html"), "--", "python", str(PROGRAMS / "serving_warmup.py"))
    assert code == 0 and stdout.splitlines()[1:] == ["decode batch 1: (1, 32)", "decode batch 2: (2, 32)", "decode batch 4: (4, 32)"]
    rows = json.loads((out / "manifest.json").read_text())["traces"]
    assert [(r["function"], r["backend"], r["mode"], r["compile_index"], r["status"]) for r in rows] == [
        ("prefill", "'npu'", "max-autotune", 0, "ok"),
        ("Decoder", "'npugraph_ex'", "npugraph_ex", 0, "ok"),
        ("Decoder", "'npugraph_ex'", "npugraph_ex", 1, "ok"),
    ]
    assert "trace_2: recompiled after trace_1: input x: dim 0 is 2, graph 0 of trace_1 has it fixed at 1" in " ".join(stderr.split())
    page = (tmp_path / "run.html").read_text()
    assert page.count("<iframe data-trace=") == 3 and '<select id="trace">' in page
    code, diff_out, _ = run_main("diff", str(out / "trace_1"), str(out / "trace_2"))
    assert code == 1 and "float32[1, 96] -> float32[s" in diff_out  # they differ: the recompile made the batch dim symbolic


def test_side_streams_and_events_around_the_compiled_step(tmp_path):
    out = tmp_path / "run"
    code, stdout, _ = run_main("run", "--out", str(out), "--", "python", str(PROGRAMS / "side_streams.py"), "--steps", "3")
    assert code == 0 and [line.split(":")[0] for line in stdout.splitlines()] == ["step 0", "step 1", "step 2"]
    trace = load_trace(out / "trace_0")
    assert trace.mode == "reduce-overhead" and trace.status == "ok" and trace.aclgraph_check.ok
    assert trace.graphs[0].streams["streams"] == {"default": 3, "gate": 2}  # the stream switch inside the compiled step


FAILS = """
import torch
try:
    import torchair
    backend = torchair.get_npu_backend()
except ImportError:  # without fxlab and without an NPU
    backend = "aot_eager"


def check(out):
    if out.sum() > 0:
        raise ValueError(f"bad output: {out.sum().item():.1f}")


model = torch.compile(lambda x: x * 2 + 1, backend=backend)
check(model(torch.ones(3)))
"""


def test_a_failing_script_fails_the_same_way_with_fxlab(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text(FAILS)
    alone = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path)
    code, _, stderr = run_main("run", "--out", str(tmp_path / "run"), "--", "python", str(script))
    assert alone.returncode == code == 1
    assert alone.stderr.startswith("Traceback (most recent call last):") and stderr.startswith(alone.stderr)
    assert (tmp_path / "run" / "trace_0" / "manifest.json").is_file()  # the compile was saved before it failed


RAISES_THROUGH_THE_COMPILED_CALL = """
import torch
try:
    import torchair
    backend = torchair.get_npu_backend()
except ImportError:  # without fxlab and without an NPU
    backend = "aot_eager"


@torch.compile(backend=backend)
def step(x):
    return x * 2


step(torch.ones(2))
step(None)
"""


@pytest.mark.parametrize("source", ["import torch\nx = (1,\n", RAISES_THROUGH_THE_COMPILED_CALL], ids=["syntax_error", "through_compiled_call"])
def test_a_failing_program_prints_pythons_own_traceback_without_fxlabs_frames(tmp_path, source):
    script = tmp_path / "fails.py"
    script.write_text(source)
    alone = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path)
    code, _, stderr = run_main("run", "--out", str(tmp_path / "run"), "--", "python", str(script))
    assert alone.returncode == code == 1
    assert stderr.startswith(alone.stderr) and "fxlab" not in stderr[: len(alone.stderr)]


@pytest.mark.parametrize(
    ("body", "code", "said"),
    [("import sys\nsys.exit(3)\n", 3, ""), ("raise SystemExit('stopping here')\n", 1, "stopping here\n"), ("print('fine')\n", 0, "")],
)
def test_the_exit_code_is_the_programs(tmp_path, body, code, said):
    script = tmp_path / "ends.py"
    script.write_text(body)
    got, _, stderr = run_main("run", "--out", str(tmp_path / "run"), "--", "python", str(script))
    assert got == code and stderr.startswith(said)
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["exit_code"] == code


def test_what_only_an_npu_does_is_one_paragraph_naming_the_call_and_line(tmp_path):
    script = tmp_path / "graph.py"
    script.write_text("import torch\nimport torch_npu\n\ng = torch.npu.NPUGraph()\n")
    code, _, stderr = run_main("run", "--out", str(tmp_path / "run"), "--", "python", str(script))
    assert code == 2 and "Traceback" not in stderr
    assert stderr.startswith(f"error: torch.npu.NPUGraph ({script}, line 4) needs capturing and replaying an ACL graph")


def test_a_torch_npu_operator_with_no_cpu_kernel_is_one_paragraph_naming_the_line(tmp_path):
    script = tmp_path / "npu_format.py"
    script.write_text("import torch\nimport torch_npu\n\nx = torch.ones(4).npu()\nprint(torch_npu.get_npu_format(x))\n")
    code, _, stderr = run_main("run", "--out", str(tmp_path / "run"), "--", "python", str(script))
    assert code == 2 and "Traceback" not in stderr and "AutogradCPU" not in stderr
    assert " ".join(stderr.split()).startswith(
        f"error: the call at {script}, line 5 runs torch_npu's npu.get_npu_format eagerly, and it has no CPU kernel here"
    )


VLLM_STYLE_OP = """
import torch
import torch_npu
import torchair

lib = torch.library.Library("fxlab_run_vllm_style", "FRAGMENT")
lib.define("attention_into(Tensor query, Tensor key, Tensor(a!) output, str layer_name) -> ()")


def attention_into(query, key, output, layer_name):
    output.copy_((query @ key.t()).softmax(-1) @ key)


lib.impl("attention_into", attention_into, dispatch_key="PrivateUse1")  # as direct_register_custom_op(..., dispatch_key="PrivateUse1")
lib._register_fake("attention_into", lambda query, key, output, layer_name: None)


class Layer(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        torch.ops.fxlab_run_vllm_style.attention_into(x, x * 2, out, "layers.0")
        return out + 1


config = torchair.CompilerConfig()
config.mode = "reduce-overhead"
x = torch.randn(4, 8, device="npu")
expected = torch.empty_like(x)
attention_into(x, x * 2, expected, "layers.0")
got = torch.compile(Layer(), backend=torchair.get_npu_backend(compiler_config=config))(x)
print("same as the kernel:", torch.allclose(got, expected + 1))
"""


def test_a_custom_op_with_only_an_npu_kernel_runs_as_serving_code_registers_it(tmp_path):
    """vLLM Ascend registers its ops' kernels under PrivateUse1 alone: here npu tensors are
    CPU tensors, and that kernel serves them."""
    script = tmp_path / "serving_op.py"
    script.write_text(VLLM_STYLE_OP)
    code, stdout, stderr = run_main("run", "--out", str(tmp_path / "run"), "--", "python", str(script))
    assert (code, stdout) == (0, "same as the kernel: True\n"), stderr
    trace = load_trace(tmp_path / "run" / "trace_0")
    assert trace.status == "ok" and trace.check.ok
    functional = trace.graphs[0].stages["functional"].nodes
    assert "fxlab_run_vllm_style.attention_into.default" in [node.args.split(",")[0] for node in functional if node.target == "higher_order.auto_functionalized_v2"]


def test_a_module_runs_as_python_m_runs_it(tmp_path, monkeypatch):
    package = tmp_path / "serve"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "warm.py").write_text(
        "import sys, torch, torch_npu\nprint(__name__, sys.argv[1:])\n"
        "f = torch.compile(lambda x: x.sin(), backend='npu')\nf(torch.ones(2, device='npu'))\n"
    )
    monkeypatch.chdir(tmp_path)
    code, stdout, _ = run_main("run", "--out", "run", "--", "python", "-m", "serve.warm", "--fast")
    assert code == 0 and stdout == "__main__ ['--fast']\n"
    assert [r["backend"] for r in json.loads((tmp_path / "run" / "manifest.json").read_text())["traces"]] == ["'npu'"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ((), "no program given: write it after --"),
        (("python", "missing.py"), "missing.py is not a file"),
        (("--stages", "nonsense", "python", "x.py"), "unknown stage 'nonsense'"),
    ],
)
def test_bad_commands_are_refused_before_anything_runs(tmp_path, monkeypatch, args, said):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.py").write_text("print('ran')\n")
    code, stdout, stderr = run_main("run", "--out", "run", *args)
    assert code == 2 and said in stderr and stdout == "" and not (tmp_path / "run").exists()


HOW_TO = "e.g. `fxlab run -- python script.py` for a Python script, `fxlab run -- ./run.sh` for a program in this folder."


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("nosuchcmd", f"nosuchcmd: no such command (no program of that name on PATH). Check its spelling, or give its path; {HOW_TO}"),
        ("./nosuch", f"./nosuch: no such file. Check the path, or give the program's name as you would type it; {HOW_TO}"),
        ("prog.py", "prog.py: no such command on PATH; a file of that name is in this folder: give its path (./prog.py), or its interpreter, e.g. `fxlab run -- python prog.py`."),
        ("./prog.py", "./prog.py cannot be run: it is not executable. Make it executable (chmod +x ./prog.py), or run it through its interpreter, e.g. `fxlab run -- python ./prog.py` or `fxlab run -- sh ./prog.py`."),
        ("./a_folder", f"./a_folder is a folder, not a program. Give the program to run after --; {HOW_TO}"),
        ("./no_hash_bang", "./no_hash_bang cannot be run (Exec format error). Give a program you can run; a script without a #! line runs through its interpreter, e.g. `fxlab run -- python script.py`."),
    ],
)
def test_a_program_that_cannot_start_is_refused_and_nothing_is_written(tmp_path, monkeypatch, command, said):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prog.py").write_text("print('ran')\n")
    (tmp_path / "a_folder").mkdir()
    (tmp_path / "no_hash_bang").write_text("echo ran\n")
    (tmp_path / "no_hash_bang").chmod(0o755)  # executable, but no format the system can start
    before = sorted(p.name for p in tmp_path.iterdir())
    code, stdout, stderr = run_main("run", "--out", "runs/run", "--", command, "--flag")
    assert (code, stdout, " ".join(stderr.split())) == (2, "", f"error: {said}")
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # --out and its parent were not made, nothing is staged


def test_a_program_that_cannot_start_leaves_the_previous_run_as_it_was(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ok.py").write_text("print('ran')\n")
    assert run_main("run", "--out", "run", "--", "python", "ok.py")[0] == 0
    saved = (tmp_path / "run" / "manifest.json").read_bytes()
    code, _, stderr = run_main("run", "--out", "run", "--", "nosuchcmd")
    assert code == 2 and stderr.startswith("error: nosuchcmd: no such command")
    assert (tmp_path / "run" / "manifest.json").read_bytes() == saved
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.py", "run"]


def test_another_command_needs_the_process_hook(tmp_path, monkeypatch):
    import fxlab.cli.run_hook as run_hook

    monkeypatch.setattr(run_hook, "hook_installed", lambda: False)
    code, _, stderr = run_main("run", "--out", str(tmp_path / "run"), "--", "sh", "-c", "true")
    assert code == 2 and "fxlab-run.pth is in no site-packages folder" in " ".join(stderr.split())


TERMINATED = """
import os
import signal
import torch
import torch_npu

f = torch.compile(lambda x: x.cos() + 1, backend="npu")
f(torch.ones(3, device="npu"))
print("compiled", flush=True)
os.kill(os.getpid(), signal.SIGTERM)
print("never")
"""


def test_a_program_ended_by_a_signal_ends_so_with_what_it_compiled_saved(tmp_path):
    from tests.conftest import ROOT

    (tmp_path / "term.py").write_text(TERMINATED)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "fxlab", "run", "--out", "run", "--", "python", "term.py"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == -15 and done.stdout == "compiled\n"
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["exit_code"] == 143 and [row["folder"] for row in manifest["traces"]] == ["trace_0"]
    assert load_trace(tmp_path / "run" / "trace_0").status == "ok"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "term.py"]  # nothing staged is left beside it


OS_EXIT = """
import os
import torch
import torch_npu

f = torch.compile(lambda x: x.cos() + 1, backend="npu")
f(torch.ones(3, device="npu"))
print("compiled", flush=True)
os._exit(5)
"""


def test_a_program_ending_by_os_exit_has_its_run_saved_and_nothing_staged_left(tmp_path):
    from tests.conftest import ROOT

    (tmp_path / "ends.py").write_text(OS_EXIT)
    env = dict(os.environ, PYTHONPATH=str(ROOT), FXLAB_WIDTH="200")
    command = [sys.executable, "-m", "fxlab", "run", "--out", "run", "--html", "run.html", "--", "python", "ends.py"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (5, "compiled\n"), done.stderr
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert (manifest["exit_code"], manifest["status"], [row["folder"] for row in manifest["traces"]]) == (5, "ok", ["trace_0"])
    assert load_trace(tmp_path / "run" / "trace_0").status == "ok"
    assert "note: run saved to run/ (manifest.json, 1 trace folder(s)) · status: ok" in done.stderr  # the table, as at any end
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ends.py", "run", "run.html"]  # nothing staged is left beside it


SLEEPS = """
import time
import torch
import torch_npu

f = torch.compile(lambda x: x.cos() + 1, backend="npu")
f(torch.ones(3, device="npu"))
open("compiled", "w").close()
time.sleep(60)
"""


def test_a_run_killed_outright_leaves_a_staged_folder_the_next_run_removes(tmp_path, monkeypatch):
    from tests.conftest import ROOT

    (tmp_path / "sleeps.py").write_text(SLEEPS)
    (tmp_path / "ok.py").write_text("print('ran')\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    killed = subprocess.Popen([sys.executable, "-m", "fxlab", "run", "--out", "run", "--", "python", "sleeps.py"], cwd=tmp_path, env=env, stderr=subprocess.DEVNULL)
    try:
        while not (tmp_path / "compiled").exists() and killed.poll() is None:
            time.sleep(0.1)
    finally:
        killed.kill()  # SIGKILL: no handler of fxlab's runs
        killed.wait()
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(".run.fxlab-")]
    assert len(left) == 1 and not (tmp_path / "run").exists()
    monkeypatch.chdir(tmp_path)
    code, _, stderr = run_main("run", "--out", "run", "--", "python", "ok.py")
    assert code == 0 and f"note: removed {left[0]}, the folder an earlier run of run staged beside it and left when it was killed or crashed" in " ".join(stderr.split())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["compiled", "ok.py", "run", "sleeps.py"]


def test_a_partial_trace_says_why_under_the_table(tmp_path, monkeypatch):
    (tmp_path / "refused.py").write_text(
        "import torch, torch_npu\nf = torch.compile(lambda x: torch.special.bessel_j0(x) + 1, backend='npu')\nf(torch.ones(4))\n"
    )
    monkeypatch.chdir(tmp_path)
    code, _, stderr = run_main("run", "--out", "run", "--", "python", "refused.py")
    assert code == 0
    left_out = load_trace(tmp_path / "run" / "trace_0").graphs[0].conversion.not_converted
    assert [entry["op"] for entry in left_out] == ["aten.special_bessel_j0.default"]
    why = f"graph 0: aten.special_bessel_j0.default (1 node(s)) not converted: {left_out[0]['reason']}"
    row = json.loads((tmp_path / "run" / "manifest.json").read_text())["traces"][0]
    assert (row["status"], row["why_partial"]) == ("partial", [why])
    assert f"trace_0: partial: {why} note: run saved to run/" in " ".join(stderr.split())


def test_a_program_that_changes_directory_leaves_out_and_html_where_they_were_given(tmp_path, monkeypatch):
    script = tmp_path / "moves.py"
    (tmp_path / "elsewhere").mkdir()
    script.write_text(
        "import os, torch, torch_npu\n"
        "print(torch.compile(lambda x: x + 1, backend='npu')(torch.ones(2)).tolist())\n"
        "os.chdir('elsewhere')\n"
    )
    monkeypatch.chdir(tmp_path)
    code, _, stderr = run_main("run", "--out", "run", "--html", "run.html", "--", "python", "moves.py")
    assert code == 0, stderr
    assert os.getcwd() == str(tmp_path)
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["status"] == "ok"
    assert "1 trace folder(s)" in stderr and (tmp_path / "run.html").is_file()
    assert not (tmp_path / "elsewhere" / "run.html").exists()


def test_an_html_path_that_cannot_be_written_stops_before_the_program_runs(tmp_path):
    script = tmp_path / "leaves_a_mark.py"
    script.write_text(f"open({str(tmp_path / 'ran')!r}, 'w').write('yes')\n")
    (tmp_path / "a_file").write_text("")
    code, _, stderr = run_main("run", "--out", str(tmp_path / "run"), "--html", str(tmp_path / "a_file" / "x.html"), "--", "python", str(script))
    assert code == 2 and "is a file, so no folder can be made under it" in stderr
    assert not (tmp_path / "ran").exists() and not (tmp_path / "run").exists()


LATE_THREAD = """
import threading
import time

import torch
import torch_npu
import torchair


def serve():
    time.sleep(0.3)  # the main script has ended by now; Python waits for this thread before it exits
    step = torch.compile(lambda x: x.relu() + 1, backend=torchair.get_npu_backend())
    print("served", step(torch.ones(2, 2)).sum().item())


threading.Thread(target=serve).start()
"""


def test_a_thread_that_compiles_after_the_main_script_ended_is_traced(tmp_path):
    program = tmp_path / "serve.py"
    program.write_text(LATE_THREAD)
    code, stdout, stderr = run_main("run", "--out", str(tmp_path / "run"), "--", "python", str(program))
    assert code == 0, stderr
    assert stdout.split("\n")[0] == "served 8.0"
    (row,) = json.loads((tmp_path / "run" / "manifest.json").read_text())["traces"]
    assert row["status"] == "ok" and load_trace(tmp_path / "run" / row["folder"]).check.ok
