"""The ``aten`` stage recorded from aot_autograd's trace, against a separate make_fx trace
of the same Dynamo graph (the way it was obtained before, and still the fallback)."""
from __future__ import annotations

import contextlib
from typing import Any

import pytest
import torch
import torch.fx as fx
from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

from fxlab.capture import load_model
from fxlab.capture.backend import CapturingBackend
from fxlab.capture.stages import aten_stage
from fxlab.capture.scope_frames import point_scope_markers_at_user_code
from fxlab.compat.layer import compat_layer
from tests.conftest import EXAMPLES
from tests.sessions import capture_of


class _WithReference(CapturingBackend):
    """Also traces each Dynamo graph the old way, with make_fx, before capturing it."""

    def __init__(self) -> None:
        super().__init__(want_aten=True)
        self.references: list[fx.GraphModule] = []

    def __call__(self, gm: fx.GraphModule, example_inputs: Any) -> Any:
        point_scope_markers_at_user_code(gm)  # the backend's first step: both traces start from it
        self.references.append(aten_stage(gm, example_inputs))
        return super().__call__(gm, example_inputs)


def _compile_example(name: str, backend: CapturingBackend) -> None:
    with compat_layer(announce=lambda message: None):
        loaded = load_model(EXAMPLES / f"{name}.py")
    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(loaded.fn, backend=backend)(*loaded.args, **loaded.kwargs)


def _node_facts(node: fx.Node) -> tuple[Any, ...]:
    val = node.meta.get("val")
    vals = val if isinstance(val, (list, tuple)) else [val]
    meta = [(tuple(v.shape), v.stride(), v.dtype) if isinstance(v, torch.Tensor) else v for v in vals]
    sources = [source.name for source in node.meta.get("from_node", [])]
    return (
        node.name, node.op, str(node.target), str(node.args), str(node.kwargs), type(val).__name__, meta,
        str(node.meta.get("original_aten")), node.meta.get("stack_trace"), str(node.meta.get("nn_module_stack")), sources,
    )


def _facts(gm: fx.GraphModule) -> list[tuple[Any, ...]]:
    return [_node_facts(n) for n in gm.graph.nodes]


@pytest.mark.parametrize("example", ["inplace_ops", "my_inplace", "my_op", "npu_add_custom", "superkernel_scopes", "graph_break"])
def test_recorded_stage_equals_a_separate_make_fx_trace(example):
    backend = _WithReference()
    _compile_example(example, backend)
    assert backend.graphs and len(backend.graphs) == len(backend.references)
    for captured, reference in zip(backend.graphs, backend.references):
        assert captured.aten_retraced is None
        assert _facts(captured.modules["aten"]) == _facts(reference)


def test_inplace_ops_keep_their_inplace_form_and_later_uses_read_them():
    backend = CapturingBackend()
    _compile_example("inplace_ops", backend)
    graph = backend.graphs[0].modules["aten"].graph
    by_name = {n.name: n for n in graph.nodes}
    assert [str(n.target) for n in graph.nodes if n.op == "call_function" and str(n.target).split(".")[1].endswith("_")] == [
        "aten.mul_.Tensor", "aten.copy_.default", "aten.add_.Tensor",
    ]
    # ``h.mul_(2)`` then ``h.sum()``: the sum reads the in-place op's result, as in make_fx.
    assert by_name["sum_1"].args[0] is by_name["mul_"]


def _normalized_targets(gm: fx.GraphModule) -> list[str]:
    """What separates the two traces of the decoder: matmul's ATen decomposition reshapes
    a ``bmm`` result with ``_unsafe_view`` for plain tensors and ``view`` for the
    functional tensors functionalization receives, and ``torch.full(...).triu()``
    reaches functionalization through a ``detach``."""
    names = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    return [("aten.view.default" if t == "aten._unsafe_view.default" else t) for t in names if t != "aten.detach.default"]


