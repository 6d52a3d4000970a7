"""Whose graph is wrong on the aclgraph path, said only where it is proven.

The aclgraph check (:func:`fxlab.capture.checks.aclgraph.verify_aclgraph`) runs fxlab's
``aclgraph`` graph on CPU against the compiled run; :class:`AclGraphJudge` says what that
means for each graph.

With TorchAir's sources (a :class:`~fxlab.capture.checks.torchair_reference.Reference`: TorchAir's
own backend run end to end on the same model, :mod:`fxlab.compat.torchair_backend_run`),
the graph is first compared with TorchAir's, node for node and capture call by call:

* a graph that differs is fxlab's internal error, whatever the numbers say, with the
  first of TorchAir's passes after which fxlab's graph is no longer TorchAir's;
* a graph that is TorchAir's and computes other values than the model is TorchAir's fault
  only when TorchAir's own graph, run on its own first call's inputs, computes other
  values too. The message says so, names the pass after which TorchAir's graph stops
  computing the model's values, and each of its switchable passes that, turned off in
  another run of its backend, gives a graph that computes them (a proven workaround).

Without TorchAir's sources a mismatch is fxlab's internal error: the message names the
pass after which fxlab's graph stops computing the model's values and the nodes that pass
changed, and asks for a report. The passes' hazard notes are quoted beside a mismatch.

Either way, a graph that stops computing the model's values after one of the user's own
passes (or the user's patterns) is the user's pass's doing, said so, neither fxlab's error
nor TorchAir's fault (the user passes' check names the pass too).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import torch.fx as fx

from fxlab.capture.checks.aclgraph import GraphVerdict, computes, hazards
from fxlab.capture.checks.runs import GraphRun, without_graph
from fxlab.capture.checks.torchair_reference import (
    Reference,
    ReferenceGraph,
    ReferenceRun,
    capture_differences,
    graph_differences,
    graph_signature,
)
from fxlab.capture.record_graph import LiveGraph
from fxlab.capture.trace import GraphTrace
from fxlab.npu_streams import CaptureStops
from fxlab.passes.aclgraph.pipeline import aclgraph_graph
from fxlab.passes.torchair_options import NPUGRAPH_EX, TorchAirOptions
from fxlab.passes.torchair_refusals import SIZE_CHECK_FIX, TORCHAIR_FAULT, symbolic_comparison
from fxlab.source_lines import node_source
from fxlab.stage_names import ACLGRAPH, FUNCTIONAL

INTERNAL_ERROR = "fxlab internal error"
REPORT = "This is a bug in fxlab: please report it with the command and the model file."
TORCHAIR_REFUSES = "TorchAir's backend fails on this graph"
NOT_RUN = (
    "TorchAir's own backend did not run in this check to show whose graph this is (`fxlab trace` runs it when TorchAir's "
    "sources are there: `fxlab torchair fetch`)"
)
# TorchAir's name of its dump of the graph its compiler receives, before any pass.
RECEIVED = "graph"
# TorchAir's names of its graph dumps for the passes fxlab names otherwise.
FXLAB_NAMES = {"optimize_noop_ops": "remove_noop_ops", "reinplace_inplaceable_ops_pass": "reinplace_inplaceable_ops"}
# TorchAir's passes a config switches off: the option in TorchAirOptions, and the config
# line that does it for TorchAir's CompilerConfig and npugraph_ex's.
SWITCHES = {
    "optimize_noop_ops": ("remove_noop_ops", "config.experimental_config.remove_noop_ops = False", "config.remove_noop_ops = False"),
    "apply_pattern_passes": (
        "pattern_fusion_pass",
        "config.experimental_config.pattern_fusion_pass = False",
        "config.pattern_fusion_pass = False",
    ),
    "remove_cat_ops": ("remove_cat_ops", "config.debug.aclgraph.remove_cat_ops = False", "config.remove_cat_ops = False"),
    "reinplace_inplaceable_ops_pass": (
        "inplace_pass",
        "config.debug.aclgraph.disable_reinplace_inplaceable_ops_pass = True",
        "config.inplace_pass = False",
    ),
    "reinplace_input_mutated_ops": (
        "input_inplace_pass",
        "config.debug.aclgraph.disable_reinplace_input_mutated_ops_pass = True",
        "config.input_inplace_pass = False",
    ),
}


class AclGraphJudge:
    """The judge :func:`~fxlab.capture.checks.aclgraph.verify_aclgraph` asks about each graph."""

    def __init__(self, options: TorchAirOptions, reference: Reference | None = None) -> None:
        self.options, self.reference = options, reference

    def __call__(self, graph: GraphTrace, live: LiveGraph, mismatches: list[str], run: GraphRun) -> GraphVerdict:
        if self.reference is None:
            return GraphVerdict(mismatches + self._fxlabs(graph, live, run) if mismatches else [])
        found = self.reference.run
        theirs = found.graphs[graph.index] if graph.index < len(found.graphs) else None
        if theirs is None:
            if found.raised_in is not None and graph.index == len(found.graphs):
                return GraphVerdict(mismatches, refused=[_fails_on(live, found)])
            why = found.error or f"it compiled {len(found.graphs)} graph(s) where the model made more"
            return GraphVerdict(mismatches, [f"graph {graph.index}: not compared with the graph {found.backend} makes: {why}"])
        differences = graph_differences(live.modules[ACLGRAPH], theirs.fx_graph, limit=1)
        differences += capture_differences(graph.capture_code or "", theirs.capture_code or "", limit=1)
        if differences:
            return GraphVerdict(mismatches + [self._differs(live, theirs, differences[0])])
        own = _own_run(live, theirs)
        if own:
            return GraphVerdict((mismatches or own) + [self._torchairs(live, theirs, own)] + _hazards(graph))
        if mismatches:
            return GraphVerdict(mismatches + [self._run_differs(graph)])
        return GraphVerdict(
            compared_with=f"the same graph and capture code as {found.backend} makes, run end to end from TorchAir's sources"
        )

    # -- the graph is not TorchAir's --------------------------------------------------------
    def _differs(self, graph: LiveGraph, theirs: ReferenceGraph, difference: str) -> str:
        backend = self.reference.run.backend if self.reference is not None else "TorchAir's own backend"
        return (
            f"graph {graph.index}: {INTERNAL_ERROR}: fxlab's aclgraph graph is not the one {backend} makes on this model (run end to "
            f"end from TorchAir's sources in this check): {_where_they_part(graph, theirs, self.options)}; first difference: "
            f"{'TorchAir' if difference.startswith('-') else 'fxlab'} has {difference[1:]}. {REPORT}"
        )

    def _run_differs(self, graph: GraphTrace) -> str:
        return (
            f"graph {graph.index}: {INTERNAL_ERROR}: the graph is the one TorchAir's own backend makes, and that graph computes the model's "
            f"values on its own first call's inputs, but not on the inputs of fxlab's compiled run. {REPORT}"
        )

    # -- the graph is TorchAir's, and wrong ---------------------------------------------------
    def _torchairs(self, graph: LiveGraph, theirs: ReferenceGraph, own: list[str]) -> str:
        assert self.reference is not None
        backend = self.reference.run.backend
        good, bad = _first_wrong(graph, theirs.passes, theirs.first_call) if theirs.first_call is not None else (None, None)
        users = _users_pass(graph, good, bad)
        if users is not None:
            return users
        where = f"; its graph computes the model's values after {good} and not after {bad}" if good and bad else ""
        fixes = self._workarounds(graph, theirs, bad)
        fix = f"; {' or '.join(fixes)}, its graph computes the model's values (each proven by another run of its backend)" if fixes else ""
        return (
            f"graph {graph.index}: {TORCHAIR_FAULT}, proven by its own run: {backend}, run end to end on this model from TorchAir's "
            f"sources in this check, makes this same graph and capture code, and on its own first call's inputs its graph computes "
            f"other values than the model ({without_graph(graph.index, own[0])}){where}{fix}"
        )

    def _workarounds(self, graph: LiveGraph, theirs: ReferenceGraph, bad: str | None) -> list[str]:
        """``with <config line>`` for each switchable pass, up to ``bad``, that changed the
        graph and whose absence gives a graph that computes the model's values."""
        assert self.reference is not None
        fixes = []
        for name in _changed_up_to(theirs.passes, bad):
            field, torchair_line, npugraph_ex_line = SWITCHES[name]
            switched: dict[str, Any] = {field: False}
            again = self.reference.again(dataclasses.replace(self.options, **switched))
            other = again.graphs[graph.index] if graph.index < len(again.graphs) else None
            if other is not None and not _own_run(graph, other):
                fixes.append(f"with {npugraph_ex_line if self.options.mode == NPUGRAPH_EX else torchair_line} (no {name})")
        return fixes

    # -- no TorchAir to compare with ------------------------------------------------------------
    def _fxlabs(self, graph: GraphTrace, live: LiveGraph, run: GraphRun) -> list[str]:
        snapshots: list[tuple[str, fx.GraphModule]] = [("the functional graph", live.modules[FUNCTIONAL])]
        aclgraph_graph(live.modules[FUNCTIONAL], self.options, graph.index, snapshots)
        good, bad = _first_wrong(live, snapshots, run)
        users = _users_pass(live, good, bad)
        if users is not None:
            return [users, *_hazards(graph)]
        where = f"; it computes the model's values after {good} and not after {bad} ({_changes(graph, bad)})" if good and bad else ""
        return [
            f"graph {graph.index}: {INTERNAL_ERROR}: the aclgraph graph computes other values than the compiled model{where}. "
            f"{NOT_RUN}. {REPORT}",
            *_hazards(graph),
        ]


