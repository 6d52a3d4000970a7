"""With ``--converter torchair`` on the aclgraph path, the ``aclgraph`` stage is the graph
TorchAir's own passes give (as ``ascend_ir`` is TorchAir's own conversion in GE mode), and
the trace says whether fxlab's passes gave the same graph, node by node: names, ops,
targets, arguments."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

import torch.fx as fx

from fxlab.capture.trace import GraphTrace
from fxlab.stage_names import ACLGRAPH


@dataclass
class TorchAirAclGraph:
    """TorchAir's own answer for one graph on the aclgraph path (``compat.aclgraph_bridge``):
    the graph after its passes, the capture code it generated, what it said, how long."""

    fx_graph: fx.GraphModule
    capture_code: str | None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


def graph_signature(gm: fx.GraphModule) -> list[str]:
    """Every node as one line: what two graphs must share to be the same graph."""
    return [f"{n.op} {n.name} {n.target} {n.args} {n.kwargs}" for n in gm.graph.nodes]


def graph_differences(ours: fx.GraphModule, theirs: fx.GraphModule, limit: int = 12) -> list[str]:
    """The lines of a diff of the two signatures (TorchAir's first), at most ``limit``."""
    diff = difflib.unified_diff(graph_signature(theirs), graph_signature(ours), "torchair", "fxlab", lineterm="", n=0)
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
