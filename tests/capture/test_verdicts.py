"""Every verdict a trace prints is true: regression tests for the false verdicts of
issue 18, each named for the bug it keeps fixed."""
from __future__ import annotations

import json

import pytest
import torch

from fxlab.capture import capture_trace, load_model
from tests.cli.cli_runner import run_cli


def _trace(write_model, source: str, **kwargs):
    return capture_trace(load_model(write_model(source)), **kwargs)


# An IR that disagrees with the compiled run: Mul's reference kernel is swapped for one
# that adds, so the IR check must fail while eager vs compiled still matches.
MUL_MODEL = """
import torch
def f(x):
    return x * 3
model = f
example_inputs = (torch.arange(4.0),)
"""


@pytest.fixture
def wrong_mul_kernel(monkeypatch):
    from fxlab.ir import execute, kernels  # noqa: F401 - registers the kernels

    monkeypatch.setitem(execute.KERNELS, "Mul", lambda op, inputs, attrs: [inputs[0] + inputs[1]])


@pytest.fixture
def no_mul_kernel(monkeypatch):
    from fxlab.ir import execute, kernels  # noqa: F401 - registers the kernels

    monkeypatch.delitem(execute.KERNELS, "Mul")


def test_ir_check_mismatch_makes_the_status_partial(write_model, wrong_mul_kernel):
    trace = _trace(write_model, MUL_MODEL)
    assert trace.check.ok
    assert trace.ir_check.failed and "graph 0 output 0: max |diff| 3" in trace.ir_check.verdict
    assert trace.status == "partial"


def test_ir_check_mismatch_exits_1_and_the_manifest_says_partial(write_model, wrong_mul_kernel, tmp_path):
    code, out, _ = run_cli("trace", str(write_model(MUL_MODEL)), "--summary", "--out", str(tmp_path / "out"))
    assert code == 1
    assert "Ascend IR on CPU vs compiled: MISMATCH" in out and "status: partial" in out
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["status"] == "partial"


def test_ir_check_without_a_kernel_says_not_run_not_mismatch(write_model, no_mul_kernel):
    trace = _trace(write_model, MUL_MODEL)
    verdict = trace.ir_check.verdict
    assert verdict.startswith("not run: graph 0: no reference kernel for GE op type Mul"), verdict
    assert "MISMATCH" not in verdict and not trace.ir_check.failed
    assert trace.status == "ok"


def test_no_verify_says_the_ir_check_was_not_run(write_model):
    trace = _trace(write_model, MUL_MODEL, verify=False)
    assert trace.ir_check.verdict == "not run: --no-verify was given"


def test_ir_check_of_an_unconverted_op_says_not_run(write_model, monkeypatch):
    from fxlab.passes.converters import registry

    monkeypatch.delitem(registry.CONVERTERS._by_target, torch.ops.aten.mul.Tensor)
    trace = _trace(write_model, MUL_MODEL)
    assert trace.status == "partial"
    assert trace.ir_check.verdict == "not run: graph 0: not every op converted (aten.mul.Tensor)"


def test_ir_check_line_stays_under_converter_torchair():
    from tests.conftest import EXAMPLES, torchair_path_or_skip

    path = str(torchair_path_or_skip())
    code, out, err = run_cli("trace", str(EXAMPLES / "inplace_ops.py"), "--summary", "--converter", "torchair", "--torchair-path", path)
    assert code == 0, err
    assert "Ascend IR on CPU vs compiled: match (5 tensors" in out


DYNAMIC_MODEL = """
import torch
def f(x, y):
    half = x.view(x.shape[0] // 2, -1)
    y.add_(1)
    return (x * 2).sum(0) + y[: x.shape[0] - 1].sum(), half * (x.shape[0] * 3 + 1)
x = torch.randn(6, 4)
torch._dynamo.mark_dynamic(x, 0)
model = f
example_inputs = (x, torch.randn(8))
"""


def test_dynamic_marks_are_kept_and_the_ir_check_runs_with_the_real_sizes(write_model):
    # The inputs were cloned without the mark (static graph); with it, the IR check
    # failed inside ("list index out of range") and the trace still said ok.
    trace = _trace(write_model, DYNAMIC_MODEL)
    functional = trace.graphs[0].modules["functional"]
    symbols = [n for n in functional.graph.nodes if n.op == "placeholder" and isinstance(n.meta.get("val"), torch.SymInt)]
    assert len(symbols) == 1, "the user's mark_dynamic made dim 0 a symbol"
    assert not trace.graphs[0].ir_summary["partial"]
    assert trace.ir_check.verdict.startswith("match (4 tensors"), trace.ir_check.verdict
    assert trace.status == "ok"


@pytest.mark.parametrize(
    "body",
    [
        # one value written into two graph inputs: one of them was never written
        "def f(x0, x1):\n    x1.add_(1)\n    x0.copy_(x1)",
        # clone, then mutate the input: the clone was overwritten through the Identity
        "def f(x):\n    y = x.clone()\n    x.add_(1)\n    return y",
        # two in-place writes into two graph inputs, one reading the other
        "def f(x, b):\n    x.sub_(b)\n    b.relu_()",
    ],
    ids=["one-value-two-inputs", "clone-then-mutate", "two-inputs-written"],
)
def test_in_place_programs_trace_ok_with_a_matching_ir(write_model, body):
    arity = body.split("(")[1].split(")")[0].count(",") + 1
    source = f"import torch\n{body}\nmodel = f\nexample_inputs = tuple(torch.randn(5) for _ in range({arity}))\n"
    trace = _trace(write_model, source)
    assert [g.error for g in trace.graphs] == [None]
    assert trace.check.ok and trace.ir_check.ok and trace.ir_check.compared > 0, trace.ir_check.verdict
    assert trace.status == "ok"


# Batch norm in training with running statistics: the graph TorchAir builds writes the
# batch statistics into the running ones (fxlab.passes.torchair_refusals.WRONG_RESULTS).
BATCH_NORM_TRAINING_MODEL = """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4)).train()
example_inputs = (torch.randn(2, 2, 4, 4),)
"""


def test_ir_check_names_torchair_s_batch_norm_fault_beside_the_running_statistics_it_breaks(write_model):
    trace = _trace(write_model, BATCH_NORM_TRAINING_MODEL)
    check = trace.ir_check
    assert check.failed and trace.status == "partial"
    assert trace.check.ok  # eager and compiled agree: the fault is in the IR
    written = [m for m in check.mismatches if "after the call" in m]
    assert len(written) == 2 and all(m.startswith("graph 0 input ") for m in written)  # running mean and var
    (fault,) = [m for m in check.mismatches if m not in written]
    assert fault.startswith("graph 0: _native_batch_norm_legit_functional: TorchAir's converter returns BatchNormV3's outputs in GE's order")
    assert "writes the batch statistics into the running statistics" in check.verdict


def test_ir_check_of_batch_norm_in_eval_mode_matches_without_a_fault_note(write_model):
    trace = _trace(write_model, BATCH_NORM_TRAINING_MODEL.replace(".train()", ".eval()"))
    assert trace.ir_check.ok and not trace.ir_check.mismatches
