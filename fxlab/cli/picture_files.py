"""Writing what :mod:`fxlab.viz` renders: the trace's pictures (DOT text, drawn with
graphviz's ``dot``) and the HTML report. A ``dot`` that fails or runs too long leaves no
half-written picture; the stage is drawn again more folded. Returns the files written
and messages; the command prints them.
"""

from __future__ import annotations

from pathlib import Path

from fxlab.capture.trace import Trace
from fxlab.cli import graphviz  # by module: tests stand in for its dot
from fxlab.cli.files import write_atomic
from fxlab.cli.graphviz import DrawProgress, write_text
from fxlab.viz.dot import short_source
from fxlab.viz.fold import FoldOptions
from fxlab.viz.html_report import html_report
from fxlab.viz.pictures import FALLBACK_CAP, Picture, stage_picture, trace_pictures


def write_pictures(
    trace: Trace, out_dir: str | Path, fmt: str, options: FoldOptions | None = None, progress: DrawProgress | None = None
) -> tuple[list[Path], list[str]]:
    """Write ``graph_<k>/<stage>.dot`` and, with graphviz, ``graph_<k>/<stage>.<fmt>`` for
    each stage, folded. A picture ``dot`` cannot draw is drawn again with everything
    folded to ``FALLBACK_CAP`` boxes. Returns the files written and messages for the user;
    ``progress(done, total, path, seconds, error)`` is called as each picture is drawn."""
    graphviz.check_format(fmt)
    folder = Path(out_dir)
    every = trace_pictures(trace, options)
    pictures = [p for p in every if p.dot]
    messages = [f"graph {p.graph} {p.stage}: {note}" for p in pictures for note in p.notes]
    if len(pictures) < len(every):  # --focus names a node some stages do not have
        left = ", ".join(f"graph {p.graph} {p.stage}" for p in every if not p.dot)
        messages.append(
            f"--focus {options.focus if options else ''}: drawn in {len(pictures)} of {len(every)} stage pictures; not in {left}"
        )
    jobs = [(folder / f"graph_{p.graph}" / f"{p.stage}.{fmt}", p) for p in pictures]
    dot_files = [write_text(path.with_suffix(".dot"), p.dot) for path, p in jobs]
    if fmt == "dot" or not jobs:
        return dot_files, messages
    if graphviz.dot_binary() is None:
        return dot_files, messages + [graphviz.missing_dot_message(dot_files)]
    drawn = graphviz.draw_all([(dot_file, path) for dot_file, (path, _) in zip(dot_files, jobs)], fmt, progress)
    files = list(dot_files)
    for (path, picture), error in zip(jobs, drawn):
        if error is None:
            files.append(path)
            continue
        retry = _fallback(trace, picture, path, fmt)
        files += [path] if retry is None else []
        messages.append(
            error
            + (
                f" Drawn again with everything folded to {FALLBACK_CAP} boxes."
                if retry is None
                else f" The more folded picture failed too ({retry}); no picture."
            )
        )
    return files, messages


def _fallback(trace: Trace, picture: Picture, path: Path, fmt: str) -> str | None:
    """Draw a stage again, more folded (its .dot file then holds the folded text)."""
    graph = next(g for g in trace.graphs if g.index == picture.graph)
    model = short_source(trace.model + ":").rstrip(":")
    folded = stage_picture(graph, picture.stage, model, FoldOptions(cap=FALLBACK_CAP))
    assert folded is not None
    return graphviz.run_dot(write_text(path.with_suffix(".dot"), folded.dot), path, fmt)


def write_html_report(trace: Trace, path: str | Path) -> Path:
    """Write the report of ``trace`` (:func:`fxlab.viz.html_report.html_report`) to ``path``."""
    out = Path(path)
    if out.parent != Path(""):
        out.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(out, html_report(trace))
