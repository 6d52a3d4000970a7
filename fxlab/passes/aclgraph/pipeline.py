"""The ``aclgraph`` stage: what TorchAir's ``reduce-overhead`` mode (or the standalone
``npugraph_ex`` backend) captures into an ACL graph, pass by pass, in its order.

On a copy of the functional graph:

1. ``_optimize_fx`` with the mode's settings (:mod:`fxlab.passes.optimize_fx`: no
   ``optimize_sym_input``), then TorchAir's check that scope markers pair up;
2. ``optimize_graph_without_runtime``: ``remove_cat_ops`` (when on),
   ``apply_event_closure_with_multi_stream``, ``apply_event_record``,
   ``eliminate_dead_code``, ``reinplace_inplaceable_ops`` (when on),
   ``reinplace_input_mutated_ops`` and ``decompose_auto_functionalized`` (when on),
   ``eliminate_self_copy`` (npugraph_ex), ``replace_dynamic_workspace_ops``,
   ``replace_core_limit_nodes``, ``replace_deterministic_nodes`` (npugraph_ex),
   ``resolve_default_stream_markers``;
3. the Python capture code TorchAir generates for the final graph
   (:mod:`~fxlab.passes.aclgraph.capture_code`).

Every pass is run by :class:`~fxlab.passes.infra.PassManager` and recorded; users' passes
are marked as theirs. TorchAir's ``replace_stream_event_pass``, which runs on the Dynamo
graph before aot_autograd, rewrites ``torch.npu.Stream`` / ``Event`` calls; a model traced
on CPU makes none, and it is listed as such.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import torch.fx as fx

from fxlab.passes.aclgraph.capture_code import capture_code, read_inputs
from fxlab.passes.aclgraph.capture_info import CaptureInfo
from fxlab.passes.aclgraph.decompose_auto_functionalized import decompose_auto_functionalized
from fxlab.passes.aclgraph.eliminate_dead_code import eliminate_dead_code
from fxlab.passes.aclgraph.eliminate_self_copy import eliminate_self_copy
from fxlab.passes.aclgraph.event_closure import apply_event_closure
from fxlab.passes.aclgraph.event_record import apply_event_record
from fxlab.passes.aclgraph.reinplace_inplaceable_ops import reinplace_inplaceable_ops
from fxlab.passes.aclgraph.reinplace_input_mutated_ops import reinplace_input_mutated_ops
from fxlab.passes.aclgraph.remove_cat_ops import remove_cat_ops
from fxlab.passes.aclgraph.replace_core_limit_nodes import replace_core_limit_nodes
from fxlab.passes.aclgraph.replace_deterministic_nodes import replace_deterministic_nodes
from fxlab.passes.aclgraph.replace_dynamic_workspace_ops import replace_dynamic_workspace_ops
from fxlab.passes.aclgraph.resolve_default_stream_markers import resolve_default_stream_markers
from fxlab.passes.aclgraph.scope_pairs import check_scope_pairs
from fxlab.passes.aclgraph.stream_users import multi_inplace_ops
from fxlab.passes.aclgraph.sym_shapes import SymShapeBuilder, symbol_inputs
from fxlab.passes.compiler_mode import compiler_dispatch_state
from fxlab.passes.graph_copy import copy_graph_module
from fxlab.passes.infra import NamedPass, PassManager, PassRecord
from fxlab.passes.optimize_fx import FxStageResult, example_inputs, optimize_fx_passes
from fxlab.passes.torchair_options import NPUGRAPH_EX, TorchAirOptions

STREAM_EVENT_NOTE = (
    "runs on the Dynamo graph before aot_autograd: rewrites torch.npu.Stream / Event calls, which a graph traced on CPU cannot make"
)


def graph_name(index: int) -> str:
    """TorchAir's name of the ``index``-th compiled graph (it counts from 1)."""
    return f"graph_{index + 1}"


def namespace_of(options: TorchAirOptions) -> str:
    return "npugraph_ex" if options.mode == NPUGRAPH_EX else "air"


