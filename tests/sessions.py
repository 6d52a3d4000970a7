"""Capturing in tests exactly as the command line does: through one capture session
(:mod:`fxlab.session`), from a :class:`~fxlab.capture.request.TraceRequest`."""

from __future__ import annotations

from typing import Any

from fxlab.capture.pipeline import Capture
from fxlab.capture.request import TraceRequest
from fxlab.capture.trace import Trace
from fxlab.session import capture


def capture_of(model: Any, inputs: Any = None, **fields: Any) -> Capture:
    """The capture of ``model`` (a model file's path, or a module / function called on
    ``inputs``): the trace and the live graphs its checks ran on. ``fields`` are the
    request's (``stages``, ``mode``, ``verify``, ``converter``, ``plugins``, ...)."""
    return capture(TraceRequest(model, inputs, **fields))


def trace_of(model: Any, inputs: Any = None, **fields: Any) -> Trace:
    """The trace :func:`capture_of` makes."""
    return capture_of(model, inputs, **fields).trace
