"""Where an FX node came from in the user's code: the last frame of its ``stack_trace``.

Dynamo stores, on every node it captures (and FX passes copy it on), the Python stack
that made it as text in ``node.meta["stack_trace"]``; its last ``File "...", line N``
frame is the user's line. The stage records, the conversion to Ascend IR and the scope
report all read it; parsing is done here, once per distinct trace (a model repeats the
same few hundred traces over thousands of nodes), and a node's ``file:line`` is cached
in its meta under :data:`SOURCE_KEY`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

SOURCE_KEY = "fxlab.source"
NO_FRAME: tuple[None, None, None] = (None, None, None)


@lru_cache(maxsize=4096)
def last_frame(stack_trace: str) -> tuple[str | None, int | None, str | None]:
    """(file, line, code) of the last frame of ``stack_trace``; ``code`` is the source
    line printed under it, if any. :data:`NO_FRAME` when there is no readable frame."""
    lines = stack_trace.rstrip().splitlines()
    for i in range(len(lines) - 1, -1, -1):
        text = lines[i].strip()
        if text.startswith('File "'):
            try:
                file = text.split('"')[1]
                line = int(text.split("line ")[1].split(",")[0])
            except (IndexError, ValueError):
                return NO_FRAME
            code = lines[i + 1].strip() if i + 1 < len(lines) else None
            return file, line, code
    return NO_FRAME


def location(file: str | None, line: int | None) -> str | None:
    """``file:line``, or ``None`` when either is unknown."""
    return f"{file}:{line}" if file and line else None


def parse_source(node: Any) -> str | None:
    """``file:line`` of the user code that produced the FX ``node``, parsed from its
    stack trace (the cache is not read)."""
    stack_trace = node.meta.get("stack_trace")
    file, line, _ = last_frame(stack_trace) if stack_trace else NO_FRAME
    return location(file, line)


def node_source(node: Any) -> str | None:
    """``file:line`` of the user code that produced the FX ``node``: its cached
    :data:`SOURCE_KEY`, else parsed from its stack trace."""
    cached = node.meta.get(SOURCE_KEY)
    return cached if cached is not None else parse_source(node)