def _fails_on(graph: LiveGraph, found: ReferenceRun) -> str:
    """TorchAir's backend failed on this graph in its own code: what a user's
    ``torch.compile`` with it meets on an NPU machine, with the node and its source line."""
    node = next((n for n in graph.modules[FUNCTIONAL].graph.nodes if n.name == found.failed_node), None)
    source = node_source(node) if node is not None else None
    at = f" at node {found.failed_node}" + (f" ({source})" if source else "") if found.failed_node else ""
    described = symbolic_comparison(node) if node is not None else None
    why = (
        f". The node is {described}, which its compiler evaluates itself, on its own packed values. Fix: {SIZE_CHECK_FIX}"
        if described
        else ""
    )
    return (
        f"graph {graph.index}: {TORCHAIR_REFUSES}, proven by its own run: {found.backend}, run end to end on this model from "
        f"TorchAir's sources in this check, fails to compile this graph{at}: {found.error} [in TorchAir's {found.raised_in}]; "
        f"torch.compile with it stops there on an NPU machine too{why}"
    )


def _own_run(graph: LiveGraph, theirs: ReferenceGraph) -> list[str]:
    """How TorchAir's graph, run on its own first call's inputs, departs from the model."""
    if theirs.first_call is None:
        return []
    try:
        cmp, missing = computes(graph, theirs.fx_graph, theirs.first_call, [])
    except CaptureStops:  # its capture stops there as fxlab's does: said by the check, not a wrong value
        return []
    return [] if missing else cmp.mismatches


