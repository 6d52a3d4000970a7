"""The one place fxlab prints: rich consoles for results (stdout) and messages (stderr).

``NO_COLOR`` is honoured by rich itself; ``FXLAB_WIDTH`` pins the width (tests, CI logs).
"""

from __future__ import annotations

import os
from functools import lru_cache

from rich.console import Console
from rich.text import Text

from fxlab.viz.safe_text import visible


def _width() -> int | None:
    value = os.environ.get("FXLAB_WIDTH")
    return int(value) if value and value.isdigit() else None


@lru_cache(maxsize=1)
def out() -> Console:
    return Console(width=_width(), highlight=False, soft_wrap=False)


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
