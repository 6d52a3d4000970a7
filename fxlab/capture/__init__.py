"""Capture: load a model, compile it with fxlab's capturing backend, and record the Trace
(plain data) of every Dynamo graph's stages."""

from __future__ import annotations

from fxlab.capture.loader import LoadedModel, load_model, load_object, load_python_file
from fxlab.capture.pipeline import Capture, capture_trace
from fxlab.capture.record_graph import LiveGraph
from fxlab.capture.request import TraceRequest, validate_stages
from fxlab.capture.serialize import load_trace
from fxlab.capture.trace import CheckResult, GraphTrace, NodeRecord, Provenance, StageTrace, TensorMeta, Trace
from fxlab.stage_names import ALL_STAGES

__all__ = [
    "ALL_STAGES",
    "Capture",
    "CheckResult",
    "GraphTrace",
    "LiveGraph",
    "LoadedModel",
    "NodeRecord",
    "Provenance",
    "StageTrace",
    "TensorMeta",
    "Trace",
    "TraceRequest",
    "capture_trace",
    "load_model",
    "load_object",
    "load_python_file",
    "load_trace",
    "validate_stages",
]
