"""The capture session: one :class:`~fxlab.capture.request.TraceRequest` in, one trace
out, with everything the capture needs opened around it (TorchAir-compatible stand-ins,
TorchAir's collectives and own code, torch's warnings as notes)."""

from __future__ import annotations

from fxlab.capture.request import TraceRequest
from fxlab.session.capture_session import CaptureSession, capture, trace

__all__ = ["CaptureSession", "TraceRequest", "capture", "trace"]
