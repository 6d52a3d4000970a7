"""The user passes' check: a user's pass, or the user's patterns, must not change what
the graph computes. The graph before the pass runs on the inputs the compiled run
recorded; the graph after it runs against that run
(:func:`~fxlab.capture.checks.runs.run_against`), and a difference names the pass.
"""

from __future__ import annotations

from collections.abc import Sequence

from fxlab.capture.checks.runs import (
    GraphRun,
    OutputPolicy,
    RunRecorder,
    drawing_ops,
    run_against,
    run_on_cpu,
    why_not_recorded,
    without_graph,
)
from fxlab.capture.checks.values import Comparison, clone_tree
from fxlab.capture.record_graph import LiveGraph
from fxlab.capture.trace import CheckResult, GraphTrace
from fxlab.passes.pattern_fusion import UserPassRun
from fxlab.stage_names import FUNCTIONAL


def check_user_passes(runs: Sequence[tuple[GraphTrace, LiveGraph, UserPassRun]], recorder: RunRecorder) -> CheckResult:
    """Each user pass's graph before and after it, on the traced inputs."""
    cmp = Comparison()
    not_run: list[str] = []
    for graph, live, user_run in runs:
        said = _check_pass(graph, live, user_run, recorder, cmp)
        if said is not None:
            not_run.append(f"graph {graph.index}: after the user's {user_run.name} ({user_run.function}): {said}")
    return cmp.result(not_run)


def _check_pass(graph: GraphTrace, live: LiveGraph, user_run: UserPassRun, recorder: RunRecorder, cmp: Comparison) -> str | None:
    """Add what the pass changed to ``cmp`` (a graph it breaks, results it changes); why
    it could not be checked, or None."""
    functional = live.modules.get(FUNCTIONAL)
    recorded = recorder.run_of(functional) if functional is not None else None
    unrecorded = why_not_recorded(recorded, recorder)
    if functional is None or recorded is None or unrecorded is not None or user_run.after is None:
        return unrecorded or "the compiled run did not record this graph's inputs"
    before_inputs = clone_tree(recorded.inputs_before)
    before = run_on_cpu(user_run.before, before_inputs)
    if before.reason:
        return f"the graph before it was not run: {before.reason}"
    # The graph before the pass, run on the recorded inputs, is what the graph after it must compute.
    baseline = GraphRun(recorded.inputs_before, before.outputs, before_inputs)
    whose = f"the user's {user_run.name} ({user_run.function})"
    after_pass = user_run.after
    policy = OutputPolicy(functional, graph.index, f"{whose}'s", "the graph's before it", drawing=drawing_ops(user_run.before))
    pass_cmp, after = run_against(baseline, lambda inputs: run_on_cpu(after_pass, inputs), policy)
    who = f"graph {graph.index}: {whose}"
    if after.failure:  # the graph ran before the pass and fails after it: the pass broke it
        cmp.mismatches.append(f"{who} breaks the graph: it ran before the pass and fails after it: {after.failure}")
        return None
    if after.reason:
        return f"the graph after it was not run: {after.reason}"
    pass_cmp.mismatches = [f"{who} changes the results: {without_graph(graph.index, m)}" for m in pass_cmp.mismatches]
    cmp.merge(pass_cmp)
    return None
