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
graph is joined with the TorchAir graph whose ops its original names (with the same types)
cover best: the share of both sides' names that they have in common, so a small graph after
a graph break, whose generic names (``MatMulV2``, ``Add``: TorchAir numbers ops afresh in
each graph) a larger graph also holds, is joined with its own graph. TorchAir's graph
names, ``graph_<n>``, break ties; a join that still ties, or that finds few of the GE
graph's names, is said in a note, since its source lines may be another graph's."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fxlab.ir.model import IrGraph
from fxlab.npu_dumps.dump_model import TORCHAIR_PY, DumpGraph, DumpOp, DumpSet, TorchAirGraph, TorchAirOp
from fxlab.npu_dumps.names import SUPER_KERNEL_TYPE, fx_node_of_tensor_name

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
    outjoined = 0  # GE graphs TorchAir's own dump holds more of than any graph of the trace
    for position, graph in enumerate(dumps.graphs):
        ranked = _ranked(graph, torchair)
        if not ranked:
            _join_graph(graph, None)
            continue
        chosen[position] = best = ranked[0][-1]
        by_trace = [score for score, *_, candidate in ranked if candidate.format == TRACE_FORMAT]
        outjoined += best.format != TRACE_FORMAT and (not by_trace or by_trace[0] < ranked[0][0])
        _join_graph(graph, best)
        dumps.notes.extend(_doubts(graph, ranked))
    if torchair:
        unjoined = sorted({g.name for i, g in enumerate(dumps.graphs) if i not in chosen and g.ops})
        if unjoined:
            dumps.notes.append(f"no TorchAir graph holds the ops of: {', '.join(unjoined)} (their op names are not TorchAir's)")
    traces = sorted({g.file.rsplit("/", 1)[0] for g in torchair if g.format == TRACE_FORMAT})
    if traces and 2 * outjoined > len(chosen):  # most GE graphs hold more of TorchAir's own dump than of the trace
        dumps.notes.append(
            f"TorchAir's own graph dump among the files holds more of {outjoined} of the {len(chosen)} GE graphs' op names than "
            f"{', '.join(traces)} does: the trace may be of another model or compile (the dump's FX nodes and lines are shown)"
        )
    return chosen


# A join in which fewer of the GE graph's ops than this share find an original name is
# doubted (a different model's graph shares the generic ones, Add and Mul: half of a small graph's).
FEW_NAMES_FOUND = 0.75
# Ops TorchAir's py dump writes with no name of their own: constants inline, the output as a return.
PY_DUMP_UNNAMED = ("Const", "NetOutput")


def _ranked(graph: DumpGraph, torchair: Sequence[TorchAirGraph]) -> list[tuple[float, bool, int, TorchAirGraph]]:
    """The candidates holding any of ``graph``'s names, best first: by the share of both
    sides' names in common, then by name (``graph_<n>``), then in the order given."""
    names = _original_names(graph)
    scored = []
    for i, candidate in enumerate(torchair):
        found = _found(names, candidate)
        if found:
            scored.append((found / (len(names) + len(candidate.ops) - found), candidate.name == graph.name, -i, candidate))
    return sorted(scored, key=lambda s: s[:3], reverse=True)


def _original_names(graph: DumpGraph) -> dict[str, str | None]:
    """``graph``'s original names and outputs' origin names, with the type GE wrote for
    each (None: no type)."""
    names: dict[str, str | None] = {}
    for op in graph.ops:
        types = op.original_types if len(op.original_types) == len(op.originals) else [None] * len(op.originals)
        for name, op_type in zip(op.originals, types):
            names.setdefault(name, op_type)
        for output in op.outputs:
            if output.origin_name:
                names.setdefault(output.origin_name, None)
    return names


def _found(names: dict[str, str | None], candidate: TorchAirGraph) -> int:
    """How many of ``names`` ``candidate`` holds (with the same type, where one was written)."""
    found = 0
    for name, op_type in names.items():
        known = candidate.ops.get(name)
        if known is not None and (op_type is None or op_type == known.type):
            found += 1
    return found


def _doubts(graph: DumpGraph, ranked: list[tuple[float, bool, int, TorchAirGraph]]) -> list[str]:
    """What a user should know about the join of ``graph`` with the first of ``ranked``:
    another graph fits as well, or most of its names were not found."""
    label = f"{graph.name or graph.file} ({graph.phase})" if graph.phase else graph.name or graph.file
    chosen = ranked[0][-1]
    unnamed = PY_DUMP_UNNAMED if chosen.format == TORCHAIR_PY else ()
    # A SuperKernel op is GE's own: its members are named in its sub-graph's dump, when there is one.
    named = [
        op
        for op in graph.ops
        if op.type not in unnamed and op.type != SUPER_KERNEL_TYPE and (op.originals or any(o.origin_name for o in op.outputs))
    ]
    unfound = [
        op for op in named if not any(n in chosen.ops for n in [*op.originals, *(o.origin_name for o in op.outputs if o.origin_name)])
    ]
    found = len(named) - len(unfound)
    # TorchAir names an op by its type (``Relu_2``), so two models share their generic
    # names (``arg0_1``, ``Add_1``); an op of a type TorchAir's graph has none of is of another.
    types = {op.type for op in chosen.ops.values()}
    foreign = sorted({t for op in unfound if not op.inserted for t in (op.original_types or [op.type]) if t not in types})
    notes = []
    if len(ranked) > 1 and ranked[1][:2] == ranked[0][:2]:
        notes.append(
            f"{label}: {ranked[1][-1].file} fits it as well as {chosen.file}, which was taken (the first given); "
            "its FX nodes and source lines may be the other graph's: give the trace graph folder it was compiled from"
        )
    few = bool(named) and found < FEW_NAMES_FOUND * len(named)
    if few or foreign:
        said = [f"only {found} of its {len(named)} ops have an original op name in {chosen.file}"] if few else []
        said += [f"it holds ops of types {chosen.file} has none of ({', '.join(foreign)})"] if foreign else []
        notes.append(
            f"{label}: {'; '.join(said)}: the trace or TorchAir dump may be of another model or compile, and its FX nodes and "
            "source lines may be wrong"
        )
    return notes


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
