"""Capture a loaded model: compile once with the capturing backend, then build the
Trace — every stage of every Dynamo graph, the Ascend IR, and the eager checks."""

from __future__ import annotations

import re
import time
from dataclasses import replace
from typing import Any, Protocol, runtime_checkable
from collections.abc import Callable, Sequence

import torch
import torch.fx as fx

from fxlab.capture.aclgraph_compare import ReferenceRun, TorchAirAclGraph
from fxlab.capture.backend import CapturedGraph, CapturingBackend
from fxlab.capture.check import RunRecorder, compare_eager_compiled
from fxlab.capture.compile_options import compile_options
from fxlab.capture.ir_check import verify_ir
from fxlab.capture.loader import LoadedModel
from fxlab.capture.ranks import RankHooks, after_call, collectives_not_executed, wrap_before_runs
from fxlab.capture.records import KIND_COPY_EPILOGUE, cache_sources, stage_from_module
from fxlab.capture.torchair_config import resolve_options, stages_of_mode
from fxlab.capture.trace import CheckResult, GraphTrace, IrSummary, Trace
from fxlab.capture.warmup import CallLog, check_later_calls, run_later_calls
from fxlab.errors import UsageError
from fxlab.stack import with_stack_room
from fxlab.version import __version__ as FXLAB_VERSION
from fxlab.ir.host_outputs import host_output_notes
from fxlab.passes.annotate_scopes import annotate_scopes
from fxlab.passes.conversion_result import ConversionResult
from fxlab.passes.torchair_options import TorchAirOptions
from fxlab.stage_names import ACLGRAPH, ALL_STAGES, ASCEND_IR, ATEN, DYNAMO, FUNCTIONAL, FX_STAGES, PRE_GE

Progress = Callable[[str], None]
# Who builds the ascend_ir stage from a graph and its name, when not fxlab's converters.
Converter = Callable[[fx.GraphModule, str], ConversionResult]


@runtime_checkable
class TorchAirCode(Protocol):
    """TorchAir's own code for a capture (through the bridge): its GE conversion, given the
    options the trace follows (the user's passes and patterns), and its aclgraph passes."""

    def convert(self, gm: fx.GraphModule, name: str, options: TorchAirOptions) -> ConversionResult: ...

    def aclgraph(self, gm: fx.GraphModule, index: int, options: TorchAirOptions) -> TorchAirAclGraph: ...


# TorchAir's own backend run end to end on a loaded model with some options and torch.compile's
# ``dynamic`` (fxlab.compat.torchair_backend_run.TorchAirBackend).
AclGraphReference = Callable[[LoadedModel, TorchAirOptions, "bool | None"], ReferenceRun]


# Analyses run on every stage's graph before it is recorded: each takes a GraphModule and
# stores its results in node.meta["fxlab.*"].
STAGE_ANALYSES: tuple[Callable[[fx.GraphModule], Any], ...] = (annotate_scopes,)


def validate_stages(stages: Sequence[str], mode: str | None = None) -> tuple[str, ...]:
    """``stages`` in pipeline order; with ``mode``, only that mode's stages (asking for
    every stage, :data:`ALL_STAGES`, gives the mode's)."""
    unknown = [s for s in stages if s not in ALL_STAGES]
    if unknown:
        raise UsageError(f"unknown stage {', '.join(map(repr, unknown))}: the stages are {', '.join(ALL_STAGES)}.")
    if mode is None:
        return tuple(s for s in ALL_STAGES if s in stages)
    own = stages_of_mode(mode)
    if tuple(stages) == tuple(ALL_STAGES):
        return own
    foreign = [s for s in stages if s not in own]
    if foreign:
        raise UsageError(f"stage {', '.join(map(repr, foreign))} is not part of {mode} mode: its stages are {', '.join(own)}.")
    return tuple(s for s in own if s in stages)


