"""torch's graph-break warnings become notes of the trace, not lines on stderr before
fxlab's views."""
from __future__ import annotations

import logging

from fxlab.capture.torch_logs import torch_warnings_as_notes
from tests.cli.cli_runner import run_main

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


def test_graph_break_advice_is_a_note_of_the_trace(write_model, monkeypatch):
    monkeypatch.delenv("TORCH_LOGS", raising=False)
    code, out, err = run_main("trace", str(write_model(BREAKING)), "--summary")
    assert code == 0, err
    assert "Graph break" not in err
    assert "torch (torch._dynamo" in out and "Graph break from `Tensor.item()`" in " ".join(out.split())
