"""torch's own warnings during a capture (Dynamo's graph-break advice above all), kept
as notes of the trace instead of being printed ahead of fxlab's views.

torch logs through handlers it puts on its top-level loggers (``torch``,
``torch._dynamo``, ...), which do not propagate. While :func:`torch_warnings_as_notes`
is active those handlers are swapped for one that records; they are put back after.
With ``TORCH_LOGS`` set the user asked for torch's logs, and they are left alone.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator


class _Recorder(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.notes: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            lines = [line.strip() for line in record.getMessage().splitlines() if line.strip()]
        except Exception:  # a record whose message cannot be formatted
            return
        note = f"torch ({record.name}): {lines[0] if lines else ''}"
        if len(lines) > 1 and lines[0].rstrip().endswith(":"):  # "consider setting:" then the setting
            note += f" {lines[1]}"
        if note not in self.notes:
            self.notes.append(note)


# torch's structured-trace logger (TORCH_TRACE) carries no warnings, and torch builds
# every trace payload (whole graphs printed) while it has a handler: it is left alone.
_STRUCTURED_TRACE_LOGGER = "torch.__trace"


def _torch_loggers() -> list[logging.Logger]:
    names = ["torch", *(n for n in logging.Logger.manager.loggerDict if n.startswith("torch.") and n != _STRUCTURED_TRACE_LOGGER)]
    loggers = [logging.getLogger(n) for n in names]
    return [logger for logger in loggers if logger.handlers]


@contextlib.contextmanager
def torch_warnings_as_notes() -> Iterator[list[str]]:
    """Yield the list the warnings torch logs in the block are added to, as notes."""
    recorder = _Recorder()
    if os.environ.get("TORCH_LOGS"):
        yield recorder.notes
        return
    saved = [(logger, list(logger.handlers)) for logger in _torch_loggers()]
    for logger, _ in saved:
        logger.handlers = [recorder]
    try:
        yield recorder.notes
    finally:
        for logger, handlers in saved:
            logger.handlers = handlers