def capture_trace(
    loaded: LoadedModel,
    stages: Sequence[str] = ALL_STAGES,
    progress: Progress | None = None,
    verify: bool | None = None,
    converter: Converter | TorchAirCode | None = None,
    convert_refused: bool = False,
    ranks: RankHooks | None = None,
    mode: str | None = None,
    soc: str | None = None,
    dynamic: bool = False,
    reference: AclGraphReference | None = None,
) -> Trace:
    """Run ``loaded`` eagerly and compiled, and record ``stages`` for each graph.

    ``mode`` (TorchAir's ``config.mode``; default: the model file's config, else
    ``max-autotune``) picks the path: ``pre_ge`` → ``ascend_ir`` (GE graph) or
    ``aclgraph`` (``reduce-overhead`` / ``npugraph_ex``). ``converter(gm, name)`` produces
    the ``ascend_ir`` stage (fxlab's built-in conversion by default); a
    :class:`TorchAirCode` also gives TorchAir's own aclgraph passes. ``verify`` runs the IR
    (or the aclgraph graph) on CPU against the compiled run (default: on, for every graph;
    ``False`` turns it off). ``convert_refused`` lets the built-in conversion convert ops
    TorchAir fails on (they are marked ``refused`` otherwise). ``ranks`` captures one rank
    of a multi-rank model (:mod:`fxlab.capture.ranks`). ``soc`` names the SoC whose core
    counts the aclgraph path's concurrent stream demands are checked against (default
    Ascend910B2). ``dynamic`` compiles with ``dynamic=True`` whatever the model file's
    ``compile_options`` say. The model's other input sets (a warm-up), or a second size for
    a dynamic graph, are run after the first (:mod:`fxlab.capture.warmup`). ``reference``
    runs TorchAir's own backend end to end on the model, for the aclgraph check to compare
    graphs with and to say whose graph a mismatch is (:mod:`fxlab.capture.aclgraph_blame`).
    """
    options = resolve_options(loaded.module, mode)
    options = replace(options, soc=soc or options.soc)
    stages = validate_stages(stages, options.mode)
    say = progress or (lambda message: None)
    compiling = compile_options(loaded.module, loaded.name, dynamic)
    # The compiled run's inputs and outputs are kept only for graphs whose IR (or aclgraph
    # graph) will run, or that a user's pass changes (it is checked on them).
    will_verify = (_checked_stage(stages) in stages and verify is not False) or options.has_user_passes
    recorder = RunRecorder(custom_ops_only=not will_verify)
    log = CallLog(lambda: backend.graphs, recorder)
    wrap = recorder.wrap if ranks is None else wrap_before_runs(ranks, recorder.wrap, [0])
    backend = CapturingBackend(want_aten=ATEN in stages, wrap_compiled=log.wrap_graph(wrap))
    compile_fn = log.compile_with(
        (lambda fn: _compile(fn, backend, compiling.dynamic))
        if ranks is None
        else (lambda fn: after_call(_compile(fn, backend, compiling.dynamic), ranks.after_compiled_run))
    )
    draws_random = lambda: random_ops(backend.graphs)  # noqa: E731
    log.first_call(loaded)
    say(f"running {loaded.name} eagerly and under torch.compile")
    # Dynamo recurses deeply: its frames get one large stack chunk (fxlab/stack.py).
    check = with_stack_room(compare_eager_compiled, loaded, compile_fn, draws_random, compiled_first=ranks is not None)
    not_executed = collectives_not_executed(g.modules.get(FUNCTIONAL) for g in backend.graphs)
    if not_executed:
        check = CheckResult(ok=True, skipped=not_executed)
    call_notes = run_later_calls(loaded, log, compile_fn, draws_random, check, multi_rank=ranks is not None)
    trace = Trace(
        model=str(loaded.path) if loaded.path else loaded.name,
        entry=loaded.entry,
        fxlab_version=FXLAB_VERSION,
        torch_version=torch.__version__,
        stages=list(stages),
        check=check,
        mode=options.mode,
        options_set=list(options.set_by),
        options=options,
        compile_options=compiling.to_json() if compiling.source else {},
        calls=log.calls,
    )
    trace.notes.extend(options.notes)
    trace.notes.extend(note for note in [compiling.note, inference_note(loaded.fn), *call_notes] if note)
    for captured in backend.graphs:
        say(f"recording graph {captured.index} of {len(backend.graphs)}")
        trace.graphs.append(_build_graph_trace(captured, stages, converter, say, options, convert_refused))
        trace.notes.extend(f"graph {captured.index}: {choice}." for choice in captured.device_choices)
        if captured.aten_retraced and ATEN in captured.modules:
            trace.notes.append(f"graph {captured.index}: the aten stage was traced separately with make_fx ({captured.aten_retraced}).")
    _check_custom_ops(trace, recorder)
    judge = _judge(loaded, options, compiling.dynamic, reference if ranks is None else None)
    _set_check(
        trace, _checked_stage(trace.stages), _verify(trace, recorder, verify, say, not_executed, ranks, log.first_call_graphs(), judge)
    )
    check_later_calls(log, lambda graphs, runs: _verify(trace, runs, verify, say, not_executed, only=graphs, judge=judge))
    _check_user_passes(trace, recorder, say)
    trace.status = _status(trace)
    return trace


