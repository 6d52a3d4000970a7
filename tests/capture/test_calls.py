"""The record of each call of the compiled model, as data that saves and loads back."""
from __future__ import annotations

from fxlab.capture.serialize import call_from_json, call_to_json, manifest
from fxlab.capture.trace import CallRecord, CheckResult, Recompile, Trace


def _call() -> CallRecord:
    return CallRecord(
        index=1,
        inputs="x: f32[4, 8]",
        origin="input set 1",
        graphs=[1, 0],
        compiled=[1],
        recompiles=[Recompile(1, ["0/0: tensor 'x' size mismatch at index 0. expected 2, actual 4"], ["input x: dim 0 is 4, graph 0 has it fixed at 2"])],
        check=CheckResult(ok=True, compared=2),
        ir_check=CheckResult(ok=False, compared=2, mismatches=["graph 1 output 0: max |diff| 1"]),
    )


def test_a_call_says_which_graphs_it_reused_and_whether_a_check_failed():
    call = _call()
    assert call.reused == [0] and call.failed
    assert not CallRecord(0, "x: f32[2, 8]", check=CheckResult(ok=True)).failed


def test_a_call_saves_and_loads_back():
    data = call_to_json(_call())
    assert data["reused"] == [0] and data["recompiles"][0]["graph"] == 1
    assert call_from_json(data) == _call()


def test_a_manifest_lists_every_call_and_compile_options_only_when_asked():
    trace = Trace(model="m.py", entry="model", fxlab_version="0", torch_version="0", calls=[CallRecord(0, "x: f32[2, 8]")])
    data = manifest(trace)
    assert [c["index"] for c in data["calls"]] == [0] and "compile_options" not in data  # one call is listed too
    trace.calls.append(_call())
    trace.compile_options = {"dynamic": True, "source": "--dynamic"}
    data = manifest(trace)
    assert [c["index"] for c in data["calls"]] == [0, 1] and data["compile_options"]["source"] == "--dynamic"
    assert [call_from_json(c) for c in data["calls"]] == trace.calls
