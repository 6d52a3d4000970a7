"""Capture a loaded model: compile once with the capturing backend, then build the
Trace — every stage of every Dynamo graph, the Ascend IR, and the eager checks."""

from __future__ import annotations

import re
import time
from typing import Any
from collections.abc import Callable, Sequence

import torch
import torch.fx as fx

from fxlab import __version__ as FXLAB_VERSION
from fxlab.capture.backend import CapturedGraph, CapturingBackend
from fxlab.capture.check import RunRecorder, compare_eager_compiled, verify_ir
from fxlab.capture.compile_options import compile_options
from fxlab.capture.input_sets import argument_names, describe_inputs
from fxlab.capture.warmup import CallLog, check_later_calls, run_later_calls
from fxlab.capture.loader import LoadedModel
from fxlab.capture.records import KIND_COPY_EPILOGUE, cache_sources, stage_from_module
from fxlab.capture.stages import STAGES
from fxlab.capture.trace import CheckResult, GraphTrace, Trace
from fxlab.errors import UsageError
from fxlab.heap import capture_heap, frozen_heap
from fxlab.stack import with_stack_room
from fxlab.ir.host_outputs import host_output_notes
from fxlab.passes.annotate_scopes import annotate_scopes

ALL_STAGES = (*STAGES, "ascend_ir")
Progress = Callable[[str], None]
# Graphs above this many FX nodes are not run through the reference executor by default.
VERIFY_NODE_LIMIT = 1500

# Analyses run on every stage's graph before it is recorded: each takes a GraphModule and
# stores its results in node.meta["fxlab.*"].
STAGE_ANALYSES: tuple[Callable[[fx.GraphModule], Any], ...] = (annotate_scopes,)


def validate_stages(stages: Sequence[str]) -> tuple[str, ...]:
    unknown = [s for s in stages if s not in ALL_STAGES]
    if unknown:
        raise UsageError(f"unknown stage {', '.join(map(repr, unknown))}: the stages are {', '.join(ALL_STAGES)}.")
    return tuple(s for s in ALL_STAGES if s in stages)


def capture_trace(
    loaded: LoadedModel,
    stages: Sequence[str] = ALL_STAGES,
    progress: Progress | None = None,
    verify: bool | None = None,
    converter: Callable[[fx.GraphModule, str], Any] | None = None,
    convert_refused: bool = False,
    dynamic: bool = False,
) -> Trace:
    """Run ``loaded`` eagerly and compiled, and record ``stages`` for each graph.

    ``converter(gm, name)`` produces the ``ascend_ir`` stage (fxlab's built-in conversion
    by default); ``verify`` runs the IR on CPU against the compiled run (default: for
    graphs up to :data:`VERIFY_NODE_LIMIT` nodes). ``convert_refused`` lets the built-in
    conversion convert ops TorchAir fails on (they are marked ``refused`` otherwise).
    ``dynamic`` compiles with ``dynamic=True`` whatever the model file's
    ``compile_options`` say. The model's other input sets (a warm-up), or a second size
    for a dynamic graph, are run after the first (:mod:`fxlab.capture.warmup`).
    """
    stages = validate_stages(stages)
    say = progress or (lambda message: None)
    options = compile_options(loaded.module, loaded.name, dynamic)
    # The compiled run's inputs and outputs are kept only for graphs whose IR will run.
    will_verify = "ascend_ir" in stages and verify is not False
    recorder = RunRecorder(node_limit=None if verify else VERIFY_NODE_LIMIT, custom_ops_only=not will_verify)
    log = CallLog(lambda: backend.graphs, recorder)
    backend = CapturingBackend(want_aten="aten" in stages, wrap_compiled=log.wrap_graph(recorder.wrap))
    compile_fn = log.compile_with(lambda fn: _compile(fn, backend, options.dynamic))
    draws_random = lambda: random_ops(backend.graphs)  # noqa: E731
    log.upcoming = (describe_inputs(loaded.args, loaded.kwargs, argument_names(loaded.fn)), "given")
    say(f"running {loaded.name} eagerly and under torch.compile")
    with capture_heap():  # Dynamo and aot build a large heap that stays alive
        # Dynamo recurses deeply: its frames get one large stack chunk (fxlab/stack.py).
        check = with_stack_room(compare_eager_compiled, loaded, compile_fn, draws_random)
        if log.calls:
            log.calls[0].check = check
        call_notes = run_later_calls(loaded, log, compile_fn, draws_random)
        trace = Trace(
            model=str(loaded.path) if loaded.path else loaded.name,
            entry=loaded.entry,
            fxlab_version=FXLAB_VERSION,
            torch_version=torch.__version__,
            stages=list(stages),
            check=check,
            compile_options=options.to_json() if options.source else {},
            calls=log.calls,
        )
        trace.notes.extend(n for n in (options.note, *call_notes) if n)
        with frozen_heap():  # from here on, only the trace is added
            for captured in backend.graphs:
                say(f"recording graph {captured.index} of {len(backend.graphs)}")
                trace.graphs.append(_build_graph_trace(captured, stages, converter, say, convert_refused))
                trace.notes.extend(f"graph {captured.index}: {choice}." for choice in captured.device_choices)
                if captured.aten_retraced and "aten" in captured.modules:
                    trace.notes.append(
                        f"graph {captured.index}: the aten stage was traced separately with make_fx ({captured.aten_retraced})."
                    )
            _check_custom_ops(trace, recorder)
            first_graphs = set(log.calls[0].graphs) if len(log.calls) > 1 else None
            trace.ir_check = _verify(trace, recorder, verify, say, first_graphs)
            check_later_calls(log, lambda graphs, runs: _verify(trace, runs, verify, say, graphs))
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


