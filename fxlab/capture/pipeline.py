"""Capture a loaded model: compile once with the capturing backend, then build the
Trace — every stage of every Dynamo graph, the Ascend IR, and the eager checks."""

from __future__ import annotations

import re
import time
from dataclasses import replace
from typing import Any
from collections.abc import Callable, Sequence

import torch
import torch.fx as fx

from fxlab import __version__ as FXLAB_VERSION
from fxlab.capture.backend import CapturedGraph, CapturingBackend
from fxlab.capture.check import RunRecorder, compare_eager_compiled, verify_ir
from fxlab.capture.loader import LoadedModel
from fxlab.capture.records import KIND_COPY_EPILOGUE, cache_sources, stage_from_module
from fxlab.capture.stages import STAGES
from fxlab.capture.torchair_config import resolve_options, stages_of_mode
from fxlab.capture.trace import CheckResult, GraphTrace, Trace
from fxlab.errors import UsageError
from fxlab.passes.torchair_options import TorchAirOptions
from fxlab.heap import capture_heap, frozen_heap
from fxlab.stack import with_stack_room
from fxlab.ir.host_outputs import host_output_notes
from fxlab.passes.annotate_scopes import annotate_scopes

ALL_STAGES = (*STAGES, "ascend_ir")  # every stage of every mode
Progress = Callable[[str], None]
# Graphs above this many FX nodes are not run through the reference executor by default.
VERIFY_NODE_LIMIT = 1500

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
    converter: Callable[..., Any] | None = None,
    convert_refused: bool = False,
    mode: str | None = None,
    soc: str | None = None,
) -> Trace:
    """Run ``loaded`` eagerly and compiled, and record ``stages`` for each graph.

    ``mode`` (TorchAir's ``config.mode``; default: the model file's config, else
    ``max-autotune``) picks the path: ``pre_ge`` → ``ascend_ir`` (GE graph) or
    ``aclgraph`` (``reduce-overhead`` / ``npugraph_ex``). ``converter(gm, name)`` produces
    the ``ascend_ir`` stage (fxlab's built-in conversion by default; one with
    ``takes_options`` is also given the options, and one with an ``aclgraph`` method
    gives TorchAir's own aclgraph passes); ``verify`` runs the IR (or the aclgraph graph)
    on CPU against the compiled run (default: for graphs up to :data:`VERIFY_NODE_LIMIT`
    nodes). ``convert_refused`` lets the built-in conversion convert ops TorchAir fails
    on (they are marked ``refused`` otherwise). ``soc`` names the SoC whose core counts the
    aclgraph path's concurrent stream demands are checked against (default Ascend910B2).
    """
    options = resolve_options(loaded.module, mode)
    options = replace(options, soc=soc or options.soc)
    stages = validate_stages(stages, options.mode)
    say = progress or (lambda message: None)
    # The compiled run's inputs and outputs are kept only for graphs whose IR will run.
    checked = "aclgraph" if options.aclgraph else "ascend_ir"
    will_verify = (checked in stages and verify is not False) or bool(
        options.custom_pre_pass or options.custom_post_pass or options.patterns
    )
    recorder = RunRecorder(node_limit=None if verify else VERIFY_NODE_LIMIT, custom_ops_only=not will_verify)
    backend = CapturingBackend(want_aten="aten" in stages, wrap_compiled=recorder.wrap)
    say(f"running {loaded.name} eagerly and under torch.compile")
    with capture_heap():  # Dynamo and aot build a large heap that stays alive
        # Dynamo recurses deeply: its frames get one large stack chunk (fxlab/stack.py).
        check = with_stack_room(compare_eager_compiled, loaded, lambda fn: _compile(fn, backend), lambda: random_ops(backend.graphs))
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
        )
        trace.notes.extend(options.notes)
        with frozen_heap():  # from here on, only the trace is added
            for captured in backend.graphs:
                say(f"recording graph {captured.index} of {len(backend.graphs)}")
                trace.graphs.append(_build_graph_trace(captured, stages, converter, say, options, convert_refused))
                trace.notes.extend(f"graph {captured.index}: {choice}." for choice in captured.device_choices)
                if captured.aten_retraced and "aten" in captured.modules:
                    trace.notes.append(
                        f"graph {captured.index}: the aten stage was traced separately with make_fx ({captured.aten_retraced})."
                    )
            _check_custom_ops(trace, recorder)
            _verify(trace, recorder, verify, say)
            _check_user_passes(trace, recorder, say)
    trace.status = _status(trace)
    return trace


def random_ops(graphs: Sequence[CapturedGraph]) -> list[str]:
    """The ops of the captured functional graphs that draw random numbers (ATen tags
    them ``nondeterministic_seeded``)."""
    found: set[str] = set()
    for captured in graphs:
        module = captured.modules.get("functional")
        for node in module.graph.nodes if module is not None else ():
            if node.op == "call_function" and torch.Tag.nondeterministic_seeded in getattr(node.target, "tags", ()):
                found.add(str(node.target))
    return sorted(found)


