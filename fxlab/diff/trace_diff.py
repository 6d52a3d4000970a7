"""Whole-trace diffs: one stage pair of every Dynamo graph of a trace, or every stage
two saved traces both recorded, as data (FX stages through :mod:`fxlab.diff.fx_diff`,
the Ascend IR through :mod:`fxlab.diff.ir_diff`). Nothing here prints."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from fxlab.capture.trace import StageTrace
from fxlab.diff.ir_diff import diff_ir
from fxlab.errors import UsageError
from fxlab.diff.fx_diff import StageDiff, diff_stages
from fxlab.stage_names import ASCEND_IR


@dataclass
class GraphDiff:
    """One Dynamo graph: an FX stage diff (``fx``) or an Ascend IR diff (``ir``, an
    :class:`~fxlab.diff.ir_diff.IrDiff`), or why there is none (``missing``)."""

    graph: int
    left_stage: str
    right_stage: str
    fx: StageDiff | None = None
    ir: Any = None
    missing: str | None = None

    @property
    def identical(self) -> bool:
        diff = self.fx or self.ir
        return diff is not None and diff.identical

    def to_json(self) -> dict[str, Any]:
        diff = self.fx or self.ir
        return {
            "graph": self.graph,
            "left_stage": self.left_stage,
            "right_stage": self.right_stage,
            "kind": "fx" if self.fx else ("ir" if self.ir else None),
            "missing": self.missing,
            "identical": self.identical,
            "diff": diff.to_json() if diff is not None else None,
        }


@dataclass
class TraceDiff:
    left_label: str
    right_label: str
    graphs: list[GraphDiff] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return all(g.identical for g in self.graphs)

    def to_json(self) -> dict[str, Any]:
        return {
            "left": self.left_label,
            "right": self.right_label,
            "identical": self.identical,
            "notes": list(self.notes),
            "graphs": [g.to_json() for g in self.graphs],
        }


def diff_graph(index: int, left: Any, right: Any, left_stage: str, right_stage: str, *, left_label: str, right_label: str) -> GraphDiff:
    """Diff two FX stages (:class:`StageTrace`) or two Ascend IR graphs of graph ``index``;
    a side that is ``None`` makes a diff that says which side is missing."""
    entry = GraphDiff(index, left_stage, right_stage)
    if left is None or right is None:
        absent = [label for label, side in ((left_label, left), (right_label, right)) if side is None]
        entry.missing = f"graph {index} has no {' and no '.join(absent)}"
    elif isinstance(left, StageTrace):
        entry.fx = diff_stages(left, right, left_label=left_label, right_label=right_label)
    else:
        entry.ir = diff_ir(left, right, left_label=left_label, right_label=right_label)
    return entry


def diff_saved_traces(left: Any, right: Any, *, left_label: str, right_label: str, graph: int | None = None) -> TraceDiff:
    """Every stage two traces both recorded, graph by graph (the same model run twice
    gives an empty diff: saved traces have deterministic names)."""
    result = TraceDiff(left_label, right_label)
    for trace in (left, right):
        sources_relative_to_model(trace)
    for key in ("model", "entry", "torch_version", "fxlab_version"):
        if getattr(left, key) != getattr(right, key):
            result.notes.append(f"{key} differs: {getattr(left, key)} vs {getattr(right, key)}")
    stages = [s for s in left.stages if s in right.stages]
    for name, trace in ((left_label, left), (right_label, right)):
        alone = [s for s in trace.stages if s not in stages]
        if alone:
            result.notes.append(f"only {name} recorded stage(s) {', '.join(alone)}")
    counts = (len(left.graphs), len(right.graphs))
    if counts[0] != counts[1]:
        result.notes.append(f"{left_label} has {counts[0]} graph(s), {right_label} has {counts[1]}")
    for index in select_graphs(max(counts), graph):
        lgraph = left.graphs[index] if index < counts[0] else None
        rgraph = right.graphs[index] if index < counts[1] else None
        for stage in stages:
            lside, rside = (_stage_of(g, stage) for g in (lgraph, rgraph))
            entry = diff_graph(index, lside, rside, stage, stage, left_label=left_label, right_label=right_label)
            if entry.missing:  # said of the traces, whose labels these are
                entry.missing = "; ".join(
                    f"{label} has no graph {index}" if g is None else f"{label}'s graph {index} has no {stage} stage"
                    for label, g, side in ((left_label, lgraph, lside), (right_label, rgraph, rside))
                    if side is None
                )
            result.graphs.append(entry)
    return result


def sources_relative_to_model(trace: Any) -> None:
    """Source files under the model file's folder named relative to it, in place: the
    same model traced in two checkouts (/a/model.py, /b/model.py) has the same lines."""
    provenances = [node.provenance for graph in trace.graphs for stage in graph.stages.values() for node in stage.nodes]
    folder = _model_folder(trace.model, {p.file for p in provenances if p.file})
    if folder is None:
        return
    for provenance in provenances:
        provenance.file = _relative(provenance.file, folder)


def _model_folder(model: str, files: set[str]) -> str | None:
    """The folder the model file was in when traced: ``model`` is the path as given on
    the command line (maybe relative to a working directory of then), the recorded
    source files are absolute."""
    if not model:
        return None
    if os.path.isabs(model):
        return os.path.dirname(os.path.normpath(model))
    tail = os.sep + os.path.normpath(model)
    for file in sorted(files):
        if file.endswith(tail):
            return os.path.dirname(file)
    return None


def _relative(path: str | None, folder: str) -> str | None:
    if not path or not os.path.isabs(path):
        return path
    try:
        inside = os.path.commonpath([path, folder]) == folder
    except ValueError:  # different drives
        return path
    return os.path.relpath(path, folder) if inside else path


def _stage_of(graph: Any, stage: str) -> Any:
    if graph is None:
        return None
    return graph.ir if stage == ASCEND_IR else graph.stages.get(stage)


def select_graphs(count: int, wanted: int | None) -> list[int]:
    """Graph indices to diff: all, or ``wanted`` when it exists."""
    if wanted is None:
        return list(range(count))
    if not 0 <= wanted < count:
        have = f"numbered 0 to {count - 1}" if count else "none at all"
        raise UsageError(
            f"--graph {wanted} does not exist: the trace has {count} graph(s), {have}. Pick one of them, or leave --graph out to diff every graph."
        )
    return [wanted]
