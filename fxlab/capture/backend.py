"""fxlab's capturing ``torch.compile`` backend.

For every graph Dynamo hands it, the backend records the ``dynamo`` graph, traces the
``aten`` stage (no functionalization), runs ``aot_module_simplified`` as TorchAir's
backend does to get the ``functional`` stage, and returns aot's compiled callable so
the compiled model really runs (its outputs are checked against eager). Stage failures
are kept per graph, not raised, so one bad graph does not hide the others.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import torch.fx as fx

from fxlab.capture.stages import aten_stage, copy_graph_module, functional_stage


@dataclass
class CapturedGraph:
    """The live modules of one Dynamo graph, before they become trace data."""

    index: int
    modules: dict[str, fx.GraphModule] = field(default_factory=dict)
    break_reason: str | None = None
    break_location: str | None = None
    error: str | None = None


class CapturingBackend:
    """A ``torch.compile`` backend that records stages; one instance per model run."""

    def __init__(self, want_aten: bool = True, wrap_compiled: Callable[[fx.GraphModule], Callable[..., Any]] | None = None) -> None:
        self.graphs: list[CapturedGraph] = []
        self.want_aten = want_aten
        self.wrap_compiled = wrap_compiled

    def __call__(self, gm: fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
        captured = CapturedGraph(index=len(self.graphs))
        self.graphs.append(captured)
        captured.break_reason, captured.break_location = _break_reason(gm)
        # aot_autograd adds meta to Dynamo's graph as it traces: record a copy.
        captured.modules["dynamo"] = copy_graph_module(gm)
        if self.want_aten:
            try:
                captured.modules["aten"] = aten_stage(gm, example_inputs)
            except Exception as exc:  # noqa: BLE001 - recorded; the functional stage may still work
                captured.error = f"aten stage: {type(exc).__name__}: {exc}"
        functional, compiled = functional_stage(gm, example_inputs, wrap_compiled=self.wrap_compiled)
        captured.modules["functional"] = functional
        return compiled


def _break_reason(gm: fx.GraphModule) -> tuple[str | None, str | None]:
    """Dynamo's reason for ending this graph early, and the user line where it did."""
    reason = getattr(gm, "compile_subgraph_reason", None)
    if reason is None or not getattr(reason, "graph_break", False):
        return None, None
    frames = list(getattr(reason, "user_stack", []) or [])
    location = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else None
    return str(reason.reason).strip(), location