def _compile(fn: Callable[..., Any], backend: CapturingBackend) -> Callable[..., Any]:
    torch._dynamo.reset()
    return torch.compile(fn, backend=backend, fullgraph=False)


def _build_graph_trace(
    captured: CapturedGraph, stages: Sequence[str], converter: Any, say: Progress, options: TorchAirOptions, convert_refused: bool = False
) -> GraphTrace:
    graph = GraphTrace(
        index=captured.index, break_reason=captured.break_reason, break_location=captured.break_location, error=captured.error
    )
    modules = dict(captured.modules)
    if "functional" in modules:
        cache_sources(modules["functional"])  # the converter reads them (pre_ge copies them)
    if "aclgraph" in stages and "functional" in modules:
        say(f"running TorchAir's aclgraph passes on graph {captured.index}")
        _aclgraph(graph, modules, options, converter)
    elif ("pre_ge" in stages or "ascend_ir" in stages) and "functional" in modules:
        _pre_ge(graph, modules, options)
    for module in modules.values():
        for analysis in STAGE_ANALYSES:
            analysis(module)
    if "ascend_ir" in stages and "functional" in modules:
        say(f"converting graph {captured.index} to Ascend IR")
        # TorchAir's own conversion runs its own passes, from the functional graph.
        source = modules.get("pre_ge", modules["functional"]) if converter is None else modules["functional"]
        _convert(graph, source, converter, convert_refused, options)
    ge_ops = graph.ir.ops_by_fx_node() if graph.ir is not None else None
    for name in STAGES:
        if name in stages and name in modules:
            graph.stages[name] = stage_from_module(name, modules[name], ge_ops if name in ("functional", "pre_ge") else None)
    graph.modules = modules
    graph.mutated_inputs = _mutated_inputs(modules)
    return graph


def _pre_ge(graph: GraphTrace, modules: dict[str, fx.GraphModule], options: TorchAirOptions) -> None:
    """The ``pre_ge`` module: the functional graph after TorchAir's passes before
    conversion, and what each pass did."""
    from fxlab.passes.infra import PassFailedError
    from fxlab.passes.pre_ge import pre_ge_graph

    try:
        result = pre_ge_graph(modules["functional"], options)
    except PassFailedError as exc:  # the other stages stay useful; the IR is then the functional graph's
        graph.error = f"pre_ge stage: {exc}; the Ascend IR was converted from the functional graph"
        return
    modules["pre_ge"] = result.gm
    graph.pre_ge_passes = [record.to_json() for record in result.records]
    graph.user_pass_runs = result.user_runs
    graph.patterns = result.patterns.to_json() if result.patterns and result.patterns.patterns else []


def _aclgraph(graph: GraphTrace, modules: dict[str, fx.GraphModule], options: TorchAirOptions, converter: Any) -> None:
    """The ``aclgraph`` module: fxlab's passes mirroring TorchAir's, each recorded; with
    TorchAir's own (``converter.aclgraph``), TorchAir's graph, compared with fxlab's."""
    from fxlab.passes.aclgraph.pipeline import aclgraph_graph
    from fxlab.passes.infra import PassFailedError

    try:
        result = aclgraph_graph(modules["functional"], options, graph.index)
    except PassFailedError as exc:
        graph.error = f"aclgraph stage: {exc}"
        return
    modules["aclgraph"] = result.gm
    graph.aclgraph_passes = [record.to_json() for record in result.records]
    graph.capture_code = result.capture_code
    graph.user_pass_runs = result.user_runs
    graph.patterns = result.patterns.to_json() if result.patterns and result.patterns.patterns else []
    theirs = getattr(converter, "aclgraph", None)
    if theirs is not None:
        from fxlab.capture.aclgraph_compare import adopt_torchair_graph

        adopt_torchair_graph(graph, modules, theirs(modules["functional"], graph.index, options))
    _streams(graph, modules, options)


def _streams(graph: GraphTrace, modules: dict[str, fx.GraphModule], options: TorchAirOptions) -> None:
    """Streams, events and stream core limits of the graph, and concurrent core demands."""
    from fxlab.reports.aclgraph_streams import graph_streams
    from fxlab.socs import soc_by_name

    try:
        soc = soc_by_name(options.soc)
    except UsageError:  # a SoC fxlab has no core counts for: the streams are shown unchecked
        soc = None
    found = graph_streams(graph.index, modules["functional"], modules.get("aclgraph"), soc)
    if len(found.streams) > 1 or found.calls or found.events:
        graph.streams = found.to_json()


