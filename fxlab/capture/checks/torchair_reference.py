"""TorchAir's own graphs on the aclgraph path, and where fxlab's differ from them.

TorchAir's own backend, run end to end on the traced model (:class:`Reference`, made by
:mod:`fxlab.compat.torchair_backend_run`), gives each graph as TorchAir compiles it, with
its first call: the aclgraph judge (:mod:`fxlab.capture.checks.aclgraph_blame`) compares
fxlab's graph with it. With ``--converter torchair`` the ``aclgraph`` stage is the graph
TorchAir's own passes give (as ``ascend_ir`` is TorchAir's own conversion in GE mode), and
the trace says whether fxlab's passes gave the same graph: node by node (names, ops,
targets, arguments) and capture call by call.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch.fx as fx

from fxlab.capture.checks.runs import GraphRun
from fxlab.capture.trace import GraphTrace
from fxlab.passes.torchair_options import TorchAirOptions
from fxlab.stage_names import ACLGRAPH


@dataclass
class TorchAirAclGraph:
    """TorchAir's own answer for one graph on the aclgraph path (``compat.aclgraph_bridge``):
    the graph after its passes, the capture code it generated, what it said, how long."""

    fx_graph: fx.GraphModule
    capture_code: str | None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class ReferenceGraph:
    """One Dynamo graph as TorchAir's own backend compiled it, entered as a user enters it
    (``compat.torchair_backend_run``): the graph aot_autograd handed its compiler
    (``functional``), the graph it would capture (``fx_graph``), its capture code, its graph
    after each of its passes (``passes``: TorchAir's own names, in order), and its first
    call: its inputs, and what the functional graph computed from them (``expected_*``:
    its outputs, and the inputs as it left them), which is what the compiled model computes."""

    index: int
    functional: fx.GraphModule
    fx_graph: fx.GraphModule
    capture_code: str | None
    passes: list[tuple[str, fx.GraphModule]] = field(default_factory=list)
    inputs: list[Any] | None = None
    expected_outputs: list[Any] | None = None
    expected_inputs_after: list[Any] | None = None
    concrete: Any = None  # TorchAir's concrete graph object (its GE graph in max-autotune)

    @property
    def first_call(self) -> GraphRun | None:
        """Its first call as a recorded run (None: it was not called)."""
        if self.inputs is None:
            return None
        return GraphRun(self.inputs, self.expected_outputs or [], self.expected_inputs_after or [])


@dataclass
class ReferenceRun:
    """Every graph TorchAir's backend compiled, in order, and what stopped it if it did;
    ``backend`` names the backend as a sentence's subject. When the failure began in
    TorchAir's own code (not in torch's, not in fxlab's stand-ins for the NPU runtime),
    ``raised_in`` is that file and line, and ``failed_node`` the FX node its compiler was
    at: the graph after those compiled is one TorchAir's backend fails on."""

    backend: str
    graphs: list[ReferenceGraph] = field(default_factory=list)
    error: str | None = None
    raised_in: str | None = None
    failed_node: str | None = None


# TorchAir's own backend run end to end on the traced model with the given options (the
# trace's, or others to see what a pass switched off changes): compat.torchair_backend_run.
RunBackend = Callable[[TorchAirOptions], ReferenceRun]


class Reference:
    """TorchAir's own backend on the traced model, run once with the trace's options when
    first asked for, and again with others on demand."""

    def __init__(self, run_backend: RunBackend, options: TorchAirOptions) -> None:
        self.run_backend, self.options = run_backend, options
        self._first: ReferenceRun | None = None

    @property
    def run(self) -> ReferenceRun:
        if self._first is None:
            self._first = self.run_backend(self.options)
        return self._first

    def again(self, options: TorchAirOptions) -> ReferenceRun:
        return self.run_backend(options)


def graph_signature(gm: fx.GraphModule) -> list[str]:
    """Every node as one line: what two graphs must share to be the same graph."""
    return [f"{n.op} {n.name} {n.target} {n.args} {n.kwargs}" for n in gm.graph.nodes]


def graph_differences(ours: fx.GraphModule, theirs: fx.GraphModule, limit: int = 12) -> list[str]:
    """The lines of a diff of the two signatures (TorchAir's first), at most ``limit``."""
    diff = difflib.unified_diff(graph_signature(theirs), graph_signature(ours), "torchair", "fxlab", lineterm="", n=0)
    lines = [line for line in diff if not line.startswith(("---", "+++", "@@"))]
    return lines[:limit] + ([f"... {len(lines) - limit} more"] if len(lines) > limit else [])


# How TorchAir's capture code names where an example input lives: its run on CPU writes
# the host, an NPU machine's writes the device fxlab's code names.
_HOST_DEVICE, _NPU_DEVICE = "device ='cpu'", "device ='npu:0'"


def capture_calls(code: str) -> list[str]:
    """Every call in a capture module, in source order (nested calls after the call that
    holds them), as source text: what two capture modules must share to capture and
    replay alike, whatever their layout. Example inputs on the host read as on the NPU."""
    tree = ast.parse(code.replace(_HOST_DEVICE, _NPU_DEVICE))
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    calls.sort(key=lambda node: (node.lineno, node.col_offset))
    return [ast.unparse(node) for node in calls]


def capture_differences(ours: str, theirs: str, limit: int = 12) -> list[str]:
    """The lines of a diff of the two modules' calls (TorchAir's first), at most ``limit``."""
    diff = difflib.unified_diff(capture_calls(theirs), capture_calls(ours), "torchair", "fxlab", lineterm="", n=0)
    lines = [line for line in diff if not line.startswith(("---", "+++", "@@"))]
    return lines[:limit] + ([f"... {len(lines) - limit} more"] if len(lines) > limit else [])


def adopt_torchair_graph(graph: GraphTrace, modules: dict[str, fx.GraphModule], theirs: TorchAirAclGraph) -> None:
    ours = modules[ACLGRAPH]
    differences = graph_differences(ours, theirs.fx_graph)
    modules[ACLGRAPH] = theirs.fx_graph
    if theirs.capture_code:
        graph.capture_code = theirs.capture_code
    graph.torchair_aclgraph = {
        "source": "torchair",
        "same": not differences,
        "differences": differences,
        "notes": list(theirs.notes),
        "seconds": round(theirs.seconds, 4),
    }
