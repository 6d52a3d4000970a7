"""Capture a loaded model: compile once with the capturing backend, then build the
Trace — every stage of every Dynamo graph, the Ascend IR (or the aclgraph graph), and the
checks against eager.

:func:`capture_trace` takes the loaded model and the :class:`TraceRequest`; what the
capture session adds (TorchAir's own code, a rank's hooks, where progress goes) comes
as keywords. It returns a :class:`Capture`: the trace (plain data) and the live graphs
the checks ran on.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from fxlab.capture.backend import CapturedGraph, CapturingBackend
from fxlab.capture.checks.aclgraph import Judge, verify_aclgraph
from fxlab.capture.checks.aclgraph_blame import AclGraphJudge
from fxlab.capture.checks.ascend_ir import verify_ir
from fxlab.capture.checks.custom_ops import GraphBreaks, fake_vs_kernel, has_custom_ops, op_left_out_of_graph, ops_left_out_between_graphs
from fxlab.capture.checks.eager import compare_eager_compiled
from fxlab.capture.checks.runs import RunRecorder, drawing_ops
from fxlab.capture.checks.torchair_reference import Reference, ReferenceRun
from fxlab.capture.checks.user_passes import check_user_passes
from fxlab.capture.compile_options import compile_options
from fxlab.capture.loader import LoadedModel
from fxlab.capture.ranks import RankHooks, after_call, collectives_not_executed, wrap_before_runs
from fxlab.capture.record_graph import LiveGraph, TorchAirCode, record_graph
from fxlab.capture.request import TraceRequest, validate_stages
from fxlab.capture.trace import CallRecord, CheckResult, Trace
from fxlab.capture.warmup import CallLog, check_later_calls, run_later_calls
from fxlab.passes.annotate_scopes import is_scope_enter
from fxlab.passes.pattern_fusion import registered_patterns
from fxlab.passes.torchair_options import TorchAirOptions, resolve_options
from fxlab.reports.scope_report import GraphInput, build_scope_report
from fxlab.stack import with_stack_room
from fxlab.stage_names import ACLGRAPH, ASCEND_IR, ATEN, FUNCTIONAL
from fxlab.version import __version__ as FXLAB_VERSION

Progress = Callable[[str], None]
# TorchAir's own backend run end to end on a loaded model with some options and torch.compile's
# ``dynamic`` (fxlab.compat.torchair_backend_run.TorchAirBackend).
AclGraphReference = Callable[[LoadedModel, TorchAirOptions, "bool | None"], ReferenceRun]


@dataclass
class Capture:
    """One capture: the trace, the live graphs its checks ran on (by graph index), the
    TorchAir options it followed and the model it loaded."""

    trace: Trace
    graphs: list[LiveGraph] = field(default_factory=list)
    options: TorchAirOptions = field(default_factory=TorchAirOptions)
    loaded: LoadedModel | None = None  # the model and inputs it ran
    # TorchAir's own backend run end to end on the model, when the aclgraph check ran it.
    reference: Reference | None = None


def capture_trace(
    loaded: LoadedModel,
    request: TraceRequest,
    *,
    torchair: TorchAirCode | None = None,
    ranks: RankHooks | None = None,
    progress: Progress | None = None,
    reference: AclGraphReference | None = None,
) -> Capture:
    """Run ``loaded`` eagerly and compiled, and record the request's stages of each graph.

    The mode (TorchAir's ``config.mode``: the request's, else the model file's config,
    else ``max-autotune``) picks the path: ``pre_ge`` → ``ascend_ir`` (GE graph) or
    ``aclgraph`` (``reduce-overhead`` / ``npugraph_ex``). ``torchair`` (TorchAir's own
    code) builds the ``ascend_ir`` stage and TorchAir's aclgraph graph instead of fxlab's
    converters and passes; ``ranks`` captures one rank of a multi-rank model
    (:mod:`fxlab.capture.ranks`). The model's other input sets (a warm-up), or a second
    size for a dynamic graph, run after the first (:mod:`fxlab.capture.warmup`).
    ``reference`` runs TorchAir's own backend end to end on the model, for the aclgraph
    check to compare graphs with and to say whose graph a mismatch is
    (:mod:`fxlab.capture.checks.aclgraph_blame`).
    """
    options = resolve_options(loaded.module, request.mode, registered_patterns())
    options = replace(options, soc=request.soc)
    request = replace(request, stages=validate_stages(request.stages, options.mode))
    say = progress or (lambda message: None)
    compiling = compile_options(loaded.module, loaded.name, request.dynamic)
    # The compiled run's inputs and outputs are kept only for graphs whose IR (or aclgraph
    # graph) will run, or that a user's pass changes (it is checked on them).
    will_verify = (checked_stage(request.stages) in request.stages and request.verify is not False) or options.has_user_passes
    recorder = RunRecorder(custom_ops_only=not will_verify)
    log = CallLog(lambda: backend.graphs, recorder)
    wrap = recorder.wrap if ranks is None else wrap_before_runs(ranks, recorder.wrap, [0])
    backend = CapturingBackend(want_aten=ATEN in request.stages, wrap_compiled=log.wrap_graph(wrap))
    compile_fn = log.compile_with(_compiler(backend, compiling.dynamic, ranks))
    draws_random = lambda: random_ops(backend.graphs)  # noqa: E731
    log.first_call(loaded)
    say(f"running {loaded.name} eagerly and under torch.compile")
    breaks = GraphBreaks()
    # Dynamo recurses deeply: its frames get one large stack chunk (fxlab/stack.py).
    check = with_stack_room(compare_eager_compiled, loaded, compile_fn, draws_random, compiled_first=ranks is not None)
    not_executed = collectives_not_executed(g.modules.get(FUNCTIONAL) for g in backend.graphs)
    if not_executed:
        check = CheckResult(ok=True, skipped=not_executed)
    call_notes = run_later_calls(loaded, log, compile_fn, draws_random, check, multi_rank=ranks is not None)
    driven = DrivenRun(
        graphs=backend.graphs,
        recorder=recorder,
        calls=log.calls,
        later_recorders=log.recorders,
        first_call_graphs=log.first_call_graphs(),
        not_executed=not_executed,
        notes=[note for note in [compiling.note, inference_note(loaded.fn), *call_notes] if note],
        dynamic=compiling.dynamic,
        graph_breaks=breaks.since(),
        untraced=breaks.untraced_since(),
    )
    trace = Trace(
        model=str(loaded.path) if loaded.path else loaded.name,
        entry=loaded.entry,
        fxlab_version=FXLAB_VERSION,
        torch_version=torch.__version__,
        check=check,
        compile_options=compiling.to_json() if compiling.source else {},
    )
    return trace_driven_run(
        trace, driven, request, options, torchair=torchair, ranks=ranks, progress=say, loaded=loaded, reference=reference
    )


@dataclass
class DrivenRun:
    """What running the compiled model gave, whoever drove its calls (fxlab's own calls of
    a model file, or a program run as a whole): the graphs the capturing backend
    recorded, the recorder of the first call's graph runs, each call, and the recorders
    of the calls after the first (call index -> its graph runs)."""

    graphs: list[CapturedGraph]
    recorder: RunRecorder
    calls: list[CallRecord] = field(default_factory=list)
    later_recorders: dict[int, RunRecorder] = field(default_factory=dict)
    first_call_graphs: set[int] | None = None  # the graphs the first call ran (None: all)
    not_executed: str | None = None  # why no collective moved data (the fake process group)
    notes: list[str] = field(default_factory=list)
    dynamic: bool | None = None  # torch.compile's dynamic, for TorchAir's own run as the aclgraph check's reference
    graph_breaks: list[str] = field(default_factory=list)  # Dynamo's reasons for the graph breaks of the run, graph or not
    untraced: list[str] = field(default_factory=list)  # what Dynamo could not trace in the run (it ran that code eagerly)


# fxlab's own work on the captured graphs, not the program's: outside an inference mode the
# program compiled under (serving code calls its model in one), whose tensors take no
# in-place write outside it and keep no version counter, and with no autograd.
@torch.inference_mode(False)
@torch.no_grad()
def trace_driven_run(
    trace: Trace,
    driven: DrivenRun,
    request: TraceRequest,
    options: TorchAirOptions,
    *,
    torchair: TorchAirCode | None = None,
    ranks: RankHooks | None = None,
    progress: Progress | None = None,
    loaded: LoadedModel | None = None,
    reference: AclGraphReference | None = None,
) -> Capture:
    """Fill ``trace`` (its model, versions and eager-vs-compiled check already set) from a
    driven run: every stage of every graph, the checks of each call, the status."""
    say = progress or (lambda message: None)
    trace.stages = list(request.stages)
    trace.mode, trace.options_set = options.mode, list(options.set_by)
    trace.calls = driven.calls
    if driven.calls and driven.calls[0].check is None:
        driven.calls[0].check = trace.check
    if not driven.graphs:
        trace.notes.append(no_graph_note(driven.untraced))
    trace.notes.extend(options.notes)
    trace.notes.extend(driven.notes)
    captured = Capture(trace, options=options, loaded=loaded)
    _record_graphs(captured, driven.graphs, request, torchair, say)
    trace.notes.extend(_scope_errors_note(captured))
    _check_custom_ops(captured, driven.recorder, driven.graph_breaks)
    judge = _judge(loaded, options, driven.dynamic, reference if ranks is None else None)
    captured.reference = judge.reference
    verify = _Verifier(captured, request.verify, say, driven.not_executed, judge)
    _set_check(trace, verify(driven.recorder, ranks=ranks, only=driven.first_call_graphs))
    check_later_calls(driven.calls, driven.later_recorders, lambda graphs, runs: verify(runs, only=graphs))
    _check_user_passes(captured, driven.recorder, say)
    trace.status = trace_status(trace)
    return captured


def _scope_errors_note(captured: Capture) -> list[str]:
    """When the GE graph's scopes hold errors ``fxlab scopes`` reports (a SuperKernel option
    or core count TorchAir or GE refuses or ignores, unpaired markers): a note saying how many
    and where they are listed; the graphs themselves are as TorchAir builds them."""
    inputs = [
        GraphInput(graph.index, live.modules.get(FUNCTIONAL), graph.ir, graph.break_reason)
        for graph, live in zip(captured.trace.graphs, captured.graphs)
        if graph.ir is not None and _has_scope_markers(live.modules.get(FUNCTIONAL))
    ]
    if not inputs:
        return []
    errors = [f for f in build_scope_report(inputs, captured.options.soc).findings if f.severity == "error"]
    if not errors:
        return []
    model = captured.trace.model if captured.loaded is not None and captured.loaded.path else "MODEL.py"
    return [
        f"the scopes hold {len(errors)} error(s) that TorchAir or GE fails on or ignores (the first: {errors[0].code}): "
        f"`fxlab scopes {shlex.quote(model)}` lists them"
    ]


def _has_scope_markers(gm: Any) -> bool:
    return gm is not None and any(node.op == "call_function" and is_scope_enter(node) for node in gm.graph.nodes)


def no_graph_note(untraced: Sequence[str]) -> str:
    """Why a run gave no graph: what Dynamo could not trace, in its words (what, why, its
    first hint), or that what it traced ran no tensor operation."""
    if not untraced:
        return "Dynamo captured no graph: the code it traced ran no tensor operation, so there was nothing to compile"
    lines = [line.strip() for line in untraced[0].splitlines() if line.strip()]
    explanation = next((line.removeprefix("Explanation:").strip() for line in lines if line.startswith("Explanation:")), "")
    hint = next((line.removeprefix("Hint:").strip() for line in lines if line.startswith("Hint:")), "")
    why = f" ({explanation.rstrip('.')})" if explanation else ""
    return f"Dynamo captured no graph, so the model ran eagerly: {lines[0].rstrip('.')}{why}" + (f". {hint.rstrip('.')}" if hint else "")


def _compiler(backend: CapturingBackend, dynamic: bool | None, ranks: RankHooks | None) -> Callable[[Any], Callable[..., Any]]:
    def compile_fn(fn: Callable[..., Any]) -> Callable[..., Any]:
        torch._dynamo.reset()
        compiled = torch.compile(fn, backend=backend, fullgraph=False, dynamic=dynamic)
        return compiled if ranks is None else after_call(compiled, ranks.after_compiled_run)

    return compile_fn


def _record_graphs(
    captured: Capture, graphs: Sequence[CapturedGraph], request: TraceRequest, torchair: TorchAirCode | None, say: Progress
) -> None:
    trace = captured.trace
    for graph in graphs:
        say(f"recording graph {graph.index} of {len(graphs)}")
        recorded, live = record_graph(graph, request, captured.options, torchair, say)
        trace.graphs.append(recorded)
        captured.graphs.append(live)
        trace.notes.extend(f"graph {graph.index}: {choice}." for choice in graph.device_choices)
        if graph.aten_retraced and ATEN in graph.modules:
            trace.notes.append(f"graph {graph.index}: the aten stage was traced separately with make_fx ({graph.aten_retraced}).")


def inference_note(fn: Any) -> str | None:
    """For a model whose graph depends on its ``train()`` mode (dropout, batch norm with
    batch statistics in training mode): that fxlab traces it as it is, under
    ``torch.no_grad()`` as TorchAir's inference path runs, and how to get its inference
    form. None when the mode changes nothing in the graph."""
    if not isinstance(fn, torch.nn.Module):
        return None
    kinds = sorted({type(module).__name__ for module in fn.modules() if module.training and _depends_on_mode(module)})
    if not kinds:
        return None
    return (
        f"the model is in train() mode, and its {', '.join(kinds)} run as in training (dropout drawing, batch norm using batch "
        "statistics): fxlab traces it so, under torch.no_grad() as TorchAir's inference path runs; model.eval() gives their inference form."
    )


def _depends_on_mode(module: torch.nn.Module) -> bool:
    """Whether the module computes something else in training mode than in eval mode."""
    nn = torch.nn
    if isinstance(module, (nn.modules.dropout._DropoutNd, nn.RReLU)):
        return True
    if isinstance(module, (nn.modules.batchnorm._BatchNorm, nn.modules.instancenorm._InstanceNorm)):
        return bool(module.track_running_stats)  # without running statistics both modes use the batch's
    return isinstance(module, nn.MultiheadAttention) and module.dropout > 0


def random_ops(graphs: Sequence[CapturedGraph]) -> list[str]:
    """The ops of the captured functional graphs that draw random numbers (ATen tags
    them ``nondeterministic_seeded``)."""
    modules = [captured.modules.get(FUNCTIONAL) for captured in graphs]
    return sorted({op for module in modules if module is not None for op in drawing_ops(module)})


def checked_stage(stages: Sequence[str]) -> str:
    """The stage the CPU check runs: the aclgraph graph on that path, else the Ascend IR."""
    return ACLGRAPH if ACLGRAPH in stages else ASCEND_IR


def _check_custom_ops(captured: Capture, recorder: RunRecorder, graph_breaks: Sequence[str]) -> None:
    """Custom ops whose fake function disagrees with their kernel on the traced inputs,
    and custom ops Dynamo ran outside the graph: each a problem of its graph, or of the
    trace when no graph ends at the break (``graph_breaks``: the run's break reasons)."""
    trace = captured.trace
    trace.problems.extend(ops_left_out_between_graphs(graph_breaks, [g.break_reason for g in trace.graphs]))
    for graph, live in zip(captured.trace.graphs, captured.graphs):
        problems = []
        left_out = op_left_out_of_graph(graph.break_reason)
        if left_out:
            problems.append(left_out)
        functional = live.modules.get(FUNCTIONAL)
        run = recorder.run_of(functional) if functional is not None else None
        if functional is not None and run is not None and run.outputs is not None and has_custom_ops(functional):  # it ran to its end
            problems.extend(fake_vs_kernel(functional, run.inputs_before))
        if problems:
            graph.error = "; ".join(([graph.error] if graph.error else []) + problems)


class _Verifier:
    """The Ascend IR (GE mode) or the aclgraph graph (reduce-overhead, npugraph_ex) of the
    graphs run on CPU against the runs a recorder recorded."""

    def __init__(self, captured: Capture, verify: bool | None, say: Progress, not_executed: str | None, judge: Judge) -> None:
        self.captured, self.verify, self.say, self.not_executed, self.judge = captured, verify, say, not_executed, judge
        self.checked = checked_stage(captured.trace.stages)

    def __call__(self, recorder: RunRecorder, ranks: RankHooks | None = None, only: set[int] | None = None) -> CheckResult | None:
        """The check of the graphs in ``only`` (the graphs one call ran; None: all)."""
        if self.checked not in self.captured.trace.stages:
            return None
        if self.verify is False or self.not_executed:
            return CheckResult(ok=True, skipped=self.not_executed or "--no-verify was given")
        pairs = [(g, live) for g, live in zip(self.captured.trace.graphs, self.captured.graphs) if self._has_graph(g, live)]
        pairs = [(g, live) for g, live in pairs if only is None or g.index in only]
        elsewhere: list[int] = []
        if ranks is not None:  # a graph's collectives meet only if every rank runs it
            everywhere = set(ranks.runnable_everywhere([g.index for g, live in pairs if _runnable(g.partial, live, recorder)]))
            elsewhere = [g.index for g, _ in pairs if g.index not in everywhere]
            pairs = [(g, live) for g, live in pairs if g.index in everywhere]
        what = "the Ascend IR" if self.checked == ASCEND_IR else "the aclgraph graph"
        if not pairs:
            return CheckResult(ok=True, skipped=_not_on_every_rank(elsewhere, what) if elsewhere else f"no graph has {what}")
        self.say(f"running {what} on CPU against the compiled run")
        result = verify_ir(pairs, recorder) if self.checked == ASCEND_IR else verify_aclgraph(pairs, recorder, self.judge)
        if elsewhere:
            result.not_run.append(_not_on_every_rank(elsewhere, what))
        return result

    def _has_graph(self, graph: Any, live: LiveGraph) -> bool:
        return graph.ir is not None if self.checked == ASCEND_IR else ACLGRAPH in live.modules


def _judge(
    loaded: LoadedModel | None, options: TorchAirOptions, dynamic: bool | None, reference: AclGraphReference | None
) -> AclGraphJudge:
    """Who says whose graph an aclgraph mismatch is; TorchAir's own run, when given (on a
    loaded model), is made the first time a graph is judged."""
    if reference is None or loaded is None:
        return AclGraphJudge(options)
    return AclGraphJudge(options, Reference(lambda chosen: reference(loaded, chosen, dynamic), options))


def _set_check(trace: Trace, result: CheckResult | None) -> None:
    if checked_stage(trace.stages) == ASCEND_IR:
        trace.ir_check = result
    else:
        trace.aclgraph_check = result


def _runnable(partial: bool, live: LiveGraph, recorder: RunRecorder) -> bool:
    """The graph can start on this rank: every op converted (GE mode), its inputs recorded."""
    run = recorder.run_of(live.modules[FUNCTIONAL])
    return bool(run is not None and run.outputs is not None and not partial)


def _not_on_every_rank(indexes: list[int], what: str = "the Ascend IR") -> str:
    return (
        f"graph(s) {indexes}: {what} cannot run on every rank (not every op converted, no recorded run, or another rank's graph "
        "of that number calls other collectives: its graphs broke elsewhere), so its collectives would not meet"
    )


def _check_user_passes(captured: Capture, recorder: RunRecorder, say: Progress) -> None:
    """Each user pass (and the user's patterns) run before and after on the traced
    inputs: a change in the results names the pass."""
    runs = [(graph, live, run) for graph, live in zip(captured.trace.graphs, captured.graphs) for run in live.user_pass_runs]
    if not runs:
        return
    say("running the graph before and after each of the user's passes")
    captured.trace.user_pass_check = check_user_passes(runs, recorder)


def trace_status(trace: Trace) -> str:
    """``partial`` for a real difference: a graph with an error, an op not converted, a
    check that disagrees. Else ``unverified`` when a check could not run (or not for
    everything) or a GE op type was assumed without its prototype; else ``ok``."""
    if trace.problems or any(g.error or g.partial for g in trace.graphs):
        return "partial"
    # the first call's checks, and those of each later call (a warm-up, a second size)
    checks = [check for _, check in trace.checks()]
    checks += [c for call in trace.calls for c in (call.check, call.ir_check) if c is not None]
    if any(check.failed for check in checks):
        return "partial"
    if any(check.unverified for check in checks) or assumed_ge_types(trace):
        return "unverified"
    return "ok"


def assumed_ge_types(trace: Trace) -> list[str]:
    """The auto-converted ops whose GE op type was assumed: no Ascend C prototype of it was
    found, so nothing says the GE op exists with that signature."""
    return [
        f"graph {graph.index}: {entry['op']} -> {entry['ge_type']}"
        for graph in trace.graphs
        if graph.conversion is not None
        for entry in graph.conversion.auto_converted
        if not entry["prototype"]
    ]