def inference_note(fn: Any) -> str | None:
    """For a model in ``train()`` mode or with parameters requiring grad: that fxlab traces
    it for inference, as TorchAir's inference path compiles it (None otherwise)."""
    if not isinstance(fn, torch.nn.Module):
        return None
    said = []
    if any(module.training for module in fn.modules()):
        said.append("the model is in train() mode (dropout and batch norm run as in training; model.eval() gives their inference form)")
    grads = sum(1 for parameter in fn.parameters() if parameter.requires_grad)
    if grads:
        said.append(f"{grads} of its parameters require grad")
    if not said:
        return None
    return f"{' and '.join(said)}: fxlab traces inference, under torch.no_grad() as TorchAir's inference path runs, so no backward graph is captured."


def random_ops(graphs: Sequence[CapturedGraph]) -> list[str]:
    """The ops of the captured functional graphs that draw random numbers (ATen tags
    them ``nondeterministic_seeded``)."""
    found: set[str] = set()
    for captured in graphs:
        module = captured.modules.get(FUNCTIONAL)
        for node in module.graph.nodes if module is not None else ():
            if node.op == "call_function" and torch.Tag.nondeterministic_seeded in getattr(node.target, "tags", ()):
                found.add(str(node.target))
    return sorted(found)


def _compile(fn: Callable[..., Any], backend: CapturingBackend, dynamic: bool | None = None) -> Callable[..., Any]:
    torch._dynamo.reset()
    return torch.compile(fn, backend=backend, fullgraph=False, dynamic=dynamic)


def _checked_stage(stages: Sequence[str]) -> str:
    """The stage the CPU check runs: the aclgraph graph on that path, else the Ascend IR."""
    return ACLGRAPH if ACLGRAPH in stages else ASCEND_IR


def _build_graph_trace(
    captured: CapturedGraph,
    stages: Sequence[str],
    converter: Converter | TorchAirCode | None,
    say: Progress,
    options: TorchAirOptions,
    convert_refused: bool = False,
) -> GraphTrace:
    graph = GraphTrace(
        index=captured.index, break_reason=captured.break_reason, break_location=captured.break_location, error=captured.error
    )
    modules = dict(captured.modules)
    if FUNCTIONAL in modules:
        cache_sources(modules[FUNCTIONAL])  # the converter reads them (pre_ge copies them)
    if ACLGRAPH in stages and FUNCTIONAL in modules:
        say(f"running TorchAir's aclgraph passes on graph {captured.index}")
        _aclgraph(graph, modules, options, converter if isinstance(converter, TorchAirCode) else None)
    elif (PRE_GE in stages or ASCEND_IR in stages) and FUNCTIONAL in modules:
        _pre_ge(graph, modules, options)
    for module in modules.values():
        for analysis in STAGE_ANALYSES:
            analysis(module)
    if ASCEND_IR in stages and FUNCTIONAL in modules:
        say(f"converting graph {captured.index} to Ascend IR")
        # TorchAir's own conversion runs its own passes, from the functional graph.
        source = modules.get(PRE_GE, modules[FUNCTIONAL]) if converter is None else modules[FUNCTIONAL]
        _convert(graph, source, converter, options, convert_refused)
    ge_ops = graph.ir.ops_by_fx_node() if graph.ir is not None else None
    for name in FX_STAGES:
        if name in stages and name in modules:
            graph.stages[name] = stage_from_module(name, modules[name], ge_ops if name in (FUNCTIONAL, PRE_GE) else None)
    graph.modules = modules
    graph.mutated_inputs = _mutated_inputs(modules)
    return graph


