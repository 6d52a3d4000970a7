"""Views of a program run (``fxlab run``): the table of what it compiled, where, with
which backend and mode, and each trace's status; the lines under it (recompiles and
their reasons, compiles fxlab could not trace); the HTML page of every trace.

A row is the plain data of the run's manifest (:meth:`fxlab.capture.program.ProgramTrace.row`);
a child process's rows carry their folder under the run (``rank_0/trace_1``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from fxlab.viz.rank_report import framed_pages
from fxlab.viz.safe_text import plain, visible

_STATUS_STYLE = {"ok": "bold green", "unverified": "bold cyan", "partial": "bold yellow", "failed": "bold red"}


def run_table(rows: Sequence[dict[str, Any]], program: str) -> RenderableType:
    """What the program compiled with TorchAir's backends: one row per trace (a line and
    its details under it on a terminal too narrow for the table)."""
    if not rows:
        return plain(
            f"fxlab run · {program}: nothing was compiled with TorchAir's backends (torchair.get_npu_backend, 'npu', 'npugraph_ex')"
        )
    return _RunTable(rows, program)


class _RunTable:
    """The table where it fits the terminal, else one entry per trace: a table squeezed
    below its natural width breaks words (``reduce-ove`` / ``rhead``)."""

    def __init__(self, rows: Sequence[dict[str, Any]], program: str) -> None:
        self.rows, self.program = rows, program

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = _table(self.rows, self.program)
        natural = Measurement.get(console, options.update_width(10_000), table).maximum  # unclamped
        if natural <= options.max_width:
            yield table
            return
        yield plain(f"fxlab run · {self.program} · {len(self.rows)} trace(s)", style="table.title")
        for row in self.rows:
            status = str(row.get("status", "?"))
            yield Text.assemble((visible(f"{row['folder']}  {_compiled(row)}  "), "bold"), (status, _STATUS_STYLE.get(status, "")))
            details = f"torch.compile → call {compile_and_call(row)} · {row.get('backend', '?')} · {row.get('mode') or '-'} · {row.get('graphs', 0)} graph(s)"
            yield Padding(plain(details), (0, 0, 0, 2))  # wrapped lines keep the indent


def _compiled(row: dict[str, Any]) -> str:
    return row.get("function", "?") + (f" (recompile {row['compile_index']})" if row.get("compile_index") else "")


def _table(rows: Sequence[dict[str, Any]], program: str) -> Table:
    table = Table(
        title=plain(f"fxlab run · {program} · {len(rows)} trace(s)", style="table.title"),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    for header in ("trace", "compiled", "torch.compile → call", "backend", "mode", "graphs", "status"):
        table.add_column(header, overflow="fold")
    for row in rows:
        cells = [row["folder"], _compiled(row), compile_and_call(row), row.get("backend", "?"), row.get("mode") or "-"]
        status = str(row.get("status", "?"))
        table.add_row(*(plain(c) for c in cells), plain(row.get("graphs", 0)), Text(status, style=_STATUS_STYLE.get(status, "")))
    return table


def short_location(location: object) -> str:
    """``file.py:line`` of a location (the table is narrow; the manifest keeps the path)."""
    text = str(location or "?")
    return text.rsplit("/", 1)[-1]


def compile_and_call(row: dict[str, Any]) -> str:
    """``infer.py:31 → 40``: the torch.compile line, then the call that compiled (its
    line alone when in the same file)."""
    compiled, called = short_location(row.get("compiled_at")), short_location(row.get("called_at"))
    file, _, line = called.rpartition(":")
    return f"{compiled} → {line if file and compiled.rpartition(':')[0] == file else called}"


def run_lines(rows: Sequence[dict[str, Any]]) -> RenderableType:
    """Under the table: why each recompile happened, and what fxlab could not trace."""
    lines: list[RenderableType] = []
    for row in rows:
        if row.get("compile_index"):
            why = "; ".join(row.get("reasons") or []) or "Dynamo met code it had not compiled before (no guard failed)"
            lines.append(plain(f"{row['folder']}: recompiled after {row.get('previous') or 'an earlier compile'}: {why}"))
        if row.get("error"):
            lines.append(
                plain(f"{row['folder']}: fxlab could not trace this compile (the program went on): {row['error']}", style="yellow")
            )
    return Group(*lines)


def run_page(program: str, reports: Sequence[tuple[dict[str, Any], str]]) -> str:
    """One self-contained HTML page with every trace's report: (row, its HTML report)."""
    pages = [(row["folder"], f"{row['folder']} · {row.get('function', '?')}", _caption(row), report) for row, report in reports]
    return framed_pages(f"fxlab run · {program} · {len(pages)} trace(s)", "trace", pages)


def _caption(row: dict[str, Any]) -> str:
    caption = f"torch.compile at {row.get('compiled_at', '?')}, compiled by the call at {row.get('called_at', '?')} · {row.get('backend', '?')} · {row.get('mode') or '-'}"
    if row.get("compile_index"):
        caption += f" · recompile: {'; '.join(row.get('reasons') or []) or 'new code'}"
    return caption
