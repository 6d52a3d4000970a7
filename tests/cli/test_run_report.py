"""What ``fxlab run`` says under its table: why a trace is partial, briefly."""

from __future__ import annotations

from fxlab.cli.run_report import partial_lines


def test_a_partial_trace_gets_its_first_reason_and_how_many_more():
    rows = [
        {"folder": "trace_0", "status": "ok", "why_partial": []},
        {
            "folder": "rank_1/trace_0",
            "status": "partial",
            "why_partial": ["graph 0: [bold]x[/] failed", "eager vs compiled: MISMATCH: out"],
        },
        {"folder": "trace_2", "status": "partial", "why_partial": ["Ascend IR on CPU vs compiled: MISMATCH: out 0"]},
        {"folder": "trace_3", "status": "partial"},  # a run saved before the reasons were: the status alone
    ]
    assert [(line.plain, line.style) for line in partial_lines(rows)] == [
        ("rank_1/trace_0: partial: graph 0: [bold]x[/] failed (and 1 more: the manifest's why_partial)", "yellow"),
        ("trace_2: partial: Ascend IR on CPU vs compiled: MISMATCH: out 0", "yellow"),
    ]
