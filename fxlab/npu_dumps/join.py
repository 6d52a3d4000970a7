"""GE's ops back to TorchAir's ops, FX nodes and source lines.

TorchAir names GE ops ``<Type>[_<n>]``, not after FX nodes; what ties a GE op to the user's
code is, in order:

1. ``_fx_tensor_name`` on its output descs (``"<fx node>-<target>.OUTPUT.<i>"``), where it
   survived GE's passes;
2. its original op names (``_datadump_original_op_names``: every op a fused op replaced,
   transitively; an op GE did not touch is its own original) and its outputs'
   ``_datadump_origin_name``, looked up in TorchAir's graph: a saved fxlab trace's
   ``ascend_ir`` (each op with its FX node and source line) or TorchAir's own graph dump.

A SuperKernel op's originals are its members' (read from its sub-graph dump). Each GE
graph is joined with the TorchAir graph that holds most of its original names with the
same types (TorchAir's graph names, ``graph_<n>``, break ties)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fxlab.ir.model import IrGraph
from fxlab.npu_dumps.dump_model import DumpGraph, DumpOp, DumpSet, TorchAirGraph, TorchAirOp
from fxlab.npu_dumps.names import fx_node_of_tensor_name

TRACE_FORMAT = "fxlab_trace"


def torchair_graph_from_ir(ir: IrGraph, label: str) -> TorchAirGraph:
    """A saved trace's ``ascend_ir`` graph as TorchAir's side of the join."""
    graph = TorchAirGraph(label, TRACE_FORMAT, ir.name)
    for op in ir.ops:
        graph.ops[op.name] = TorchAirOp(op.name, op.type, [op.fx_node] if op.fx_node else [], [op.source] if op.source else [])
    return graph


def merge_torchair_graphs(graphs: Sequence[TorchAirGraph]) -> list[TorchAirGraph]:
    """TorchAir's dumps of one graph (its txt, pbtxt and py of the same name) as one
    graph: the FX nodes of one, the source lines of another."""
    merged: dict[str, TorchAirGraph] = {}
    order: list[TorchAirGraph] = []
    for graph in graphs:
        key = graph.name or graph.file
        into = merged.get(key)
        if into is None:
            into = merged[key] = TorchAirGraph(graph.file, graph.format, graph.name)
            order.append(into)
        else:
            into.file = f"{into.file}, {graph.file}"
        for op in graph.ops.values():
            known = into.ops.setdefault(op.name, TorchAirOp(op.name, op.type))
            _extend(known.fx_nodes, op.fx_nodes)
            _extend(known.source, op.source)
    return order


def _extend(into: list[str], values: Iterable[str]) -> None:
    for value in values:
        if value not in into:
            into.append(value)


def join(dumps: DumpSet, torchair: Sequence[TorchAirGraph]) -> dict[int, TorchAirGraph]:
    """Fill every GE op's ``torchair_ops``, ``fx_nodes`` and ``source``; returns which
    TorchAir graph each GE graph (by position in ``dumps.graphs``) was joined with, and
    notes the graphs joined with none."""
    chosen: dict[int, TorchAirGraph] = {}
    for position, graph in enumerate(dumps.graphs):
        best = best_torchair_graph(graph, torchair)
        if best is None:
            _join_graph(graph, None)
            continue
        chosen[position] = best
        _join_graph(graph, best)
    if torchair:
        unjoined = sorted({g.name for i, g in enumerate(dumps.graphs) if i not in chosen and g.ops})
        if unjoined:
            dumps.notes.append(f"no TorchAir graph holds the ops of: {', '.join(unjoined)} (their op names are not TorchAir's)")
    return chosen


def best_torchair_graph(graph: DumpGraph, torchair: Sequence[TorchAirGraph]) -> TorchAirGraph | None:
    scored = [(_score(graph, candidate), candidate.name == graph.name, -i, candidate) for i, candidate in enumerate(torchair)]
    scored = [s for s in scored if s[0] > 0]
    if not scored:
        return None
    return max(scored, key=lambda s: s[:3])[3]


def _score(graph: DumpGraph, candidate: TorchAirGraph) -> int:
    """How many of ``graph``'s original names (with the same type, where GE wrote it) and
    outputs' origin names ``candidate`` holds."""
    score = 0
    for op in graph.ops:
        types = op.original_types if len(op.original_types) == len(op.originals) else [None] * len(op.originals)
        for name, op_type in zip(op.originals, types):
            known = candidate.ops.get(name)
            if known is not None and (op_type is None or op_type == known.type):
                score += 1
        score += sum(1 for output in op.outputs if output.origin_name in candidate.ops)
    return score


def _join_graph(graph: DumpGraph, torchair: TorchAirGraph | None) -> None:
    for op in graph.ops:
        _join_op(op, torchair)


def _join_op(op: DumpOp, torchair: TorchAirGraph | None) -> None:
    for output in op.outputs:
        node = fx_node_of_tensor_name(output.fx_tensor_name or "")
        if node is not None and node not in op.fx_nodes:
            op.fx_nodes.append(node)
    if torchair is None:
        return
    names = list(op.originals) + [o.origin_name for o in op.outputs if o.origin_name]
    for name in names:
        known = torchair.ops.get(name)
        if known is None:
            continue
        _extend(op.torchair_ops, [name])
        _extend(op.fx_nodes, known.fx_nodes)
        _extend(op.source, known.source)
