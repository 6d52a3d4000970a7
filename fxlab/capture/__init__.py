"""Capture: load a model file, compile it with fxlab's capturing backend, and record
the Trace (plain data) of every Dynamo graph's stages."""

from __future__ import annotations

from fxlab.capture.loader import LoadedModel, load_model, load_python_file
from fxlab.capture.pipeline import ALL_STAGES, capture_trace, validate_stages
from fxlab.capture.trace import CheckResult, GraphTrace, NodeRecord, Provenance, StageTrace, TensorMeta, Trace

__all__ = [
    "ALL_STAGES",
    "CheckResult",
    "GraphTrace",
    "LoadedModel",
    "NodeRecord",
    "Provenance",
    "StageTrace",
    "TensorMeta",
    "Trace",
    "capture_trace",
    "load_model",
    "load_python_file",
    "validate_stages",
]
