"""Capturing in tests exactly as the command line does: through one capture session
(:mod:`fxlab.session`), from a :class:`~fxlab.capture.request.TraceRequest`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from fxlab.capture.pipeline import Capture
from fxlab.capture.request import TraceRequest
from fxlab.capture.trace import Trace
from fxlab.session import CaptureSession, capture


def capture_of(model: Any, inputs: Any = None, **fields: Any) -> Capture:
    """The capture of ``model`` (a model file's path, or a module / function called on
    ``inputs``): the trace and the live graphs its checks ran on. ``fields`` are the
    request's (``stages``, ``mode``, ``verify``, ``converter``, ``plugins``, ...)."""
    return capture(TraceRequest(model, inputs, **fields))


def trace_of(model: Any, inputs: Any = None, **fields: Any) -> Trace:
    """The trace :func:`capture_of` makes."""
    return capture_of(model, inputs, **fields).trace


@contextlib.contextmanager
def open_capture(model: Any, inputs: Any = None, **fields: Any) -> Iterator[Capture]:
    """:func:`capture_of` with its session still open in the block: code run on the live
    graphs afterwards (TorchAir's own passes or conversion, from a TorchAir session the
    caller opened) sees the same stand-ins and collectives the capture saw."""
    with CaptureSession(TraceRequest(model, inputs, **fields)) as session:
        yield session.capture()