def _convert(graph: GraphTrace, functional: fx.GraphModule, converter: Any, convert_refused: bool = False, options: Any = None) -> None:
    start = time.perf_counter()
    if converter is None:
        result, reuse = _convert_builtin(functional, f"graph_{graph.index}", convert_refused)
    elif getattr(converter, "takes_options", False):  # TorchAir's own, with the user's passes and patterns
        result, reuse = converter(functional, f"graph_{graph.index}", options), None
    else:  # e.g. TorchAir's own conversion, which maps Assign to outputs itself
        result, reuse = converter(functional, f"graph_{graph.index}"), None
    graph.conversion = result
    graph.ir = result.graph
    graph.ir_summary = {
        "ops": len(result.graph.ops),
        "partial": bool(result.partial),
        "seconds": round(time.perf_counter() - start, 4),
        "warnings": list(getattr(result, "warnings", [])),
        "notes": list(getattr(result, "notes", [])) + (reuse.notes if reuse else []),
        "assigns_to_outputs": reuse.removed_assigns if reuse else [],
        "ge_options": reuse.ge_options if reuse else dict(getattr(result, "options", {})),
    }
    host_outputs = host_output_notes(result.graph)
    if host_outputs:  # outputs TorchAir makes on the host, not in GE
        graph.ir_summary["host_outputs"] = host_outputs


def _convert_builtin(functional: fx.GraphModule, name: str, convert_refused: bool = False) -> tuple[Any, Any]:
    from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
    from fxlab.passes.ge_passes import ge_graph_passes

    result = convert_to_ascend_ir(functional, name, convert_refused=convert_refused)
    # As TorchAir before handing the graph to GE: the Data ops nothing reads go, and an
    # Assign into a graph input becomes an extra graph output GE writes into its memory.
    reuse = ge_graph_passes(result.graph)
    return result, reuse


def _mutated_inputs(modules: dict[str, fx.GraphModule]) -> list[str]:
    """Graph inputs the functional graph writes back (its trailing ``copy_`` epilogue),
    named as Dynamo named them (``L_self_buffers_cache_`` etc.)."""
    functional = modules.get("functional")
    if functional is None:
        return []
    from fxlab.capture.records import classify, mutated_arguments

    placeholders = [n for n in functional.graph.nodes if n.op == "placeholder"]
    dynamo = modules.get("dynamo")
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
        functional = graph.modules.get("functional")
        run = recorder.run_of(functional) if functional is not None else None
        if run is not None and has_custom_ops(functional):
            problems.extend(fake_vs_kernel(functional, run.inputs_before))
        if problems:
            graph.error = "; ".join(([graph.error] if graph.error else []) + problems)


def _verify(trace: Trace, recorder: RunRecorder, verify: bool | None, say: Progress) -> None:
    checked = "aclgraph" if "aclgraph" in trace.stages else "ascend_ir"
    if checked not in trace.stages:
        return
    if verify is False:
        skipped = CheckResult(ok=True, skipped="--no-verify was given")
        trace.ir_check, trace.aclgraph_check = (None, skipped) if checked == "aclgraph" else (skipped, None)
        return
    graphs = [g for g in trace.graphs if (g.ir is not None if checked == "ascend_ir" else "aclgraph" in g.modules)]
    big = [g.index for g in graphs if len(g.modules["functional"].graph.nodes) > VERIFY_NODE_LIMIT]
    if verify is None and big:
        what = "Ascend IR" if checked == "ascend_ir" else "aclgraph graph"
        trace.notes.append(f"{what} of graph(s) {big} not run on CPU (over {VERIFY_NODE_LIMIT} nodes); pass --verify to run it.")
        graphs = [g for g in graphs if g.index not in big]
    if not graphs:
        reason = (
            f"graph(s) {big} over {VERIFY_NODE_LIMIT} FX nodes; pass --verify to run them" if big else f"no graph has an {checked} stage"
        )
        result = CheckResult(ok=True, skipped=reason)
    elif checked == "aclgraph":
        from fxlab.capture.graph_check import verify_aclgraph

        say("running the aclgraph graph on CPU against the compiled run")
        result = verify_aclgraph(graphs, recorder)
    else:
        say("running the Ascend IR on CPU against the compiled run")
        result = verify_ir(graphs, recorder)
    if checked == "aclgraph":
        trace.aclgraph_check = result
    else:
        trace.ir_check = result


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
    """``ok`` only when every graph converted, eager matched the compiled run and the
    Ascend IR on CPU matched it (where it could run)."""
    if any(g.error for g in trace.graphs) or any(g.ir_summary and g.ir_summary["partial"] for g in trace.graphs):
        return "partial"
    if any(check is not None and check.failed for check in (trace.check, trace.ir_check, trace.aclgraph_check, trace.user_pass_check)):
        return "partial"
    return "ok"
