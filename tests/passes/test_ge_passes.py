"""TorchAir's GE-graph passes after conversion, run in its order by the pass manager with
the IR lint after each; what they did stays on the conversion's result."""
from __future__ import annotations

import pytest
import torch

from tests.functional_graphs import functional_graph
from fxlab.ir.lint import lint_ir
from fxlab.ir.model import IrGraph
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.ge_passes import GE_GRAPH_PASSES, after_conversion, ge_graph_passes
from fxlab.passes.infra import NamedPass, PassFailedError, PassManager, PassResult
from fxlab.passes.output_reuse import REUSE_INPUT_OPTION, REUSE_OUTPUT_OPTION


def write_back_skipping_middle(x: torch.Tensor, shape_only: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    y.mul_(2)
    return x + 1


def _converted():  # type: ignore[no-untyped-def]
    inputs = (torch.randn(3), torch.randn(4), torch.randn(3))
    return convert_to_ascend_ir(functional_graph(write_back_skipping_middle, *inputs), name="g")


def test_the_passes_run_in_torchairs_order_and_each_is_recorded() -> None:
    result = _converted()
    (assign,) = result.graph.ops_of_type("Assign")
    dropped = result.graph.inputs[1]
    records = ge_graph_passes(result.graph)
    assert [r.name for r in records] == [
        "optimize_sym_pack",
        "remove_dead_data",
        "ref_op_copy",
        "output_reuse",
        "explicit_order_for_side_effect_nodes",
    ]
    assert records[0].changed is False  # no size list fed from the host
    assert (records[1].removed, records[1].added) == ([dropped], [])
    assert records[2].changed is False
    assert (records[3].removed, records[3].changed_nodes) == ([assign.name], ["NetOutput"])
    assert records[4].changed is False  # no op with side effects
    lint_ir(result.graph)


def test_the_result_keeps_the_records_notes_and_ge_options() -> None:
    result = after_conversion(_converted())
    assert [r.name for r in result.ge_passes] == [p.name for p in GE_GRAPH_PASSES]
    assert result.assigns_to_outputs == ["Assign"]
    assert result.ge_options == {REUSE_OUTPUT_OPTION: "0", REUSE_INPUT_OPTION: "1,1"}
    (note,) = result.notes
    assert note.startswith("graph input(s) nothing reads dropped from the GE graph")
    assert result.fx_graph is not None and not result.partial


def test_a_pass_that_breaks_the_graph_is_named_by_the_lint() -> None:
    def drop_first_data(graph: IrGraph) -> PassResult[IrGraph]:
        graph.ops = graph.ops[1:]  # its readers now name an op that is gone
        return PassResult(graph, True)

    graph = _converted().graph
    with pytest.raises(PassFailedError, match="the pass drop_first_data failed: IrLintError: .* but the graph has no op"):
        PassManager([*GE_GRAPH_PASSES, NamedPass("drop_first_data", drop_first_data)], lint=lint_ir).run(graph)
