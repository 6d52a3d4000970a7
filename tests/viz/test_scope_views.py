"""The scope report's console view: on a narrow terminal names and source lines wrap,
they are never cut."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from fxlab.reports.scope_report import report_for_trace
from fxlab.socs import soc_by_name
from fxlab.viz.scope_views import render_scope_report
from tests.sessions import capture_of

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "superkernel_scopes.py"


def _printed(renderable, width: int) -> str:
    console = Console(file=io.StringIO(), width=width, no_color=True, highlight=False)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_a_narrow_terminal_wraps_every_cell_and_cuts_none() -> None:
    report = report_for_trace(capture_of(EXAMPLE), soc_by_name("Ascend910B2"))
    assert report.core_limits and report.super_kernels
    for width in (60, 80):
        assert "…" not in _printed(render_scope_report(report), width)
    wide = _printed(render_scope_report(report), 160)
    for row in report.core_limits:
        assert f"│ {row.op.name} " in wide and "superkernel_scopes.py:31" in wide
