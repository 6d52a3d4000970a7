"""torch's graph-break warnings become notes of the trace, not lines on stderr before
fxlab's views."""
from __future__ import annotations

import logging
import os
import subprocess
import sys

from fxlab.capture.torch_logs import torch_warnings_as_notes

BREAKING = """
import torch


def model(x):
    y = x * 3
    k = y.max().item()  # a graph break of its own
    return y / (k + 2.0)


example_inputs = (torch.randn(5),)
"""


def test_handlers_are_swapped_and_put_back(monkeypatch):
    monkeypatch.delenv("TORCH_LOGS", raising=False)
    import torch  # noqa: F401 - installs torch's handlers

    logger = logging.getLogger("torch._dynamo")
    before = list(logger.handlers)
    with torch_warnings_as_notes() as notes:
        logging.getLogger("torch._dynamo.some.module").warning("Graph break from `x`, consider setting:\n    flag = True\nmore")
        logging.getLogger("torch._dynamo.some.module").info("not a warning")
    assert notes == ["torch (torch._dynamo.some.module): Graph break from `x`, consider setting: flag = True"]
    assert logger.handlers == before


def test_graph_break_advice_is_a_note_of_the_trace(write_model):
    """In a process of its own: torch gives some advice once per process."""
    env = {k: v for k, v in os.environ.items() if k != "TORCH_LOGS"}
    proc = subprocess.run([sys.executable, "-m", "fxlab", "trace", str(write_model(BREAKING)), "--summary"],
                          capture_output=True, text=True, env={**env, "FXLAB_WIDTH": "300", "NO_COLOR": "1"}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Graph break" not in proc.stderr
    assert "torch (torch._dynamo.variables.tensor): Graph break from `Tensor.item()`, consider setting: torch._dynamo.config.capture_scalar_outputs = True" in proc.stdout



def test_structured_trace_logger_is_left_alone(monkeypatch):
    """torch builds a structured-trace payload (a whole graph printed) for every event
    while its trace logger has a handler. Its lazy handler removes itself at the first
    event when no trace was asked for; swapped for fxlab's recorder, it would stay on."""
    monkeypatch.delenv("TORCH_LOGS", raising=False)
    from torch._logging._internal import LazyTraceHandler, trace_log, trace_structured

    monkeypatch.setattr(trace_log, "handlers", [LazyTraceHandler(None)])  # as after `import torch`
    built: list[str] = []
    with torch_warnings_as_notes():
        for _ in range(3):
            trace_structured("artifact", metadata_fn=lambda: {"name": "x", "encoding": "string"}, payload_fn=lambda: built.append("payload"))
    assert len(built) == 1 and trace_log.handlers == []