def _pre_ge(graph: GraphTrace, modules: dict[str, fx.GraphModule], options: TorchAirOptions) -> None:
    """The ``pre_ge`` module: the functional graph after TorchAir's passes before
    conversion, and what each pass did."""
    from fxlab.passes.infra import PassFailedError
    from fxlab.passes.pre_ge import pre_ge_graph

    try:
        result = pre_ge_graph(modules[FUNCTIONAL], options)
    except PassFailedError as exc:  # the other stages stay useful; the IR is then the functional graph's
        graph.error = f"pre_ge stage: {exc}; the Ascend IR was converted from the functional graph"
        return
    modules[PRE_GE] = result.gm
    graph.pre_ge_passes = [record.to_json() for record in result.records]
    graph.user_pass_runs = result.user_runs
    graph.patterns = result.patterns.to_json() if result.patterns and result.patterns.patterns else []


def _aclgraph(graph: GraphTrace, modules: dict[str, fx.GraphModule], options: TorchAirOptions, torchair: TorchAirCode | None) -> None:
    """The ``aclgraph`` module: fxlab's passes mirroring TorchAir's, each recorded; with
    TorchAir's own code, TorchAir's graph, compared with fxlab's."""
    from fxlab.passes.aclgraph.pipeline import aclgraph_graph
    from fxlab.passes.infra import PassFailedError

    try:
        result = aclgraph_graph(modules[FUNCTIONAL], options, graph.index)
    except PassFailedError as exc:
        graph.error = f"aclgraph stage: {exc}"
        return
    modules[ACLGRAPH] = result.gm
    graph.aclgraph_passes = [record.to_json() for record in result.records]
    graph.capture_code = result.capture_code
    graph.user_pass_runs = result.user_runs
    graph.patterns = result.patterns.to_json() if result.patterns and result.patterns.patterns else []
    if torchair is not None:
        from fxlab.capture.aclgraph_compare import adopt_torchair_graph

        adopt_torchair_graph(graph, modules, torchair.aclgraph(modules[FUNCTIONAL], graph.index, options))
    _streams(graph, modules, options)


def _streams(graph: GraphTrace, modules: dict[str, fx.GraphModule], options: TorchAirOptions) -> None:
    """Streams, events and stream core limits of the graph, and concurrent core demands."""
    from fxlab.reports.aclgraph_streams import graph_streams
    from fxlab.socs import soc_by_name

    try:
        soc = soc_by_name(options.soc)
    except UsageError:  # a SoC fxlab has no core counts for: the streams are shown unchecked
        soc = None
    found = graph_streams(graph.index, modules[FUNCTIONAL], modules.get(ACLGRAPH), soc)
    if len(found.streams) > 1 or found.calls or found.events:
        graph.streams = found.to_json()


def _convert(
    graph: GraphTrace,
    functional: fx.GraphModule,
    converter: Converter | TorchAirCode | None,
    options: TorchAirOptions,
    convert_refused: bool = False,
) -> None:
    start = time.perf_counter()
    name = f"graph_{graph.index}"
    # TorchAir's own conversion runs its own GE-graph passes; the built-in one is followed
    # by fxlab's (the Data ops nothing reads go, an Assign into a graph input becomes an
    # extra graph output GE writes into its memory).
    if converter is None:
        from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
        from fxlab.passes.ge_passes import after_conversion

        result = after_conversion(convert_to_ascend_ir(functional, name, convert_refused=convert_refused))
    elif isinstance(converter, TorchAirCode):  # with the user's passes and patterns
        result = converter.convert(functional, name, options)
    else:
        result = converter(functional, name)
    graph.conversion = result
    graph.ir = result.graph
    graph.ir_summary = {
        "ops": len(result.graph.ops),
        "partial": result.partial,
        "seconds": round(time.perf_counter() - start, 4),
        "warnings": list(result.warnings),
        "notes": list(result.notes),
        "assigns_to_outputs": result.assigns_to_outputs,
        "ge_options": dict(result.ge_options),
    }
    host_outputs = host_output_notes(result.graph)
    if host_outputs:  # outputs TorchAir makes on the host, not in GE
        graph.ir_summary["host_outputs"] = host_outputs
    _summarize_conversion(graph.ir_summary, result, result.fx_graph or functional)


