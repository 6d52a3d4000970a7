"""What ``fxlab run`` (and the root process of ``FXLAB_TRACE``) says when the program
ends: fxlab's notes, once each, the table of what the program compiled, and where the
run was saved; ``--html``, every trace's report in one page. On stderr: the program's
own output keeps stdout to itself."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from rich.text import Text

from fxlab.cli import console
from fxlab.cli.files import write_atomic
from fxlab.cli.run_folder import RunFolder
from fxlab.errors import OutputError
from fxlab.viz.safe_text import plain


def print_run(run: RunFolder, status: str, out: Path) -> None:
    from fxlab.viz.program_views import run_lines, run_table  # lazy: imports torch; the run hook loads this module (fxlab-run.pth)

    rows = run.rows()
    notes = [*run.notes, *(note for child in run.children() for note in child["notes"])]
    notes += [str(note) for row in rows for note in row.get("config_notes") or []]  # the same config compiles often: said once
    for note in dict.fromkeys(notes):
        console.note(note)
    err = console.err()
    err.print(run_table(rows, run.program), crop=False)
    err.print(run_lines(rows), crop=False)
    for line in partial_lines(rows):
        err.print(line, crop=False)
    pair = _pair_to_compare(rows)
    hint = f"; compare two: fxlab diff {shlex.quote(str(out / pair[0]))} {shlex.quote(str(out / pair[1]))}" if pair else ""
    console.note(f"run saved to {out}/ (manifest.json, {len(rows)} trace folder(s){hint}) · status: {status}")


def partial_lines(rows: list[dict[str, Any]]) -> list[Text]:
    """Under the table: why each partial or unverified trace is so, briefly (the first
    reason; the trace's manifest row has them all, ``fxlab trace``'s words)."""
    lines = []
    for row in rows:
        status = row.get("status")
        key = f"why_{status}"
        reasons = [str(reason) for reason in row.get(key) or []]
        if status in ("partial", "unverified") and reasons:
            more = f" (and {len(reasons) - 1} more: the manifest's {key})" if len(reasons) > 1 else ""
            lines.append(plain(f"{row['folder']}: {status}: {reasons[0]}{more}", style="yellow" if status == "partial" else "cyan"))
    return lines


def _pair_to_compare(rows: list[dict[str, Any]]) -> tuple[str, str] | None:
    """The first recompile and the trace before it, else the first two traces."""
    for row in rows:
        if row.get("previous"):
            folder = str(row["folder"])
            prefix = folder.rpartition("/")[0]
            return f"{prefix}/{row['previous']}" if prefix else str(row["previous"]), folder
    return (rows[0]["folder"], rows[1]["folder"]) if len(rows) > 1 else None


def write_run_page(run: RunFolder, out: Path, html: Path) -> None:
    """Every trace's HTML report in one page, read back from the saved run."""
    # lazy: imports torch; the run hook loads this module (fxlab-run.pth)
    from fxlab.capture.serialize import load_trace
    from fxlab.viz.html_report import html_report
    from fxlab.viz.program_views import run_page

    reports: list[tuple[dict[str, Any], str]] = []
    for row in run.rows():
        if row.get("status") != "failed":
            reports.append((row, html_report(load_trace(out / row["folder"]))))
    try:
        html.parent.mkdir(parents=True, exist_ok=True)  # as `fxlab trace --html` makes it
        write_atomic(html, run_page(run.program, reports))
    except OSError as exc:
        raise OutputError(f"--html {html} cannot be written ({exc.strerror or exc}). Choose a writable path.") from exc
    console.note(f"HTML report of {len(reports)} trace(s) written to {html}")