def _first_wrong(graph: LiveGraph, snapshots: Sequence[tuple[str, fx.GraphModule]], recorded: GraphRun) -> tuple[str | None, str | None]:
    """The last pass after which the graph computes the model's values and the next one,
    after which it does not (None, None when no snapshot tells)."""
    good = None
    for name, gm in snapshots:
        try:
            cmp, missing = computes(graph, gm, recorded, [])
        except CaptureStops:
            continue
        if missing:
            continue
        if cmp.mismatches:
            return good, name
        good = "the graph its compiler receives" if name == RECEIVED else name
    return None, None


def _users_pass(graph: LiveGraph, good: str | None, bad: str | None) -> str | None:
    """The sentence for a graph that stops computing the model's values at one of the
    user's own passes (or the user's patterns): neither fxlab's error nor TorchAir's
    fault. None when ``bad`` is not one of them."""
    run = next((r for r in graph.user_pass_runs if r.name == bad), None)
    if run is None or good is None:
        return None
    return (
        f"graph {graph.index}: the user's {run.name} ({run.function}) changes what the graph computes: it computes the model's "
        f"values after {good} and not after the user's pass (the user passes' check compares the graph before and after it); "
        "not an error of fxlab or of TorchAir"
    )


def _changed_up_to(snapshots: Sequence[tuple[str, fx.GraphModule]], bad: str | None) -> list[str]:
    """The switchable passes that changed the graph, up to and with ``bad``."""
    changed, before = [], None
    for name, gm in snapshots:
        signature = graph_signature(gm)
        if name in SWITCHES and before is not None and signature != before:
            changed.append(name)
        before = signature
        if name == bad:
            break
    return changed


def _where_they_part(graph: LiveGraph, theirs: ReferenceGraph, options: TorchAirOptions) -> str:
    if graph_signature(graph.modules[FUNCTIONAL]) != graph_signature(theirs.functional):
        return "the graph aot_autograd hands TorchAir's compiler already differs from fxlab's functional graph"
    ours: list[tuple[str, fx.GraphModule]] = []
    aclgraph_graph(graph.modules[FUNCTIONAL], options, graph.index, ours)
    theirs_after = {FXLAB_NAMES.get(name, name): graph_signature(gm) for name, gm in theirs.passes}
    before = graph_signature(graph.modules[FUNCTIONAL])
    for name, gm in ours:
        signature = graph_signature(gm)
        if name in theirs_after and signature != theirs_after[name]:
            return f"the two graphs first differ after the pass {name}"
        if name not in theirs_after and signature != before:
            return f"fxlab's pass {name} changed the graph, and TorchAir's run has no such pass"
        before = signature
    return "the graphs agree after every pass; the capture code differs"


def _changes(graph: GraphTrace, name: str | None) -> str:
    record = next((r for r in graph.pass_records(ACLGRAPH) if r.name == name), None)
    if record is None:
        return "no record of it"
    said = [*record.notes[:2]]
    said += [f"removed {', '.join(record.removed[:6])}"] if record.removed else []
    said += [f"added {', '.join(record.added[:6])}"] if record.added else []
    return f"{name}: {'; '.join(said) or 'it changed nodes in place'}"


def _hazards(graph: GraphTrace) -> list[str]:
    return [f"graph {graph.index}: {note}" for note in hazards(graph)]
