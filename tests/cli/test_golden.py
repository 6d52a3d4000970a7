"""Every file `fxlab trace --out` writes for the examples, compared byte for byte with the
files saved before the last change to the writers (`tests/data/golden/`), except the
numbers a CPU computes: every floating-point number is compared within the checks' own
fp32 tolerance (float rounding differs between CPUs: a Python float a model computes
before a graph break becomes a constant of the next graph, in its code, its node records
and its GE `Const`), the binary `.pb` by the graph it decodes to, and the manifest's torch
version by release (its local label, `+cpu` or none, says which wheel pip chose).

The examples are copied to one fixed folder first, because the FX graphs carry the model
file's absolute path in their source locations (and so do the dumps). A change that is
meant to change the output regenerates the expected files:

    FXLAB_UPDATE_GOLDEN=1 python -m pytest tests/cli/test_golden.py
"""
from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from fxlab.compat.torchair_versions import release_of
from tests.cli.cli_runner import run_cli
from tests.conftest import EXAMPLES, ROOT

GOLDEN = ROOT / "tests" / "data" / "golden"
FIXED_HOME = Path("/tmp/fxlab-golden")
UPDATE = os.environ.get("FXLAB_UPDATE_GOLDEN") == "1"
EXAMPLE_NAMES = sorted(p.stem for p in EXAMPLES.glob("*.py"))
# Wall-clock figures are the one thing that differs from run to run.
SECONDS = re.compile(rb'("seconds": )[0-9.eE+-]+')
# A number this close to the saved one is the same result computed on another CPU (the
# fp32 tolerances of the checks themselves).
MAX_DIFF_TOLERANCE = 1e-5
FLOAT_RTOL = 1e-5
FLOAT = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?\d+[eE][-+]?\d+")


@pytest.fixture(scope="module")
def fixed_home():
    """The examples at a fixed path, held under a lock so two test runs do not collide."""
    FIXED_HOME.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{FIXED_HOME}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        shutil.rmtree(FIXED_HOME, ignore_errors=True)
        shutil.copytree(EXAMPLES, FIXED_HOME / "examples")
        yield FIXED_HOME
        shutil.rmtree(FIXED_HOME, ignore_errors=True)


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): _without_torch_notes(path.name, SECONDS.sub(rb"\g<1>0", path.read_bytes()))
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def _without_torch_notes(name: str, data: bytes) -> bytes:
    """torch gives some advice (a graph break's) once per process: whether the manifest
    notes it depends on what this test process compiled before. Whether the aclgraph check
    compared the graph with TorchAir's own run depends on whether this machine has
    TorchAir's sources (tests/compat/test_aclgraph_end_to_end.py holds that comparison)."""
    if name != "manifest.json":
        return data
    manifest = json.loads(data)
    manifest["notes"] = [n for n in manifest.get("notes", []) if not n.startswith("torch (")]
    if isinstance(manifest.get("aclgraph_check"), dict):
        manifest["aclgraph_check"].pop("compared_with", None)
    return json.dumps(manifest, indent=1).encode()


# The aclgraph path (reduce-overhead: the aclgraph stage and its capture code), on the
# examples with in-place ops, custom in-place ops and scopes.
ACLGRAPH_EXAMPLES = ("inplace_ops", "my_inplace", "superkernel_scopes", "multi_stream")
CASES = [(name, None) for name in EXAMPLE_NAMES] + [(name, "reduce-overhead") for name in ACLGRAPH_EXAMPLES]


@pytest.mark.parametrize("name,mode", CASES, ids=[n if m is None else f"{n}-{m}" for n, m in CASES])
def test_saved_trace_is_unchanged(name, mode, fixed_home, monkeypatch):
    monkeypatch.chdir(fixed_home)
    folder = name if mode is None else f"{name}_{mode}"
    out = fixed_home / "out" / folder
    code, _, error = run_cli("trace", f"examples/{name}.py", "--out", str(out), *(["--mode", mode] if mode else []))
    assert code == 0, error
    written = _files(out)
    expected_folder = GOLDEN / folder
    if UPDATE:
        shutil.rmtree(expected_folder, ignore_errors=True)
        for relative, data in written.items():
            (expected_folder / relative).parent.mkdir(parents=True, exist_ok=True)
            (expected_folder / relative).write_bytes(data)
    expected = _files(expected_folder)
    assert sorted(written) == sorted(expected)
    for relative, data in written.items():
        if relative == "manifest.json":
            assert_same_manifest(json.loads(data), json.loads(expected[relative]), f"{name}/{relative}")
        else:
            assert_same_file(relative, data, expected[relative], f"{name}/{relative}")


