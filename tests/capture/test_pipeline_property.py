"""The pipeline's verdicts hold on random programs of in-place ops (see ``programs.py``).

For every generated program: fxlab does not crash (a clean refusal, an ``FxlabError``, is
allowed); eager equals compiled; the Ascend IR run on CPU equals the compiled run
whenever every op converted; the before-functionalize diff accounts for every node of
both stages exactly once; the saved trace is strict JSON and loads back.

``--hypothesis-profile ci`` (the default) draws a few hundred programs; ``thorough``
draws thousands: ``python -m pytest tests/capture/test_pipeline_property.py
--hypothesis-profile thorough``.
"""
from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, event, given, note, settings

from fxlab.capture import capture_trace, load_model
from fxlab.capture.serialize import load_trace, prepare_out_dir, save_trace
from fxlab.diff.fx_diff import diff_stages
from fxlab.errors import FxlabError
from tests.capture.programs import Program, programs


def _strict_json(path: Path) -> object:
    def refuse(constant: str) -> None:
        raise ValueError(f"{path.name} holds {constant}, which is not JSON")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def _accounted_once(trace) -> None:  # type: ignore[no-untyped-def]
    for graph in trace.graphs:
        aten, functional = graph.stages.get("aten"), graph.stages.get("functional")
        if aten is None or functional is None:
            continue
        diff = diff_stages(aten, functional)
        for side, stage in (("left", aten), ("right", functional)):
            seen: Counter[str] = Counter()
            for entry in [*diff.entries, *diff.inputs]:
                ref = getattr(entry, side)
                if ref is not None:
                    seen.update([ref.name, *ref.attached])
            expected = Counter(n.name for n in stage.nodes if n.op != "output")
            assert seen == expected, f"graph {graph.index} {stage.name}: diff shows {dict(seen - expected)} extra, {dict(expected - seen)} missing"


def check_program(program: Program, folder: Path) -> None:
    source = program.source()
    note(source)
    path = folder / "program.py"
    path.write_text(source)
    try:
        trace = capture_trace(load_model(path))
    except FxlabError as exc:
        event(f"refused: {type(exc).__name__}")
        return  # a clean refusal, with its message
    event(f"IR check: {trace.ir_check.verdict[:90] if trace.ir_check else None}")
    assert all(g.error is None for g in trace.graphs), [g.error for g in trace.graphs]
    assert trace.check.ok, trace.check.verdict
    converted = all(g.ir is not None and not g.ir_summary["partial"] for g in trace.graphs)
    if converted and trace.graphs:
        assert trace.ir_check.ok and not trace.ir_check.not_run, trace.ir_check.verdict
        assert trace.status == "ok"
    _accounted_once(trace)
    out = prepare_out_dir(folder / "out")
    save_trace(trace, out)
    for file in out.rglob("*.json"):
        _strict_json(file)
    loaded = load_trace(out)
    assert [g.index for g in loaded.graphs] == [g.index for g in trace.graphs]
    assert loaded.status == trace.status and loaded.check == trace.check


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(program=programs())
def test_every_verdict_holds_on_random_programs(program: Program) -> None:
    with tempfile.TemporaryDirectory(prefix="fxlab-program-") as folder:
        check_program(program, Path(folder))