def _summarize_conversion(summary: IrSummary, result: ConversionResult, converted: fx.GraphModule) -> None:
    """In ``ir_summary``, what a summary must say about the conversion: the ops not
    converted (with why) and the ops converted by TorchAir's auto-converter rule (with the
    GE type assumed and whether its prototype was found)."""
    from fxlab.reports.conversion_summary import auto_converted, not_converted

    failed = not_converted(result)
    if failed:
        summary["not_converted"] = failed
    auto = auto_converted(converted, result)
    if auto:
        summary["auto_converted"] = auto


def _mutated_inputs(modules: dict[str, fx.GraphModule]) -> list[str]:
    """Graph inputs the functional graph writes back (its trailing ``copy_`` epilogue),
    named as Dynamo named them (``L_self_buffers_cache_`` etc.)."""
    functional = modules.get(FUNCTIONAL)
    if functional is None:
        return []
    from fxlab.capture.records import classify, mutated_arguments

    placeholders = [n for n in functional.graph.nodes if n.op == "placeholder"]
    dynamo = modules.get(DYNAMO)
    dynamo_names = [n.name for n in dynamo.graph.nodes if n.op == "placeholder"] if dynamo else []
    offset = len(placeholders) - len(dynamo_names)
    names = []
    for node in functional.graph.nodes:
        if node.op == "call_function" and classify(node, mutated_arguments(node)) == KIND_COPY_EPILOGUE:
            index = placeholders.index(node.args[0])
            user_name = dynamo_names[index - offset] if 0 <= index - offset < len(dynamo_names) else None
            names.append(f"{node.args[0].name} ({readable_input_name(user_name)})" if user_name else node.args[0].name)
    return names


def readable_input_name(dynamo_name: str) -> str:
    """``l_self_modules_layers_modules_0_modules_attn_buffers_k_cache_`` ->
    ``layers.0.attn.k_cache``; ``l_x_`` -> ``x``."""
    name = re.sub(r"^l_", "", dynamo_name.lower()).rstrip("_")
    for kind in ("modules", "buffers", "parameters"):
        name = name.replace(f"self_{kind}_", "").replace(f"_{kind}_", ".")
    return name


def _check_custom_ops(trace: Trace, recorder: RunRecorder) -> None:
    """Custom ops whose fake function disagrees with their kernel on the traced inputs,
    and custom ops Dynamo ran outside the graph: each a problem of its graph."""
    from fxlab.capture.custom_op_check import fake_vs_kernel, has_custom_ops, op_left_out_of_graph

    for graph in trace.graphs:
        problems = []
        left_out = op_left_out_of_graph(graph.break_reason)
        if left_out:
            problems.append(left_out)
        functional = graph.modules.get(FUNCTIONAL)
        run = recorder.run_of(functional) if functional is not None else None
        if (
            functional is not None and run is not None and run.outputs is not None and has_custom_ops(functional)
        ):  # the graph ran to its end
            problems.extend(fake_vs_kernel(functional, run.inputs_before))
        if problems:
            graph.error = "; ".join(([graph.error] if graph.error else []) + problems)