def assert_same_file(relative: str, data: bytes, saved: bytes, where: str) -> None:
    """The same bytes, or the same text but for floats that agree within
    :data:`FLOAT_RTOL`; a GE protobuf file (``.pb``, and ``.pbtxt``, whose tensor data is
    raw bytes) as the graph it decodes to."""
    if data == saved:
        return
    if relative.endswith((".pb", ".pbtxt")):
        data, saved = (_decoded_graph(relative, d) for d in (data, saved))
    assert_same_text(data.decode(), saved.decode(), where)


def _decoded_graph(relative: str, data: bytes) -> bytes:
    from fxlab.ir.dumps import graph_to_json_text
    from fxlab.ir.ge_proto import decode_model_def
    from fxlab.ir.pbtxt import pbtxt_to_graph

    graph = decode_model_def(data) if relative.endswith(".pb") else pbtxt_to_graph(data.decode())
    return graph_to_json_text(graph).encode()


def assert_same_text(text: str, saved: str, where: str) -> None:
    """Equal text between the floats, and each float within the tolerance of the saved one."""
    assert FLOAT.split(text) == FLOAT.split(saved), f"{where} differs from the saved file"
    for value, expected in zip(FLOAT.findall(text), FLOAT.findall(saved)):
        close = abs(float(value) - float(expected)) <= MAX_DIFF_TOLERANCE * 0.1 + FLOAT_RTOL * abs(float(expected))
        assert close, f"{where}: {value} is not {expected}"


def assert_same_manifest(written: object, expected: object, where: str) -> None:
    """Equal, but for the machine's figures: ``max_abs_diff`` within the tolerance and
    ``torch_version`` by release."""
    if isinstance(written, dict) and isinstance(expected, dict):
        assert sorted(written) == sorted(expected), f"{where}: other keys"
        for key, value in written.items():
            if key == "max_abs_diff" and isinstance(value, float) and isinstance(expected[key], float):
                assert abs(value - expected[key]) <= MAX_DIFF_TOLERANCE, f"{where}.{key}: {value} is not {expected[key]}"
            elif key == "torch_version":
                assert release_of(value) == release_of(expected[key]), f"{where}.{key}: {value} is not {expected[key]}"
            else:
                assert_same_manifest(value, expected[key], f"{where}.{key}")
    elif isinstance(written, list) and isinstance(expected, list):
        assert len(written) == len(expected), f"{where}: {len(written)} items, saved {len(expected)}"
        for index, (value, saved) in enumerate(zip(written, expected)):
            assert_same_manifest(value, saved, f"{where}[{index}]")
    else:
        assert written == expected and type(written) is type(expected), f"{where}: {written!r} is not {expected!r}"


def test_floats_a_cpu_computes_are_compared_with_a_tolerance() -> None:
    saved = "RealDiv(x, ge.Const(2.475034236907959, dtype=0))  # 3 ops"
    assert_same_text("RealDiv(x, ge.Const(2.475034475326538, dtype=0))  # 3 ops", saved, "f")
    for changed, message in [
        ("RealDiv(x, ge.Const(2.4751, dtype=0))  # 3 ops", "f: 2.4751 is not 2.475034236907959"),
        ("RealDiv(x, ge.Const(2.475034236907959, dtype=0))  # 4 ops", "f differs from the saved file"),
        ("Mul(x, ge.Const(2.475034236907959, dtype=0))  # 3 ops", "f differs from the saved file"),
    ]:
        with pytest.raises(AssertionError, match=re.escape(message)):
            assert_same_text(changed, saved, "f")


def test_the_manifests_machine_figures_are_compared_with_a_tolerance() -> None:
    saved = {"torch_version": "2.13.0+cpu", "ir_check": {"max_abs_diff": 4.76837158203125e-07, "compared": 29}, "notes": ["a"]}
    another_cpu = {"torch_version": "2.13.0", "ir_check": {"max_abs_diff": 9.5367431640625e-07, "compared": 29}, "notes": ["a"]}
    assert_same_manifest(another_cpu, saved, "m")
    for changed, message in [
        ({**another_cpu, "torch_version": "2.14.0"}, "m.torch_version: 2.14.0 is not 2.13.0+cpu"),
        ({**another_cpu, "ir_check": {"max_abs_diff": 0.01, "compared": 29}}, "m.ir_check.max_abs_diff: 0.01"),
        ({**another_cpu, "ir_check": {"max_abs_diff": 4.76837158203125e-07, "compared": 28}}, "m.ir_check.compared: 28 is not 29"),
        ({**another_cpu, "notes": ["a", "b"]}, "m.notes: 2 items, saved 1"),
    ]:
        with pytest.raises(AssertionError, match=re.escape(message)):
            assert_same_manifest(changed, saved, "m")
