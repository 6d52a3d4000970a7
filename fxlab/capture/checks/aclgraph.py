"""The aclgraph check: each graph's ``aclgraph`` stage run on CPU against the compiled run.

The ``aclgraph`` graph is ATen (and torch_npu) ops with in-place writes, event markers and
stream core-limit calls; run with their CPU kernels (the events and limits do nothing on
one CPU stream, :mod:`fxlab.npu_streams`) on the inputs the compiled run got, its outputs
and the inputs it writes must equal the compiled run's (:func:`~fxlab.capture.checks.runs.run_against`).
Operators whose NPU kernel raises while the ACL graph is captured (``air::wait_tensor``)
raise here too, and the check names them as refused (``REFUSED``, not a ``MISMATCH``):
TorchAir's capture would stop there. Whose graph
a mismatch is, a judge says (:mod:`fxlab.capture.checks.aclgraph_blame`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch.fx as fx

from fxlab.capture.checks.runs import CpuRun, GraphRun, OutputPolicy, RunRecorder, drawing_ops, run_against, run_on_cpu, why_not_recorded
from fxlab.capture.checks.values import Comparison
from fxlab.capture.record_graph import LiveGraph
from fxlab.capture.trace import CheckResult, GraphTrace
from fxlab.npu_streams import CaptureStops, as_captured
from fxlab.passes.torchair_refusals import HAZARD
from fxlab.stage_names import ACLGRAPH, FUNCTIONAL


@dataclass
class GraphVerdict:
    """What a judge (:mod:`fxlab.capture.checks.aclgraph_blame`) says of one graph's run:
    the mismatches to report (the numeric ones, and whose graph is wrong), what could not
    be compared, what was compared besides the numbers, and whether TorchAir's backend
    refuses the graph (fails to compile it)."""

    mismatches: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)
    compared_with: str | None = None
    refused: list[str] = field(default_factory=list)  # TorchAir's backend fails to compile the graph


# judge(graph, its live modules, mismatches of its own run, the compiled run it was checked against)
Judge = Callable[[GraphTrace, LiveGraph, list[str], GraphRun], GraphVerdict]


def computes(graph: LiveGraph, gm: fx.GraphModule, recorded: GraphRun, emulated: list[str]) -> tuple[Comparison, str | None]:
    """``gm`` run on copies of the recorded inputs, as the ACL graph capture runs it,
    against what the model computes from them (the recorded outputs, and the inputs as it
    leaves them): the comparison, with a failure of the graph as a mismatch, and why it
    could not run (a missing CPU kernel). A stop of the capture (an operator TorchAir's
    capture refuses) raises :class:`~fxlab.npu_streams.CaptureStops`."""

    def run_captured(inputs: list[Any]) -> CpuRun:
        with as_captured():
            return run_on_cpu(gm, inputs, emulated)

    policy = OutputPolicy(graph.modules[FUNCTIONAL], graph.index, "the aclgraph graph's", drawing=drawing_ops(gm))
    cmp, ran = run_against(recorded, run_captured, policy)
    if ran.not_run:
        return cmp, ran.not_run
    if ran.capture_stops:
        raise CaptureStops(ran.capture_stops)
    if ran.failure:
        cmp.mismatches.append(f"graph {graph.index}: the aclgraph graph fails: {ran.failure}")
    return cmp, None


def verify_aclgraph(graphs: Sequence[tuple[GraphTrace, LiveGraph]], recorder: RunRecorder, judge: Judge | None = None) -> CheckResult:
    """Each graph's ``aclgraph`` module on the inputs its functional graph got in the
    compiled run, against that run's outputs and written inputs; ``judge`` says whose
    graph a mismatch is, and compares the graph with TorchAir's own when it can."""
    cmp = Comparison()
    not_run: list[str] = []
    refused: list[str] = []
    approximations: list[str] = []
    compared_with: list[str] = []
    for graph, live in graphs:
        run = recorder.run_of(live.modules[FUNCTIONAL])
        unrecorded = why_not_recorded(run, recorder)
        if unrecorded is not None or run is None:
            not_run.append(f"graph {graph.index}: {unrecorded}")
            continue
        emulated: list[str] = []
        gm = live.modules[ACLGRAPH]
        try:
            graph_cmp, missing = computes(live, gm, run, emulated)
        except CaptureStops as stop:  # TorchAir's capture refuses the graph there: not a question of whose graph it is
            refused.append(f"graph {graph.index}: {str(stop).split(chr(10) + chr(10))[0].strip()}")
            continue
        if emulated:
            approximations.append(_emulated_note(graph, emulated))
        if missing:
            not_run.append(f"graph {graph.index}: the aclgraph graph was not run: {missing}")
            continue
        verdict = judge(graph, live, graph_cmp.mismatches, run) if judge is not None else GraphVerdict(list(graph_cmp.mismatches))
        graph_cmp.mismatches = verdict.mismatches
        not_run += verdict.not_run
        refused += verdict.refused
        compared_with += [f"graph {graph.index}: {verdict.compared_with}"] if verdict.compared_with else []
        if drawing_ops(gm):
            not_run.append(
                f"graph {graph.index}: values not compared, only shapes and dtypes: it draws random numbers ({', '.join(drawing_ops(gm))})"
            )
        cmp.merge(graph_cmp)
    result = cmp.result(not_run)
    if refused:  # what TorchAir does not take is said, even where nothing else was compared
        result = dataclasses.replace(result, ok=False, skipped=None, not_run=list(not_run), refused=refused)
    result.approximations = approximations
    result.compared_with = "; ".join(compared_with) or None
    return result


def _emulated_note(graph: GraphTrace, emulated: list[str]) -> str:
    return (
        f"graph {graph.index}: {', '.join(emulated)} read memory they write in place (torch refuses this on CPU; on an NPU the "
        "result depends on the kernel's order): run as out-of-place + copy_, every element read before one is written"
    )


def hazards(graph: GraphTrace) -> list[str]:
    """What the aclgraph passes noted may make the graph compute other values (their notes
    that begin with :data:`~fxlab.passes.torchair_refusals.HAZARD`)."""
    return [note for record in graph.pass_records(ACLGRAPH) for note in record.notes if note.startswith(HAZARD)]