def without_runtime_passes(
    options: TorchAirOptions, info: CaptureInfo, inputs: list[Any], shapes: list[SymShapeBuilder]
) -> list[NamedPass[fx.GraphModule]]:
    """``optimize_graph_without_runtime``'s passes that ``options`` enable, in order."""
    ns = info.namespace

    def shaped(fn: Any) -> Any:
        return lambda gm: fn(gm, shapes=_builder(gm, shapes))

    passes: list[tuple[str, Any, bool]] = [
        ("remove_cat_ops", shaped(partial(remove_cat_ops, namespace=ns)), options.remove_cat_ops),
        ("apply_event_closure_with_multi_stream", lambda gm: apply_event_closure(gm, info), True),
        ("apply_event_record", partial(apply_event_record, namespace=ns), True),
        ("eliminate_dead_code", eliminate_dead_code, True),
        ("reinplace_inplaceable_ops", lambda gm: reinplace_inplaceable_ops(gm, inputs, ns), options.inplace_pass),
        ("reinplace_input_mutated_ops", partial(reinplace_input_mutated_ops, namespace=ns), options.input_inplace_pass),
        ("decompose_auto_functionalized", decompose_auto_functionalized, options.input_inplace_pass),
        ("eliminate_self_copy", eliminate_self_copy, ns == "npugraph_ex"),
        ("replace_dynamic_workspace_ops", shaped(replace_dynamic_workspace_ops), True),
        ("replace_core_limit_nodes", partial(replace_core_limit_nodes, namespace=ns), True),
        ("replace_deterministic_nodes", partial(replace_deterministic_nodes, namespace=ns), ns == "npugraph_ex"),
        ("resolve_default_stream_markers", partial(resolve_default_stream_markers, namespace=ns), True),
    ]
    return [NamedPass(name, fn) for name, fn, on in passes if on]


def _builder(gm: fx.GraphModule, shapes: list[SymShapeBuilder]) -> SymShapeBuilder:
    """One shape builder per graph, shared by the passes (TorchAir keeps one map per graph)."""
    if not shapes:
        shapes.append(SymShapeBuilder(gm, symbol_inputs(gm)))
    return shapes[0]


def aclgraph_graph(
    functional: fx.GraphModule, options: TorchAirOptions, index: int = 0, snapshots: list[tuple[str, fx.GraphModule]] | None = None
) -> FxStageResult:
    """A copy of ``functional`` through TorchAir's aclgraph passes; the functional graph is
    left as it was. ``snapshots`` gets a copy of the graph after each pass."""
    gm = copy_graph_module(functional)
    info = CaptureInfo(graph_name(index), namespace_of(options))
    inputs = example_inputs(gm)
    plan = optimize_fx_passes(options)
    ns = info.namespace
    passes = [
        *plan.passes,
        NamedPass("valid_graph", lambda g: check_scope_pairs(g, ns)),
        *without_runtime_passes(options, info, inputs, []),
    ]
    info.mutated_user_inputs = mutated_user_inputs(gm)
    with compiler_dispatch_state(inputs):  # as aot_autograd calls TorchAir's compiler
        keep = None if snapshots is None else (lambda name, graph: snapshots.append((name, copy_graph_module(graph))))
        gm, records = PassManager(passes).run(gm, keep)
    read_inputs(gm, info)
    gm.recompile()
    records.insert(0, PassRecord("replace_stream_event_pass", False, notes=[STREAM_EVENT_NOTE]))
    patterns = plan.pattern_fusion.report if plan.pattern_fusion else None
    return FxStageResult(gm, records, plan.user_runs, patterns, capture_code(gm, info, options), info)


def mutated_user_inputs(gm: fx.GraphModule) -> list[str]:
    """TorchAir's ``_find_mutated_user_inputs`` on the graph it receives: the graph inputs
    an in-place op writes (a functional graph writes inputs only with ``copy_``)."""
    written_by = {entry.inplace_op: entry.mutated_args for entry in multi_inplace_ops().values()}
    inputs = {n.target for n in gm.graph.nodes if n.op == "placeholder"}
    names = []
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            continue
        if _is_inplace(node):
            names.append(node.args[0].name)
        elif node.target in written_by:
            names.extend(node.args[i].name for i in written_by[node.target])
    return [name for name in names if name in inputs]


def _is_inplace(node: fx.Node) -> bool:
    if isinstance(node.target, str):
        return node.target.endswith("_")
    packet = getattr(node.target, "overloadpacket", None)
    return packet is not None and getattr(packet, "__name__", "").endswith("_")
