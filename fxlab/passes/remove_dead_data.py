"""Drop the ``Data`` ops nothing reads and renumber the rest, as TorchAir does to its GE
graph right after conversion (``remove_dead_data_and_reorder_data_index``).

A graph input that only lends its shape (or that no op uses) still became a ``Data`` op.
TorchAir removes every ``Data`` whose output no other op takes as a data input (a control
edge from it does not count, and is removed with it), then gives the remaining ones the
indices 0, 1, ... in the order they were created, and feeds GE only their inputs. fxlab
does the same and keeps, as TorchAir keeps its list of input infos, which graph input
each remaining ``Data`` reads (:mod:`fxlab.ir.graph_inputs`), so the graph still runs on
the caller's inputs. Runs before the output reuse pass, as in TorchAir: the reuse option
names the renumbered indices.
"""

from __future__ import annotations

from fxlab.ir.graph_inputs import graph_input_index, record_input_indices
from fxlab.ir.model import IrGraph, attr_of
from fxlab.passes.infra import PassResult


def _note(removed: dict[str, int]) -> str:
    dropped = ", ".join(f"{name} (input {index})" for name, index in removed.items())
    return f"graph input(s) nothing reads dropped from the GE graph, as TorchAir drops them: {dropped}; the other Data ops renumbered"


def _read_data(graph: IrGraph, data_names: set[str]) -> set[str]:
    """The ``Data`` ops some non-``Data`` op takes a data input from."""
    read = set()
    for op in graph.ops:
        if op.type == "Data":
            continue
        for ref in op.inputs:
            producer, _, port = ref.rpartition(":")
            if port != "-1" and producer in data_names:
                read.add(producer)
    return read


def remove_dead_data(graph: IrGraph) -> PassResult[IrGraph]:
    """Apply the pass to ``graph`` in place; see the module docstring. Its result names
    the ``Data`` ops renumbered and the ops that lost a control edge from a removed one."""
    data_ops = [op for op in graph.ops if op.type == "Data"]
    read = _read_data(graph, {op.name for op in data_ops})
    removed: dict[str, int] = {}  # Data op -> the graph input it read
    input_indices: list[int] = []  # the graph input each remaining Data index reads
    renumbered: list[str] = []
    for op in data_ops:
        original = graph_input_index(graph, op.attr_value("index"))
        if op.name not in read:
            removed[op.name] = original
            continue
        new_index = len(input_indices)
        input_indices.append(original)
        if op.attr_value("index") != new_index:
            op.set_attrs({"index": attr_of(new_index)})
            renumbered.append(op.name)
    if not removed:
        return PassResult(graph, bool(renumbered), renumbered)
    dead_controls = {f"{name}:-1" for name in removed}
    graph.ops = [op for op in graph.ops if op.name not in removed]
    cut = [op for op in graph.ops if any(ref in dead_controls for ref in op.inputs)]
    for op in cut:
        op.inputs = [ref for ref in op.inputs if ref not in dead_controls]
    by_name = graph.op_by_name()
    graph.inputs = sorted((n for n in graph.inputs if n not in removed), key=lambda n: by_name[n].attr_value("index"))
    record_input_indices(graph, input_indices)
    return PassResult(graph, True, renumbered + [op.name for op in cut], [_note(removed)])
