"""Record one Dynamo graph: the stages of the trace's mode made from its functional
graph (``pre_ge`` and the GE graph, or ``aclgraph`` and its capture code), every pass
list with what each pass did, the conversion to Ascend IR, and each stage as data.

Returns the :class:`~fxlab.capture.trace.GraphTrace` (plain data) and the
:class:`LiveGraph` the checks run (its graph modules and the conversion's per-node
results), which is not saved.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

import torch.fx as fx

from fxlab.capture.checks.torchair_reference import TorchAirAclGraph, adopt_torchair_graph
from fxlab.capture.backend import CapturedGraph
from fxlab.capture.records import KIND_COPY_EPILOGUE, cache_sources, classify, mutated_arguments, stage_from_module
from fxlab.capture.request import TraceRequest
from fxlab.capture.trace import ConversionRecord, GraphTrace
from fxlab.ir.dump_py import graph_to_py
from fxlab.ir.host_outputs import host_output_notes
from fxlab.ir.model import IrGraph
from fxlab.passes.aclgraph.pipeline import aclgraph_graph, namespace_of
from fxlab.passes.annotate_scopes import annotate_scopes
from fxlab.passes.conversion_result import ConversionResult
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.ge_passes import after_conversion
from fxlab.passes.infra import PassFailedError
from fxlab.passes.optimize_fx import FxStageResult
from fxlab.passes.pattern_fusion import UserPassRun
from fxlab.passes.pre_ge import pre_ge_graph
from fxlab.passes.torchair_options import TorchAirOptions
from fxlab.reports.aclgraph_streams import graph_streams
from fxlab.reports.conversion_summary import summarize_conversion
from fxlab.stage_names import ACLGRAPH, ASCEND_IR, DYNAMO, FUNCTIONAL, FX_STAGES, GE_GRAPH_PASSES, PRE_GE

Progress = Callable[[str], None]

# Analyses run on every stage's graph before it is recorded: each takes a GraphModule and
# stores its results in node.meta["fxlab.*"].
STAGE_ANALYSES: tuple[Callable[[fx.GraphModule], Any], ...] = (annotate_scopes,)


@runtime_checkable
class TorchAirCode(Protocol):
    """TorchAir's own code for a capture (through the bridge): its GE conversion, given the
    options the trace follows (the user's passes and patterns), and its aclgraph passes."""

    def convert(self, gm: fx.GraphModule, name: str, options: TorchAirOptions) -> ConversionResult: ...

    def aclgraph(self, gm: fx.GraphModule, index: int, options: TorchAirOptions) -> TorchAirAclGraph: ...


@dataclass
class LiveGraph:
    """What the checks of one graph need while the model is captured: its graph modules
    by stage, the conversion's per-node results, the graphs around each user pass."""

    index: int
    modules: dict[str, fx.GraphModule] = field(default_factory=dict)
    conversion: ConversionResult | None = None
    user_pass_runs: list[UserPassRun] = field(default_factory=list)
    # The same graph's Ascend IR converted again with the view optimisation off (made only
    # when the check needs it); None when the IR was made without it.
    ir_without_view_optimisation: Callable[[], IrGraph] | None = None
    converted_by_torchair: bool = False  # the IR is TorchAir's own conversion (--converter torchair)

    def converted_module(self) -> fx.GraphModule | None:
        """The FX graph the Ascend IR was converted from: TorchAir's own after its passes
        (``--converter torchair``), else the ``pre_ge`` stage, else ``functional``."""
        converted = self.conversion.fx_graph if self.conversion is not None else None
        return converted or self.modules.get(PRE_GE) or self.modules.get(FUNCTIONAL)


def record_graph(
    captured: CapturedGraph, request: TraceRequest, options: TorchAirOptions, torchair: TorchAirCode | None, say: Progress
) -> tuple[GraphTrace, LiveGraph]:
    """The trace of one captured graph, and what its checks need (see the module docstring)."""
    graph = GraphTrace(captured.index, captured.break_reason, captured.break_location, captured.error)
    live = LiveGraph(captured.index, dict(captured.modules))
    stages, modules = request.stages, live.modules
    if FUNCTIONAL in modules:
        cache_sources(modules[FUNCTIONAL])  # the converter reads them (pre_ge copies them)
        if ACLGRAPH in stages:
            say(f"running TorchAir's aclgraph passes on graph {captured.index}")
            _aclgraph(graph, live, options, torchair)
        elif PRE_GE in stages or ASCEND_IR in stages:
            _pre_ge(graph, live, options)
    for module in modules.values():
        for analysis in STAGE_ANALYSES:
            analysis(module)
    if ASCEND_IR in stages and FUNCTIONAL in modules:
        say(f"converting graph {captured.index} to Ascend IR")
        _convert(graph, live, options, torchair, request.convert_refused)
    ge_ops = graph.ir.ops_by_fx_node() if graph.ir is not None else None
    for name in FX_STAGES:
        if name in stages and name in modules:
            graph.stages[name] = stage_from_module(name, modules[name], ge_ops if name in (FUNCTIONAL, PRE_GE) else None)
    graph.mutated_inputs = mutated_inputs(modules)
    return graph, live


def _keep_stage(graph: GraphTrace, live: LiveGraph, stage: str, pass_list: str, result: FxStageResult) -> None:
    live.modules[stage] = result.gm
    live.user_pass_runs = result.user_runs
    graph.passes[pass_list] = result.records
    graph.patterns = result.pattern_matches


def _pre_ge(graph: GraphTrace, live: LiveGraph, options: TorchAirOptions) -> None:
    """The ``pre_ge`` stage: the functional graph after TorchAir's passes before conversion."""
    try:
        result = pre_ge_graph(live.modules[FUNCTIONAL], options)
    except PassFailedError as exc:  # the other stages stay useful; the IR is then the functional graph's
        graph.error = f"pre_ge stage: {exc}; the Ascend IR was converted from the functional graph"
        return
    _keep_stage(graph, live, PRE_GE, PRE_GE, result)


def _aclgraph(graph: GraphTrace, live: LiveGraph, options: TorchAirOptions, torchair: TorchAirCode | None) -> None:
    """The ``aclgraph`` stage: fxlab's passes mirroring TorchAir's, each recorded; with
    TorchAir's own code, TorchAir's graph, compared with fxlab's."""
    try:
        result = aclgraph_graph(live.modules[FUNCTIONAL], options, graph.index)
    except PassFailedError as exc:
        graph.error = f"aclgraph stage: {exc}"
        return
    _keep_stage(graph, live, ACLGRAPH, ACLGRAPH, result)
    graph.capture_code = result.capture_code
    if torchair is not None:
        adopt_torchair_graph(graph, live.modules, torchair.aclgraph(live.modules[FUNCTIONAL], graph.index, options))
    _streams(graph, live.modules, options)


def _streams(graph: GraphTrace, modules: dict[str, fx.GraphModule], options: TorchAirOptions) -> None:
    """Streams, events and stream core limits of the graph, and concurrent core demands."""
    found = graph_streams(graph.index, modules[FUNCTIONAL], modules.get(ACLGRAPH), options.soc, namespace_of(options))
    if len(found.streams) > 1 or found.calls or found.events or found.notes:
        graph.streams = found.to_json()


def _convert(graph: GraphTrace, live: LiveGraph, options: TorchAirOptions, torchair: TorchAirCode | None, convert_refused: bool) -> None:
    """The Ascend IR: fxlab's converters on ``pre_ge`` followed by fxlab's copies of
    TorchAir's GE-graph passes; or TorchAir's own conversion (its own FX and GE-graph
    passes, with the user's passes and patterns) from the functional graph."""
    name = f"graph_{graph.index}"
    if torchair is None:
        source = live.modules.get(PRE_GE, live.modules[FUNCTIONAL])
        result = after_conversion(convert_to_ascend_ir(source, name, convert_refused=convert_refused))
    else:
        source = live.modules[FUNCTIONAL]
        result = torchair.convert(source, name, options)
    converted = result.fx_graph or source
    summary = summarize_conversion(converted, result)
    live.conversion, graph.ir, live.converted_by_torchair = result, result.graph, torchair is not None
    if options.enable_view_optimize and (torchair is not None or PRE_GE in live.modules):
        without = replace(options, enable_view_optimize=False)
        live.ir_without_view_optimisation = functools.cache(lambda: _reconvert(live, name, without, torchair, convert_refused))
    graph.ir_py = graph_to_py(result.graph, converted)
    if result.ge_passes:
        graph.passes[GE_GRAPH_PASSES] = result.ge_passes
    graph.conversion = ConversionRecord(
        ops=len(result.graph.ops),
        partial=result.partial,
        seconds=round(result.seconds, 4),
        warnings=list(result.warnings),
        notes=list(result.notes),
        assigns_to_outputs=result.assigns_to_outputs,
        ge_options=dict(result.ge_options),
        host_outputs=host_output_notes(result.graph),  # outputs TorchAir makes on the host, not in GE
        not_converted=summary.not_converted,
        auto_converted=summary.auto_converted,
        summary=summary.rows,
    )


def _reconvert(live: LiveGraph, name: str, options: TorchAirOptions, torchair: TorchAirCode | None, convert_refused: bool) -> IrGraph:
    """The graph's Ascend IR made again from its functional graph with other options, by
    the same converter (nothing recorded)."""
    functional = live.modules[FUNCTIONAL]
    if torchair is not None:
        return torchair.convert(functional, name, options).graph
    source = pre_ge_graph(functional, options).gm
    return after_conversion(convert_to_ascend_ir(source, name, convert_refused=convert_refused)).graph


def mutated_inputs(modules: dict[str, fx.GraphModule]) -> list[str]:
    """Graph inputs the functional graph writes back (its trailing ``copy_`` epilogue),
    named as Dynamo named them (``L_self_buffers_cache_`` etc.)."""
    functional = modules.get(FUNCTIONAL)
    if functional is None:
        return []
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
