"""Graphviz's ``dot`` binary: probed once, run as a subprocess to turn DOT text into
SVG or PNG. Without it, callers keep the ``.dot`` text and say how to get graphviz."""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from fxlab.errors import UsageError

PICTURE_FORMATS = ("svg", "png", "dot")
# dot's layout time grows faster than linearly; past this it can take minutes per graph.
DOT_TIMEOUT_SECONDS = 300.0
INSTALL_HINT = (
    "install graphviz to get pictures (Debian/Ubuntu: `apt-get install graphviz`; "
    "macOS: `brew install graphviz`; conda: `conda install graphviz`), or open the .dot "
    "files in any graphviz viewer"
)


@functools.lru_cache(maxsize=1)
def dot_binary() -> str | None:
    """The path of graphviz's ``dot``, looked up once per process (None when absent)."""
    return shutil.which("dot")


def check_format(fmt: str) -> str:
    if fmt not in PICTURE_FORMATS:
        raise UsageError(f"unknown picture format {fmt!r}: use one of {', '.join(PICTURE_FORMATS)}.")
    return fmt


@dataclass
class RenderJob:
    """One picture to draw: the DOT text and the file it goes to (``x.svg``/``x.png``)."""

    dot_text: str
    path: Path


def missing_dot_message(dot_files: Sequence[Path]) -> str:
    shown = ", ".join(str(p) for p in dot_files[:3]) + (f" and {len(dot_files) - 3} more" if len(dot_files) > 3 else "")
    return f"graphviz `dot` is not on PATH, so only DOT text was written ({shown}); {INSTALL_HINT}."


def render(dot_text: str, path: Path, fmt: str) -> tuple[list[Path], str | None]:
    """Write ``path.with_suffix('.dot')`` and, when ``dot`` is there and ``fmt`` is svg or
    png, the picture at ``path``. Returns the files written and a message when the picture
    could not be drawn (``dot`` missing, failing or too slow)."""
    files, messages = render_many([RenderJob(dot_text, Path(path))], check_format(fmt))
    return files, (messages[0] if messages else None)


def render_many(jobs: Sequence[RenderJob], fmt: str) -> tuple[list[Path], list[str]]:
    """:func:`render` for several pictures; ``dot`` runs in parallel, one process each."""
    check_format(fmt)
    dot_files = [_write_text(job.path.with_suffix(".dot"), job.dot_text) for job in jobs]
    if fmt == "dot" or not jobs:
        return dot_files, []
    if dot_binary() is None:
        return dot_files, [missing_dot_message(dot_files)]
    with ThreadPoolExecutor(max_workers=_workers(len(jobs))) as pool:
        results = list(pool.map(lambda pair: _run_dot(pair[0], pair[1].path, fmt), zip(dot_files, jobs)))
    files = list(dot_files)
    messages = []
    for job, error in zip(jobs, results):
        if error is None:
            files.append(job.path)
        else:
            messages.append(error)
    return files, messages


def svg_texts(dot_texts: Sequence[str]) -> list[str | None]:
    """SVG markup for each DOT text (None where ``dot`` is missing or failed)."""
    if dot_binary() is None or not dot_texts:
        return [None] * len(dot_texts)
    with ThreadPoolExecutor(max_workers=_workers(len(dot_texts))) as pool:
        return list(pool.map(_svg_of, dot_texts))


def _svg_of(dot_text: str) -> str | None:
    binary = dot_binary()
    if binary is None:
        return None
    try:
        done = subprocess.run([binary, "-Tsvg"], input=dot_text.encode(), capture_output=True, timeout=DOT_TIMEOUT_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


def _run_dot(dot_file: Path, out: Path, fmt: str) -> str | None:
    """Draw ``dot_file`` into ``out``; the reason as a message when that fails."""
    binary = dot_binary()
    if binary is None:
        return missing_dot_message([dot_file])
    try:
        done = subprocess.run([binary, f"-T{fmt}", "-o", str(out), str(dot_file)], capture_output=True, timeout=DOT_TIMEOUT_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        return f"dot took over {DOT_TIMEOUT_SECONDS:.0f} s on {dot_file} and was stopped; the .dot file is kept (try `sfdp -T{fmt}` for large graphs)."
    except OSError as exc:
        return f"could not run {binary} on {dot_file} ({exc}); the .dot file is kept."
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"dot failed on {dot_file} ({reason[0] if reason else f'exit code {done.returncode}'}); the .dot file is kept."
    return None


def _write_text(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _workers(count: int) -> int:
    return max(1, min(count, os.cpu_count() or 1))