def _verify(
    trace: Trace,
    recorder: RunRecorder,
    verify: bool | None,
    say: Progress,
    not_executed: str | None = None,
    ranks: RankHooks | None = None,
    only: set[int] | None = None,
    judge: Any = None,
) -> CheckResult | None:
    """The Ascend IR (GE mode) or the aclgraph graph (reduce-overhead, npugraph_ex) of the
    graphs (of those in ``only``: the graphs one call ran) run on CPU against the runs
    ``recorder`` recorded."""
    checked = _checked_stage(trace.stages)
    if checked not in trace.stages:
        return None
    if verify is False or not_executed:
        return CheckResult(ok=True, skipped=not_executed or "--no-verify was given")
    graphs = [
        g
        for g in trace.graphs
        if (g.ir is not None if checked == ASCEND_IR else ACLGRAPH in g.modules) and (only is None or g.index in only)
    ]
    elsewhere: list[int] = []
    if ranks is not None:  # a graph's collectives meet only if every rank runs it
        everywhere = set(ranks.runnable_everywhere([g.index for g in graphs if _runnable(g, recorder)]))
        elsewhere = [g.index for g in graphs if g.index not in everywhere]
        graphs = [g for g in graphs if g.index in everywhere]
    what = "the Ascend IR" if checked == ASCEND_IR else "the aclgraph graph"
    if not graphs:
        return CheckResult(ok=True, skipped=_not_on_every_rank(elsewhere, what) if elsewhere else f"no graph has {what}")
    say(f"running {what} on CPU against the compiled run")
    if checked == ASCEND_IR:
        result = verify_ir(graphs, recorder)
    else:
        from fxlab.capture.graph_check import verify_aclgraph

        result = verify_aclgraph(graphs, recorder, judge)
    if elsewhere:
        result.not_run.append(_not_on_every_rank(elsewhere, what))
    return result


def _judge(loaded: LoadedModel, options: TorchAirOptions, dynamic: bool | None, reference: AclGraphReference | None) -> Any:
    """Who says whose graph an aclgraph mismatch is; TorchAir's own run, when given, is
    made the first time a graph is judged."""
    from fxlab.capture.aclgraph_blame import AclGraphJudge
    from fxlab.capture.aclgraph_compare import Reference

    if reference is None:
        return AclGraphJudge(options)
    return AclGraphJudge(options, Reference(lambda chosen: reference(loaded, chosen, dynamic), options))


def _set_check(trace: Trace, checked: str, result: CheckResult | None) -> None:
    if checked == ASCEND_IR:
        trace.ir_check = result
    else:
        trace.aclgraph_check = result


def _runnable(graph: GraphTrace, recorder: RunRecorder) -> bool:
    """The graph can start on this rank: every op converted (GE mode), its inputs recorded."""
    run = recorder.run_of(graph.modules[FUNCTIONAL])
    return bool(run is not None and run.outputs is not None and not (graph.ir_summary or {}).get("partial"))


def _not_on_every_rank(indexes: list[int], what: str = "the Ascend IR") -> str:
    return f"graph(s) {indexes}: {what} cannot run on every rank (not every op converted, or no recorded run), so its collectives would not meet"


def _check_user_passes(trace: Trace, recorder: RunRecorder, say: Progress) -> None:
    """Each user pass (and the user's patterns) run before and after on the traced
    inputs: a change in the results names the pass."""
    runs = [(g, run) for g in trace.graphs for run in g.user_pass_runs]
    if not runs:
        return
    from fxlab.capture.graph_check import check_user_passes

    say("running the graph before and after each of the user's passes")
    trace.user_pass_check = check_user_passes(runs, recorder)


def _status(trace: Trace) -> str:
    """``partial`` for a real difference: a graph with an error, an op not converted, a
    check that disagrees. Else ``unverified`` when a check could not run (or not for
    everything) or a GE op type was assumed without its prototype; else ``ok``."""
    if any(g.error for g in trace.graphs) or any(g.ir_summary and g.ir_summary["partial"] for g in trace.graphs):
        return "partial"
    # the first call's checks, and those of each later call (a warm-up, a second size)
    first = (trace.check, trace.ir_check, trace.aclgraph_check, trace.user_pass_check)
    checks = [c for c in (*first, *(c for call in trace.calls for c in (call.check, call.ir_check))) if c is not None]
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
        for entry in (graph.ir_summary or {}).get("auto_converted", [])
        if not entry["prototype"]
    ]
