"""fxlab's capturing ``torch.compile`` backend.

For every graph Dynamo hands it, the backend records the ``dynamo`` graph, runs
``aot_module_simplified`` as TorchAir's backend does to get the ``functional`` stage —
recording on the way the ``aten`` stage, the ATen ops functionalization receives
(:mod:`fxlab.capture.aten_recorder`; a separate ``make_fx`` trace when the recorder
cannot) — and returns aot's compiled callable so
the compiled model really runs (its outputs are checked against eager). Stage failures
are kept per graph, not raised, so one bad graph does not hide the others.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch.fx as fx

from fxlab.capture.as_npu import decomposed_as_on_npu, resolve_sdpa_as_on_npu
from fxlab.capture.aten_recorder import AtenRecorder
from fxlab.capture.scope_frames import point_scope_markers_at_user_code
from fxlab.capture.stages import aten_stage, fake_mode_of, functional_stage
from fxlab.passes.graph_copy import copy_graph_module
from fxlab.stage_names import ATEN, DYNAMO, FUNCTIONAL


@dataclass
class CapturedGraph:
    """The live modules of one Dynamo graph, before they become trace data."""

    index: int
    modules: dict[str, fx.GraphModule] = field(default_factory=dict)
    break_reason: str | None = None
    break_location: str | None = None
    error: str | None = None
    # Why the ``aten`` stage was traced with a separate make_fx run instead of being
    # recorded from aot_autograd's trace (None when it was recorded).
    aten_retraced: str | None = None
    # Device-dependent choices made as on an NPU machine (fxlab.capture.as_npu), as sentences.
    device_choices: list[str] = field(default_factory=list)


class CapturingBackend:
    """A ``torch.compile`` backend that records stages; one instance per model run."""

    def __init__(
        self,
        want_aten: bool = True,
        wrap_compiled: Callable[[fx.GraphModule], Callable[..., Any]] | None = None,
        decompositions: dict[Any, Callable[..., Any]] | None = None,
    ) -> None:
        self.graphs: list[CapturedGraph] = []
        self.want_aten = want_aten
        self.wrap_compiled = wrap_compiled
        self.decompositions = decompositions  # None: TorchAir's default table; else the backend's own (custom_decompositions)

    def __call__(self, gm: fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
        captured = CapturedGraph(index=len(self.graphs))
        self.graphs.append(captured)
        try:
            return self._capture(captured, gm, example_inputs)
        except BaseException:
            # Not compiled: Dynamo either gives up, or (its restart signals, e.g. a float it
            # decides to treat as a tensor) traces the frame again and hands over a new graph.
            self.graphs.remove(captured)
            raise

    def _capture(self, captured: CapturedGraph, gm: fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
        captured.break_reason, captured.break_location = _break_reason(gm)
        point_scope_markers_at_user_code(gm)  # before any stage copies the stack traces
        # aot_autograd adds meta to Dynamo's graph as it traces: record a copy.
        captured.modules[DYNAMO] = copy_graph_module(gm)
        captured.device_choices = resolve_sdpa_as_on_npu(gm)
        with decomposed_as_on_npu(gm) as notes:
            captured.device_choices += notes
            functional, compiled = self._functional(captured, gm, example_inputs)
        captured.modules[FUNCTIONAL] = functional
        return compiled

    def _functional(self, captured: CapturedGraph, gm: fx.GraphModule, example_inputs: Sequence[Any]) -> tuple[fx.GraphModule, Any]:
        """aot_autograd's functional graph and compiled callable, recording the ``aten``
        stage on the way when it is wanted."""
        if not self.want_aten:
            return functional_stage(gm, example_inputs, self.decompositions, self.wrap_compiled)
        recorder = AtenRecorder(gm, fake_mode_of(example_inputs))
        with recorder.installed():
            functional, compiled = functional_stage(gm, example_inputs, self.decompositions, self.wrap_compiled)
        self._keep_aten(captured, gm, example_inputs, recorder)
        # aot's compiled code may keep the recorder alive as long as the program runs it
        # (a program run as a whole): it lets go of the graphs.
        recorder.gm, recorder.graph_module = None, None  # type: ignore[assignment]
        return functional, compiled

    @staticmethod
    def _keep_aten(captured: CapturedGraph, gm: fx.GraphModule, example_inputs: Sequence[Any], recorder: AtenRecorder) -> None:
        if recorder.graph_module is not None:
            captured.modules[ATEN] = recorder.graph_module
            return
        captured.aten_retraced = recorder.reason
        try:
            captured.modules[ATEN] = aten_stage(gm, example_inputs)
        except Exception as exc:  # noqa: BLE001 - recorded; the functional stage still works
            captured.error = f"aten stage: {type(exc).__name__}: {exc}"


def _break_reason(gm: fx.GraphModule) -> tuple[str | None, str | None]:
    """Dynamo's reason for ending this graph early, and the user line where it did."""
    reason = getattr(gm, "compile_subgraph_reason", None)
    if reason is None or not getattr(reason, "graph_break", False):
        return None, None
    frames = list(getattr(reason, "user_stack", []) or [])
    location = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else None
    return _in_words(str(reason.reason).strip()), location


DATA_DEPENDENT_BRANCH = (
    "a branch on a tensor's value (data-dependent control flow, which Dynamo does not trace; "
    "torch.where, or torch.cond for two computations, keeps it in one graph)"
)


def _in_words(reason: str) -> str:
    """Dynamo's terse reason as a sentence where it has one (a conditional jump on a tensor:
    ``generic_jump TensorVariable()``); else as Dynamo gave it."""
    if reason.startswith("generic_jump"):
        return f"{DATA_DEPENDENT_BRANCH} [Dynamo: {reason}]"
    return reason
