"""TorchAir's passes over the GE graph after conversion (its
``optimize_graph_without_runtime``), those fxlab reproduces, in TorchAir's order:
dead ``Data`` removal (:mod:`fxlab.passes.remove_dead_data`), the copies around an
in-place op on a graph input (:mod:`fxlab.passes.ref_op_copy`), ``Assign`` into a
graph input mapped to a graph output (:mod:`fxlab.passes.output_reuse`), then the order
of side-effect ops (:mod:`fxlab.passes.side_effect_order`)."""

from __future__ import annotations

from fxlab.ir.model import IrGraph
from fxlab.passes.output_reuse import OutputReuse, map_assign_to_graph_output
from fxlab.passes.ref_op_copy import remove_ref_op_copies
from fxlab.passes.remove_dead_data import remove_dead_data
from fxlab.passes.side_effect_order import order_side_effect_ops


def ge_graph_passes(graph: IrGraph) -> OutputReuse:
    """Apply the passes to ``graph`` in place; what the output reuse did, with the notes
    of both passes."""
    dead = remove_dead_data(graph)
    remove_ref_op_copies(graph)
    reuse = map_assign_to_graph_output(graph)
    order_side_effect_ops(graph, reuse.output_ref_input)
    reuse.notes[:0] = dead.notes
    return reuse
