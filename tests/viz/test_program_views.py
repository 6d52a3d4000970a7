"""The table of a program run, the lines under it, and its page: user text (function
names, paths) shown as it is, never read as markup or HTML."""

from __future__ import annotations

import io

from rich.console import Console

from fxlab.viz.program_views import run_lines, run_page, run_table

ROWS = [
    {
        "folder": "trace_0",
        "function": "Net[bold]",
        "compiled_at": "/srv/app/infer.py:31",
        "called_at": "/srv/app/infer.py:40",
        "backend": "torchair.get_npu_backend(...)",
        "mode": "max-autotune",
        "graphs": 2,
        "status": "ok",
        "compile_index": 0,
        "reasons": [],
    },
    {
        "folder": "trace_1",
        "function": "Net[bold]",
        "compiled_at": "/srv/app/infer.py:31",
        "called_at": "/srv/app/infer.py:40",
        "backend": "torchair.get_npu_backend(...)",
        "mode": "max-autotune",
        "graphs": 1,
        "status": "partial",
        "compile_index": 1,
        "previous": "trace_0",
        "reasons": ["input x: dim 0 is 4, graph 0 of trace_0 has it fixed at 2"],
        "error": None,
    },
    {
        "folder": "rank_1/trace_0",
        "function": "step</script>",
        "compiled_at": "a.py:3",
        "called_at": "a.py:9",
        "backend": "'npu'",
        "mode": None,
        "graphs": 0,
        "status": "failed",
        "compile_index": 0,
        "reasons": [],
        "error": "KeyError: 'x'\x1b[31m",
    },
]


def _text(renderable: object) -> str:
    out = Console(file=io.StringIO(), width=200, color_system=None)
    out.print(renderable)
    return out.file.getvalue()


def test_the_table_names_each_compile_where_with_which_backend_and_its_status():
    lines = _text(run_table(ROWS, "infer.py")).splitlines()
    assert lines[0].strip() == "fxlab run · infer.py · 3 trace(s)"
    assert lines[4].split() == [
        "trace_0",
        "Net[bold]",
        "infer.py:31",
        "→",
        "40",
        "torchair.get_npu_backend(...)",
        "max-autotune",
        "2",
        "ok",
    ]
    assert lines[5].split()[:3] == ["trace_1", "Net[bold]", "(recompile"] and lines[5].split()[-1] == "partial"
    assert lines[6].split()[-3:] == ["-", "0", "failed"]
    assert _text(run_table([], "x.py")).startswith("fxlab run · x.py: nothing was compiled with TorchAir's backends")


def test_under_the_table_each_recompile_says_why_and_each_failure_what():
    text = _text(run_lines(ROWS))
    assert "trace_1: recompiled after trace_0: input x: dim 0 is 4, graph 0 of trace_0 has it fixed at 2" in text
    assert "rank_1/trace_0: fxlab could not trace this compile (the program went on): KeyError: 'x'\\u001b[31m" in text


def test_the_page_holds_each_report_escaped():
    page = run_page("infer.py", [(ROWS[0], "<html><body>one</body></html>"), (ROWS[2], "<p>two</p>")])
    assert page.count("<iframe data-trace=") == 2 and '<option value="rank_1/trace_0">rank_1/trace_0 · step&lt;/script&gt;</option>' in page
    assert "step</script>" not in page and 'srcdoc="&lt;html&gt;&lt;body&gt;one' in page


def test_a_terminal_too_narrow_for_the_table_gets_an_entry_per_trace_with_no_word_broken():
    out = Console(file=io.StringIO(), width=60, color_system=None)
    out.print(run_table(ROWS, "infer.py"))
    lines = out.file.getvalue().splitlines()
    assert lines[0] == "fxlab run · infer.py · 3 trace(s)"
    assert lines[1].split() == ["trace_0", "Net[bold]", "ok"]
    entries = [line.split()[0] for line in lines if not line.startswith(" ") and line != lines[0]]
    assert entries == ["trace_0", "trace_1", "rank_1/trace_0"]
    text = " ".join(lines)
    assert "max-autotune" in text and "torchair.get_npu_backend(...)" in text and "infer.py:31 → 40" in text