def _compile(fn: Callable[..., Any], backend: CapturingBackend, dynamic: bool | None = None) -> Callable[..., Any]:
    torch._dynamo.reset()
    return torch.compile(fn, backend=backend, fullgraph=False, dynamic=dynamic)


def _build_graph_trace(
    captured: CapturedGraph, stages: Sequence[str], converter: Any, say: Progress, convert_refused: bool = False
) -> GraphTrace:
    graph = GraphTrace(
        index=captured.index, break_reason=captured.break_reason, break_location=captured.break_location, error=captured.error
    )
    modules = dict(captured.modules)
    if "reinplaced" in stages and "functional" in modules:
        from fxlab.passes.reinplace import reinplace

        try:
            modules["reinplaced"] = reinplace(modules["functional"])[0]
        except Exception as exc:  # noqa: BLE001 - the other stages stay useful
            graph.error = f"reinplaced stage: {type(exc).__name__}: {exc}"
    if "functional" in modules:
        cache_sources(modules["functional"])  # the converter reads them (pre_ge copies them)
    if ("pre_ge" in stages or "ascend_ir" in stages) and "functional" in modules:
        _pre_ge(graph, modules)
    for module in modules.values():
        for analysis in STAGE_ANALYSES:
            analysis(module)
    if "ascend_ir" in stages and "functional" in modules:
        say(f"converting graph {captured.index} to Ascend IR")
        # TorchAir's own conversion runs its own passes, from the functional graph.
        source = modules.get("pre_ge", modules["functional"]) if converter is None else modules["functional"]
        _convert(graph, source, converter, convert_refused)
    ge_ops = graph.ir.ops_by_fx_node() if graph.ir is not None else None
    for name in STAGES:
        if name in stages and name in modules:
            graph.stages[name] = stage_from_module(name, modules[name], ge_ops if name in ("functional", "pre_ge") else None)
    graph.modules = modules
    graph.mutated_inputs = _mutated_inputs(modules)
    return graph


def _pre_ge(graph: GraphTrace, modules: dict[str, fx.GraphModule]) -> None:
    """The ``pre_ge`` module: the functional graph after TorchAir's passes before
    conversion, and what each pass did."""
    from fxlab.passes.pre_ge import pre_ge_graph

    try:
        modules["pre_ge"], records = pre_ge_graph(modules["functional"])
    except RuntimeError as exc:  # the other stages stay useful; the IR is then the functional graph's
        graph.error = f"pre_ge stage: {exc}; the Ascend IR was converted from the functional graph"
        return
    graph.pre_ge_passes = [record.to_json() for record in records]


def _convert(graph: GraphTrace, functional: fx.GraphModule, converter: Any, convert_refused: bool = False) -> None:
    start = time.perf_counter()
    if converter is None:
        result, reuse = _convert_builtin(functional, f"graph_{graph.index}", convert_refused)
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


def _verify(trace: Trace, recorder: Any, verify: bool | None, say: Progress, only: Any = None) -> CheckResult | None:
    """The IR check of the graphs (of those in ``only``, the graphs one call ran) on the
    runs ``recorder`` recorded."""
    if "ascend_ir" not in trace.stages:
        return None
    if verify is False:
        return CheckResult(ok=True, skipped="--no-verify was given")
    graphs = [g for g in trace.graphs if g.ir is not None and (only is None or g.index in only)]
    big = [g.index for g in graphs if len(g.modules["functional"].graph.nodes) > VERIFY_NODE_LIMIT]
    if verify is None and big:
        note = f"Ascend IR of graph(s) {big} not run on CPU (over {VERIFY_NODE_LIMIT} nodes); pass --verify to run it."
        if note not in trace.notes:
            trace.notes.append(note)
        graphs = [g for g in graphs if g.index not in big]
    if not graphs:
        reason = f"graph(s) {big} over {VERIFY_NODE_LIMIT} FX nodes; pass --verify to run them" if big else "no graph has an Ascend IR"
        return CheckResult(ok=True, skipped=reason)
    say("running the Ascend IR on CPU against the compiled run")
    return verify_ir(graphs, recorder)


def _status(trace: Trace) -> str:
    """``ok`` only when every graph converted, eager matched the compiled run and the
    Ascend IR on CPU matched it (where it could run)."""
    if any(g.error for g in trace.graphs) or any(g.ir_summary and g.ir_summary["partial"] for g in trace.graphs):
        return "partial"
    if any(check is not None and check.failed for check in (trace.check, trace.ir_check)):
        return "partial"
    if any(call.failed for call in trace.calls):
        return "partial"
    return "ok"
