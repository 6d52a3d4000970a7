"""The calls view: each call's inputs, the graphs it ran, why Dynamo compiled again, and
the call's checks."""
from __future__ import annotations

import io

from rich.console import Console

from fxlab.capture.trace import CallRecord, Recompile
from fxlab.capture.trace import CheckResult, Trace
from fxlab.viz.call_views import calls_view


def _text(renderables) -> str:
    console = Console(file=io.StringIO(), width=200, color_system=None)
    for item in renderables:
        console.print(item)
    return console.file.getvalue()


def _trace(*calls: CallRecord) -> Trace:
    return Trace(model="m.py", entry="model", fxlab_version="0", torch_version="0", calls=list(calls))


def test_one_call_shows_nothing():
    assert calls_view(_trace(CallRecord(0, "x: f32[2, 8]", graphs=[0], compiled=[0]))) == []


def test_each_call_shows_its_graphs_its_recompile_reason_and_its_checks():
    first = CallRecord(0, "x: f32[2, 8]", graphs=[0], compiled=[0], check=CheckResult(ok=True, compared=1))
    second = CallRecord(
        1,
        "x: f32[4, 8]",
        "input set 1",
        graphs=[1],
        compiled=[1],
        recompiles=[Recompile(1, ["0/0: tensor 'x' size mismatch at index 0. expected 2, actual 4"], ["input x: dim 0 is 4, graph 0 has it fixed at 2"])],
        check=CheckResult(ok=True, compared=3),
        ir_check=CheckResult(ok=False, compared=1, mismatches=["graph 1 output 0: max |diff| 0.5"]),
    )
    third = CallRecord(2, "x: f32[8, 8]", "derived (+1): dim 0 of x: 7 -> 8", graphs=[1], compiled=[], recompiles=[])
    assert _text(calls_view(_trace(first, second, third))) == (
        "calls of the compiled model (3, in order):\n"
        "call 0: x: f32[2, 8]\n"
        "  ran graph 0 (compiled on this call)\n"
        "  its checks: the lines below marked (call 0)\n"
        "call 1: x: f32[4, 8] [input set 1]\n"
        "  ran graph 1 (compiled on this call)\n"
        "  graph 1 compiled because input x: dim 0 is 4, graph 0 has it fixed at 2\n"
        "    Dynamo's reason: 0/0: tensor 'x' size mismatch at index 0. expected 2, actual 4\n"
        "  eager vs compiled: match (3 tensors, max |diff| 0)\n"
        "  Ascend IR on CPU vs compiled: MISMATCH: graph 1 output 0: max |diff| 0.5\n"
        "call 2: x: f32[8, 8] [derived (+1): dim 0 of x: 7 -> 8]\n"
        "  ran graph 1 (reused)\n"
    )


def test_a_graph_compiled_with_no_failed_guard_says_so():
    call = CallRecord(1, "x: f32[2, 8]", graphs=[2], compiled=[2], recompiles=[Recompile(2)])
    text = _text(calls_view(_trace(CallRecord(0, "x: f32[2, 8]"), call)))
    assert "  graph 2: compiled for code no earlier graph covers (no guard failed)\n" in text
