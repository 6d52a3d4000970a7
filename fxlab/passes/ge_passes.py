"""TorchAir's passes over the GE graph after conversion (its
``optimize_graph_without_runtime``), those fxlab reproduces, in TorchAir's order:
host-fed size lists as one input (:mod:`fxlab.passes.optimize_sym_pack`), dead ``Data``
removal (:mod:`fxlab.passes.remove_dead_data`), the copies around an
in-place op on a graph input (:mod:`fxlab.passes.ref_op_copy`), then ``Assign`` into a
graph input mapped to a graph output (:mod:`fxlab.passes.output_reuse`)."""

from __future__ import annotations

from fxlab.ir.model import IrGraph
from fxlab.passes.optimize_sym_pack import optimize_sym_pack
from fxlab.passes.output_reuse import OutputReuse, map_assign_to_graph_output
from fxlab.passes.ref_op_copy import remove_ref_op_copies
from fxlab.passes.remove_dead_data import remove_dead_data


def ge_graph_passes(graph: IrGraph) -> OutputReuse:
    """Apply the passes to ``graph`` in place; what the output reuse did, with the notes
    of both passes."""
    packed = optimize_sym_pack(graph)
    dead = remove_dead_data(graph)
    remove_ref_op_copies(graph)
    reuse = map_assign_to_graph_output(graph)
    reuse.notes[:0] = packed.notes + dead.notes
    return reuse
