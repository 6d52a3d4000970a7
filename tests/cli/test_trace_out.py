"""``fxlab trace --out``: the folder holds exactly one whole trace; a failed or
interrupted run leaves the trace that was there as it was; every JSON file is strict."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.cli.cli_runner import run_main
from tests.conftest import EXAMPLES

NON_FINITE_AND_COMPLEX = '''
import torch


class M(torch.nn.Module):
    def forward(self, x):
        c = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex64)
        y = (x.to(torch.complex64) * c).abs()
        return y.clamp(min=0.1) + x.clamp(max=float("inf")) + x * float("nan")


model = M()
example_inputs = (torch.randn(2),)
'''


def _tree(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _refuse(constant):
    raise ValueError(f"{constant} is not JSON")


def test_rerun_replaces_the_folder_and_a_failed_run_keeps_it(tmp_path, write_model):
    out = tmp_path / "o"
    assert run_main("trace", str(EXAMPLES / "graph_break.py"), "--out", str(out), "--summary")[0] == 0
    assert (out / "graph_1").is_dir()
    code, _, err = run_main("trace", str(EXAMPLES / "my_op.py"), "--out", str(out), "--summary")
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["graph_0", "manifest.json"]  # no stale graph_1
    before = _tree(out)
    code, _, err = run_main("trace", str(write_model("raise ValueError('boom')\n")), "--out", str(out))
    assert code == 2 and "ValueError: boom" in err
    assert "the trace already in" in err and "is left as it was" in err
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.py", "o"]  # no staging folder left


def test_ctrl_c_exits_130_saying_interrupted_and_keeps_the_old_trace(tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    (out / "manifest.json").write_text('{"fxlab_version": "0.1.0", "status": "ok", "graphs": []}')
    model = tmp_path / "interrupt.py"
    model.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGINT)\n")
    env = dict(os.environ, FXLAB_WIDTH="200", NO_COLOR="1")
    proc = subprocess.run([sys.executable, "-m", "fxlab", "trace", str(model), "--out", str(out)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 130
    assert "error: interrupted (Ctrl-C)" in proc.stderr and "Traceback" not in proc.stderr
    assert _tree(out) == {"manifest.json": b'{"fxlab_version": "0.1.0", "status": "ok", "graphs": []}'}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["interrupt.py", "o"]


def test_non_finite_and_complex_constants_are_strict_json_and_diff_as_identical(tmp_path, write_model):
    out = tmp_path / "o"
    code, _, err = run_main("trace", str(write_model(NON_FINITE_AND_COMPLEX)), "--out", str(out), "--summary")
    assert code in (0, 1), err
    texts = {p.name: p.read_text() for p in out.rglob("*.json")}
    assert "ascend_ir.json" in texts and "manifest.json" in texts
    for name, text in texts.items():
        json.loads(text, parse_constant=_refuse)  # every file parses as strict JSON
    ir = json.loads(texts["ascend_ir.json"])
    values = [op["attrs"]["value"]["values"] for op in ir["ops"] if op["type"] == "Const" and "values" in op["attrs"].get("value", {})]
    assert ["Infinity"] in values and ["NaN"] in values and [[1.0, 2.0], [3.0, -1.0]] in values
    code, out_text, err = run_main("diff", str(out), str(out))
    assert code == 0, err
    assert "no differences" in out_text
