"""Graphviz's ``dot`` binary: probed once, run as a subprocess to turn DOT text (made by
:mod:`fxlab.viz`) into SVG or PNG. Without it, the ``.dot`` text is kept and the user is
told how to get graphviz. Only the command line writes files and runs programs."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from fxlab.errors import UsageError

PICTURE_FORMATS = ("svg", "png", "dot")
# Folded pictures take dot well under a second; one still running after this is stopped
# and the stage drawn again more folded.
DOT_TIMEOUT_SECONDS = 60.0
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
    dot_files = [write_text(job.path.with_suffix(".dot"), job.dot_text) for job in jobs]
    if fmt == "dot" or not jobs:
        return dot_files, []
    if dot_binary() is None:
        return dot_files, [missing_dot_message(dot_files)]
    with ThreadPoolExecutor(max_workers=_workers(len(jobs))) as pool:
        results = list(pool.map(lambda pair: run_dot(pair[0], pair[1].path, fmt), zip(dot_files, jobs)))
    files = list(dot_files)
    messages = []
    for job, error in zip(jobs, results):
        if error is None:
            files.append(job.path)
        else:
            messages.append(error)
    return files, messages


def run_dot(dot_file: Path, out: Path, fmt: str, timeout: float | None = None) -> str | None:
    """Draw ``dot_file`` into ``out``; the reason as a message when that fails. dot writes
    beside ``out`` and the file is renamed when dot succeeds, so a failing or stopped dot
    leaves no half-written picture (and removes an old one of the same name)."""
    binary = dot_binary()
    if binary is None:
        return missing_dot_message([dot_file])
    limit = DOT_TIMEOUT_SECONDS if timeout is None else timeout
    partial = out.with_name(out.name + ".part")
    try:
        done = subprocess.run([binary, f"-T{fmt}", "-o", str(partial), str(dot_file)], capture_output=True, timeout=limit, check=False)
    except subprocess.TimeoutExpired:
        _remove(partial, out)
        return f"dot took over {limit:.0f} s on {dot_file} and was stopped; no {fmt} was left, the .dot file is kept."
    except OSError as exc:
        _remove(partial, out)
        return f"could not run {binary} on {dot_file} ({exc}); the .dot file is kept."
    if done.returncode != 0:
        _remove(partial, out)
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"dot failed on {dot_file} ({reason[0] if reason else f'exit code {done.returncode}'}); no {fmt} was left, the .dot file is kept."
    os.replace(partial, out)
    return None


def _remove(*paths: Path) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


DrawProgress = Callable[[int, int, Path, float, str | None], None]


def draw_all(pairs: Sequence[tuple[Path, Path]], fmt: str, progress: DrawProgress | None = None) -> list[str | None]:
    """:func:`run_dot` for each (dot file, picture), in parallel; ``progress`` hears of
    each as it finishes (count done, total, picture, seconds, error)."""

    def timed(pair: tuple[Path, Path]) -> tuple[float, str | None]:
        start = time.perf_counter()
        error = run_dot(pair[0], pair[1], fmt)
        return time.perf_counter() - start, error

    results: list[str | None] = [None] * len(pairs)
    with ThreadPoolExecutor(max_workers=_workers(len(pairs))) as pool:
        futures = {pool.submit(timed, pair): i for i, pair in enumerate(pairs)}
        for done, future in enumerate(as_completed(futures), 1):
            index = futures[future]
            seconds, results[index] = future.result()
            if progress is not None:
                progress(done, len(pairs), pairs[index][1], seconds, results[index])
    return results


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` (its folder made first)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _workers(count: int) -> int:
    return max(1, min(count, os.cpu_count() or 1))
