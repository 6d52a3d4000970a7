"""The record of each call of the compiled model, as data that saves and loads back."""
from __future__ import annotations

from fxlab.capture.trace import CallRecord, Recompile
from fxlab.capture.trace import CheckResult, Trace


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
    data = _call().to_json()
    assert data["reused"] == [0] and data["recompiles"][0]["graph"] == 1
    assert CallRecord.from_json(data) == _call()


def test_a_trace_writes_calls_only_when_there_was_more_than_one_and_options_only_when_asked():
    trace = Trace(model="m.py", entry="model", fxlab_version="0", torch_version="0", calls=[CallRecord(0, "x: f32[2, 8]")])
    assert "calls" not in trace.to_json() and "compile_options" not in trace.to_json()
    trace.calls.append(_call())
    trace.compile_options = {"dynamic": True, "source": "--dynamic"}
    data = trace.to_json()
    assert [c["index"] for c in data["calls"]] == [0, 1] and data["compile_options"]["source"] == "--dynamic"
    again = Trace.from_json(data)
    assert again.calls[1] == _call() and again.compile_options == trace.compile_options
