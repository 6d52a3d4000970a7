"""TorchAir's passes over the GE graph after conversion (its
``optimize_graph_without_runtime``), those fxlab reproduces, in TorchAir's order:
host-fed size lists as one input (:mod:`fxlab.passes.optimize_sym_pack`), dead ``Data``
removal (:mod:`fxlab.passes.remove_dead_data`), the copies around an in-place op on a
graph input (:mod:`fxlab.passes.ref_op_copy`), ``Assign`` into a graph input mapped to a
graph output (:mod:`fxlab.passes.output_reuse`), then the order of side-effect ops
(:mod:`fxlab.passes.side_effect_order`).

They run through a :class:`~fxlab.passes.infra.PassManager` that checks the graph is
well formed after each that changed it (:func:`fxlab.ir.lint.lint_ir`) and records what each did.
"""

from __future__ import annotations

from fxlab.ir.lint import lint_ir
from fxlab.ir.model import IrGraph
from fxlab.passes.conversion_result import ConversionResult
from fxlab.passes.infra import NamedPass, PassManager, PassRecord
from fxlab.passes.optimize_sym_pack import optimize_sym_pack
from fxlab.passes.output_reuse import ge_options, map_assign_to_graph_output
from fxlab.passes.ref_op_copy import remove_ref_op_copies
from fxlab.passes.remove_dead_data import remove_dead_data
from fxlab.passes.side_effect_order import order_side_effect_ops

GE_GRAPH_PASSES: tuple[NamedPass[IrGraph], ...] = (
    NamedPass("optimize_sym_pack", optimize_sym_pack),
    NamedPass("remove_dead_data", remove_dead_data),
    NamedPass("ref_op_copy", remove_ref_op_copies),
    NamedPass("output_reuse", map_assign_to_graph_output),
    NamedPass("explicit_order_for_side_effect_nodes", order_side_effect_ops),
)


def ge_graph_passes(graph: IrGraph) -> list[PassRecord]:
    """Apply the passes to ``graph`` in place; what each did, in order."""
    _, records = PassManager(GE_GRAPH_PASSES, lint=lint_ir).run(graph)
    return records


def after_conversion(result: ConversionResult) -> ConversionResult:
    """Run the passes on a conversion's graph, as TorchAir does before handing it to GE,
    and keep on ``result`` what they did: their records, their notes and the GE options
    the graph now needs."""
    result.ge_passes = ge_graph_passes(result.graph)
    result.notes.extend(note for record in result.ge_passes for note in record.notes)
    result.ge_options.update(ge_options(result.graph))
    return result
