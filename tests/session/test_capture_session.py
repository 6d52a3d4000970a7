"""fxlab.session: one request in, one capture out, with what it needs opened around it
and closed after; the public ``fxlab.trace``."""
from __future__ import annotations

import sys

import pytest
import torch

import fxlab
from fxlab.capture.request import TraceRequest
from fxlab.errors import FxlabError, ModelLoadError, UsageError
from fxlab.session import CaptureSession, capture


def _double(x):
    return (x * 2,)


def test_a_session_opens_the_stand_ins_for_the_capture_only_and_says_what_it_does():
    heard: list[str] = []
    request = TraceRequest(_double, (torch.ones(3),), stages=("dynamo", "functional"))
    with CaptureSession(request, progress=heard.append) as session:
        assert "torchair" in sys.modules or session.torchair is None  # the stand-in is importable inside
        import torchair  # noqa: F401 - fxlab's stand-in, as a model file imports it

        captured = session.capture()
    assert "torchair" not in sys.modules and "torch_npu" not in sys.modules  # nothing left behind
    assert heard[0] == "loading model" and "running _double eagerly and under torch.compile" in heard
    trace = captured.trace
    assert trace.model == "_double" and trace.stages == ["dynamo", "functional"] and trace.check is not None and trace.check.ok
    assert [g.index for g in captured.graphs] == [0] and set(captured.graphs[0].modules) == {"dynamo", "functional"}
    assert captured.loaded is not None and captured.loaded.fn is _double


def test_the_public_trace_is_the_sessions_trace():
    inputs = (torch.arange(4.0),)
    public = fxlab.trace(_double, inputs, stages=("functional",), verify=False)
    session = capture(TraceRequest(_double, inputs, stages=("functional",), verify=False)).trace
    assert [s.nodes for g in public.graphs for s in g.stages.values()] == [s.nodes for g in session.graphs for s in g.stages.values()]
    assert public.graphs[0].stages["functional"].targets() == ["aten.mul.Tensor"]


def test_the_public_trace_sends_a_multi_rank_model_to_the_command_line():
    with pytest.raises(UsageError, match=r"nproc=2: a multi-rank trace runs one process per rank; use `fxlab trace MODEL.py --nproc 2`"):
        fxlab.trace("model.py", nproc=2)


def test_a_model_object_without_inputs_is_refused_with_the_fix():
    with pytest.raises(ModelLoadError, match="_double: no inputs were given. Pass the example inputs"):
        fxlab.trace(_double)


def _exits(x):
    sys.exit(3)


def test_a_model_that_exits_while_it_runs_is_an_error_naming_the_model():
    with pytest.raises(FxlabError, match=r"the model called exit \(SystemExit: 3\) while fxlab ran it") as raised:
        fxlab.trace(_exits, (torch.ones(1),))
    assert "Remove the exit() / sys.exit() call from the code _exits runs." in str(raised.value)


SETS_DYNAMO_CONFIG = """
import torch
import torch._dynamo

torch._dynamo.config.capture_scalar_outputs = True  # `.item()` stays in the graph


def f(x):
    return x * x.sum().item()


model = f
example_inputs = (torch.ones(3),)
"""


def test_what_a_model_file_sets_in_dynamos_config_holds_for_its_capture_only(write_model):
    path = write_model(SETS_DYNAMO_CONFIG)
    with torch._dynamo.config.patch(cache_size_limit=5):  # the caller's own setting
        first = fxlab.trace(path, stages=("dynamo",))
        assert torch._dynamo.config.capture_scalar_outputs is False and torch._dynamo.config.cache_size_limit == 5
        # The same function from an object: Dynamo's default breaks the graph at `.item()`.
        scope: dict = {}
        exec(SETS_DYNAMO_CONFIG.replace("torch._dynamo.config.capture_scalar_outputs = True", ""), scope)
        second = fxlab.trace(scope["f"], scope["example_inputs"], stages=("dynamo",))
    assert [len(t.graphs) for t in (first, second)] == [1, 2]
    assert "item" in " ".join(first.graphs[0].stages["dynamo"].targets())


class _WritesItsCache(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, cache: torch.Tensor) -> torch.Tensor:
        cache.add_(x.sum())
        return self.proj(x) + cache


@pytest.mark.parametrize("mode", ["max-autotune", "reduce-overhead"])
def test_a_model_traced_under_inference_mode_is_traced_as_outside_it(mode: str) -> None:
    # Serving code runs its model under torch.inference_mode(): its tensors keep no version
    # counter and take no in-place write outside it; fxlab's passes and checks run outside it.
    with torch.inference_mode():
        inside = fxlab.trace(_WritesItsCache(), (torch.ones(1, 4), torch.zeros(4)), mode=mode)
        assert torch.is_inference_mode_enabled()
    assert inside.status == "ok" and [g.error for g in inside.graphs] == [None], inside.notes
    outside = fxlab.trace(_WritesItsCache(), (torch.ones(1, 4), torch.zeros(4)), mode=mode)
    assert list(inside.graphs[0].stages) == list(outside.graphs[0].stages)
    assert [n.target for n in inside.graphs[0].stages["functional"].nodes] == [n.target for n in outside.graphs[0].stages["functional"].nodes]
