"""The phases of one graph in the order GE dumped them, and what each phase fused,
renamed, inserted and removed against the phase before it.

Phases join by graph (GE's graph id, else the graph's name) and format (GE counts dumps
per format); their order is the dump's index. Subgraphs and SuperKernel sub-graph dumps
are not phases of their parent. The first phase of a graph is compared with nothing
before it: what it fused, renamed and inserted is what its ops say. A fused op holds
several original ops (or is a SuperKernel); a renamed op is one original op under another
name, and is not counted as fused."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fxlab.npu_dumps.dump_model import DumpGraph, DumpSet
from fxlab.npu_dumps.names import SUB_GRAPH_PHASE


@dataclass
class PhaseStep:
    """One phase of one graph against the phase before it (None for the first)."""

    graph: str
    format: str
    before: str | None
    after: str
    fused: list[tuple[str, list[str]]] = field(default_factory=list)  # (op, the ops it replaced)
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (op, the one op it stands for)
    inserted: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "graph": self.graph,
            "format": self.format,
            "from": self.before,
            "to": self.after,
            "fused": [{"op": op, "originals": originals} for op, originals in self.fused],
            "renamed": [{"op": op, "original": original} for op, original in self.renamed],
            "inserted": list(self.inserted),
            "removed": list(self.removed),
        }


def phase_chains(graphs: Sequence[DumpGraph]) -> dict[tuple[str, str], list[DumpGraph]]:
    """(graph key, format) -> that graph's root dumps in phase order."""
    chains: dict[tuple[str, str], list[DumpGraph]] = {}
    for graph in graphs:
        if graph.parent is None and not SUB_GRAPH_PHASE.match(graph.phase):
            chains.setdefault((graph.key, graph.format), []).append(graph)
    for chain in chains.values():
        chain.sort(key=lambda g: g.index if g.index is not None else -1)
    return chains


def phase_steps(graphs: Sequence[DumpGraph]) -> list[PhaseStep]:
    steps = []
    for (key, fmt), chain in phase_chains(graphs).items():
        previous: DumpGraph | None = None
        for graph in chain:
            steps.append(_step(key, fmt, previous, graph))
            previous = graph
    return steps


def _step(key: str, fmt: str, before: DumpGraph | None, after: DumpGraph) -> PhaseStep:
    step = PhaseStep(key, fmt, before.phase if before else None, after.phase)
    old = {op.name: op for op in before.ops} if before is not None else {}
    for op in after.ops:
        earlier = old.get(op.name)
        if op.inserted and earlier is None:
            step.inserted.append(op.name)
        elif earlier is not None and earlier.originals == op.originals:
            continue  # as it was in the phase before
        elif op.fused:
            step.fused.append((op.name, list(op.originals)))
        elif op.renamed:
            step.renamed.append((op.name, op.originals[0]))
    if before is not None:
        kept = {name for op in after.ops for name in (op.name, *op.originals, *op.super_kernel_members)}
        step.removed = [op.name for op in before.ops if op.name not in kept]
    return step


def dump_set_json(dumps: DumpSet) -> dict[str, Any]:
    """The ``--json`` document: :meth:`DumpSet.to_json` with each graph's phase steps."""
    data = dumps.to_json()
    data["phases"] = [step.to_json() for step in phase_steps(dumps.graphs)]
    return data