def test_decoder_differs_from_make_fx_only_in_what_functionalization_receives():
    backend = _WithReference()
    _compile_example("llama_decoder", backend)
    (captured,), (reference,) = backend.graphs, backend.references
    recorded = captured.modules["aten"]
    assert captured.aten_retraced is None
    assert _normalized_targets(recorded) == _normalized_targets(reference)
    # The functional stage reshapes with ``view`` too: the recorded stage is its input.
    functional_targets = {str(n.target) for n in captured.modules["functional"].graph.nodes}
    assert "aten._unsafe_view.default" not in {str(n.target) for n in recorded.graph.nodes if "bmm" in str(n.args)}
    assert "aten.bmm.default" in functional_targets


def test_dynamic_shapes_fall_back_to_a_separate_trace():
    def fn(x: torch.Tensor) -> torch.Tensor:
        return x.mul_(2) + 1

    x = torch.randn(4, 3)
    torch._dynamo.mark_dynamic(x, 0)
    backend = CapturingBackend()
    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(fn, backend=backend)(x)
    captured = backend.graphs[0]
    assert captured.aten_retraced is not None and "symbolic" in captured.aten_retraced
    targets = [str(n.target) for n in captured.modules["aten"].graph.nodes if n.op == "call_function"]
    assert "aten.mul_.Tensor" in targets


def test_a_higher_order_operator_falls_back_to_a_separate_trace():
    """torch.cond dispatches to a mode only by a rule of its own: the recorder steps aside,
    and the aten stage is traced with make_fx, cond and its branches kept."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        return torch.cond(x.sum() > 0, lambda t: t.sin() * 2, lambda t: t.cos() - 1, (x,))

    x = torch.randn(3, 4)
    backend = CapturingBackend()
    torch._dynamo.reset()
    with torch.no_grad():
        out = torch.compile(fn, backend=backend)(x)
    torch.testing.assert_close(out, fn(x))
    (captured,) = backend.graphs
    assert captured.aten_retraced == "a higher-order operator (cond)"
    targets = [str(n.target) for n in captured.modules["aten"].graph.nodes if n.op == "call_function"]
    assert "cond" in targets


def test_dynamo_graph_and_mode_stack_are_left_as_found():
    seen: list[tuple[list[str], fx.GraphModule]] = []

    class Watching(CapturingBackend):
        def __call__(self, gm: fx.GraphModule, example_inputs: Any) -> Any:
            before = [n.name for n in gm.graph.nodes]
            compiled = super().__call__(gm, example_inputs)
            seen.append((before, gm))
            return compiled

    _compile_example("inplace_ops", Watching())
    (before, gm), = seen
    assert [n.name for n in gm.graph.nodes] == before
    assert _get_current_dispatch_mode_stack() == []


def test_a_failing_aot_trace_leaves_no_recording_mode_behind():
    lib = torch.library.Library("fxlab_rec_test", "FRAGMENT")  # noqa: TOR901 - a throwaway op
    lib.define("no_meta(Tensor x) -> Tensor")
    lib.impl("no_meta", lambda x: x + 1, "CPU")

    def fn(x: torch.Tensor) -> torch.Tensor:
        return torch.ops.fxlab_rec_test.no_meta(x.mul_(2))

    torch._dynamo.reset()
    with contextlib.suppress(Exception), torch.no_grad():
        torch.compile(fn, backend=CapturingBackend())(torch.randn(3))
    assert _get_current_dispatch_mode_stack() == []


def test_a_retraced_aten_stage_is_noted_in_the_trace(monkeypatch):
    from fxlab.capture import aten_recorder

    def refuse(self, func, args, kwargs, out):  # type: ignore[no-untyped-def]
        raise aten_recorder.RecordingAborted("an op it cannot map")

    monkeypatch.setattr(aten_recorder._Recording, "op", refuse)
    captured = capture_of(lambda t: t.mul_(2) + 1, (torch.randn(4, 3),), stages=("dynamo", "aten", "functional"))
    assert "graph 0: the aten stage was traced separately with make_fx (an op it cannot map)." in captured.trace.notes
    assert "aten.mul_.Tensor" in [str(n.target) for n in captured.graphs[0].modules["aten"].graph.nodes]
