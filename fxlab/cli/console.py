"""The one place fxlab prints: rich consoles for results (stdout) and messages (stderr).

``NO_COLOR`` is honoured by rich itself; ``FXLAB_WIDTH`` pins the width (tests, CI logs).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

from rich.console import Console
from rich.live import Live
from rich.spinner import Spinner
from rich.text import Text

from fxlab.viz.safe_text import visible


def _width() -> int | None:
    value = os.environ.get("FXLAB_WIDTH")
    return int(value) if value and value.isdigit() else None


@lru_cache(maxsize=1)
def out() -> Console:
    return Console(width=_width(), highlight=False, soft_wrap=False)


def print_json(text: str) -> None:
    """JSON on stdout, indented, every non-ASCII character escaped: a bidi control or line
    separator in a name must not reorder or break the terminal's lines (the same JSON for a parser)."""
    out().print_json(text, ensure_ascii=True)


@lru_cache(maxsize=1)
def err() -> Console:
    return Console(stderr=True, width=_width(), highlight=False)


# Messages carry user text (paths, op names, exception messages): they are printed as
# Text, never parsed as markup, with control characters shown escaped.
def error(message: str) -> None:
    err().print(Text.assemble(("error:", "bold red"), " ", visible(message)), highlight=False)


def note(message: str) -> None:
    err().print(Text.assemble(("note:", "dim"), " ", visible(message)), highlight=False)


def warn(message: str) -> None:
    err().print(Text.assemble(("warning:", "yellow"), " ", visible(message)), highlight=False)


# How often the progress line redraws itself from its own thread. rich's Status redraws
# 12.5 times a second, and each redraw takes the interpreter from the capture it reports
# on: that made a 32-layer `fxlab trace` 4% slower (BENCHMARKS.md, "The progress line").
# Once a second, with the seconds so far, still shows that fxlab is at work.
PROGRESS_REDRAWS_PER_SECOND = 1.0
_PROGRESS_FRAMES = Spinner("dots").frames


class ProgressLine:
    """What fxlab is doing now, and the seconds since the block began: one line on
    stderr, shown while a :func:`progress` block runs and gone after it."""

    def __init__(self, message: str) -> None:
        self.live: Live | None = None
        self.message, self.since = message, time.monotonic()

    def update(self, message: str) -> None:
        """Say ``message`` from now on, shown at once."""
        changed, self.message = message != self.message, message
        if changed and self.live is not None:
            self.live.refresh()

    def __rich__(self) -> Text:
        seconds = int(time.monotonic() - self.since)
        frame = _PROGRESS_FRAMES[seconds % len(_PROGRESS_FRAMES)]
        return Text.assemble((frame, "green"), " ", visible(self.message), (f"  {seconds} s" if seconds else "", "dim"))


@contextmanager
def progress(message: str) -> Iterator[ProgressLine]:
    """A progress line on stderr for the block (on a terminal; nothing elsewhere)."""
    line = ProgressLine(message)
    with Live(line, console=err(), refresh_per_second=PROGRESS_REDRAWS_PER_SECOND, transient=True) as live:
        line.live = live
        try:
            yield line
        finally:
            line.live = None
