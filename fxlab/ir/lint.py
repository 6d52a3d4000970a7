"""Is an :class:`IrGraph` well formed? The check run after every GE-graph pass.

A pass that rewrites the graph in place can leave it broken in ways no later step
reports clearly: an input naming an op it removed, two ops of one name, two ``Data``
ops reading the same graph input. :func:`lint_ir` finds those at once and names the
first fault, as ``fx.Graph.lint`` does for FX graphs.
"""

from __future__ import annotations

from collections import Counter

from fxlab.ir.model import IrGraph, IrOp


class IrLintError(ValueError):
    """The graph is not well formed; the message names the op and what is wrong."""


def lint_ir(graph: IrGraph) -> None:
    """Raise :class:`IrLintError` unless: op names are unique; every input
    ``"producer:index"`` names an op of the graph and one of its outputs (``-1``: a
    control edge; ``""``: an optional input left out); ``Data`` indexes are distinct; there is exactly one ``NetOutput``."""
    by_name = _unique_names(graph)
    for op in graph.ops:
        for position, ref in enumerate(op.inputs):
            if ref:
                _check_input(graph, op, position, ref, by_name)
    _check_data_indexes(graph)
    net_outputs = [op.name for op in graph.ops if op.type == "NetOutput"]
    if len(net_outputs) != 1:
        raise IrLintError(f"graph {graph.name}: {len(net_outputs)} NetOutput ops ({', '.join(net_outputs) or 'none'}), not one")


def _unique_names(graph: IrGraph) -> dict[str, IrOp]:
    repeated = sorted(name for name, count in Counter(op.name for op in graph.ops).items() if count > 1)
    if repeated:
        raise IrLintError(f"graph {graph.name}: op name(s) {', '.join(repeated)} used more than once")
    return graph.op_by_name()


def _check_input(graph: IrGraph, op: IrOp, position: int, ref: str, by_name: dict[str, IrOp]) -> None:
    producer, _, port = ref.rpartition(":")
    where = f"graph {graph.name}: input {position} of {op.name} ({op.type}) is {ref!r}"
    try:
        index = int(port)
    except ValueError:
        raise IrLintError(f'{where}, not "producer:index"') from None
    source = by_name.get(producer)
    if source is None:
        raise IrLintError(f"{where}, but the graph has no op {producer!r}")
    if index != -1 and not 0 <= index < len(source.output_desc):
        raise IrLintError(f"{where}, but {producer} has {len(source.output_desc)} output(s)")


def _check_data_indexes(graph: IrGraph) -> None:
    seen: dict[object, str] = {}
    for op in graph.ops:
        if op.type != "Data":
            continue
        index = op.attr_value("index")
        if not isinstance(index, int):
            raise IrLintError(f"graph {graph.name}: Data op {op.name} has index {index!r}, not an int")
        if index in seen:
            raise IrLintError(f"graph {graph.name}: Data ops {seen[index]} and {op.name} both have index {index}")
        seen[index] = op.name
