"""TorchAir's optimize_sym_pack: a list of host-fed sizes becomes one host input."""
from __future__ import annotations

import torch

from fxlab.ir.execute import execute
from fxlab.ir.graph_inputs import SYM_PACK_ATTR
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.ge_passes import ge_graph_passes
from fxlab.passes.optimize_sym_pack import optimize_sym_pack
from fxlab.passes.pre_ge import pre_ge_graph
from tests.passes.dynamic_functional import dynamic_functional, graph_inputs


def zeros_of_sizes(x: torch.Tensor, rows: int, cols: int) -> torch.Tensor:
    return torch.zeros(rows, cols) + x.sum()


def test_sizes_fed_from_the_host_become_one_input_and_the_graph_still_runs():
    x = torch.randn(3, 2)
    gm = dynamic_functional(zeros_of_sizes, x, 5, 7)
    graph = convert_to_ascend_ir(pre_ge_graph(gm).gm, "g").graph
    (pack,) = graph.ops_of_type("Pack")
    result = optimize_sym_pack(graph)
    assert result.changed and not graph.ops_of_type("Pack")
    data = graph.ops[-1]
    assert (data.type, data.name, data.fx_node) == ("Data", "Data", None)  # appended after the walk, as TorchAir's
    assert data.output_desc[0].shape == (2,) and len(data.attr_value(SYM_PACK_ATTR)) == 2
    assert graph.ops_of_type("Fill")[0].inputs[0] == "Data:0"


def test_after_the_ge_passes_only_the_packed_input_is_left_and_matches_eager():
    x = torch.randn(3, 2)
    gm = dynamic_functional(zeros_of_sizes, x, 5, 7)
    graph = convert_to_ascend_ir(pre_ge_graph(gm).gm, "g").graph
    records = ge_graph_passes(graph)
    assert records[0].name == "optimize_sym_pack" and records[0].removed == ["Pack"] and records[0].added == ["Data"]
    assert any("fed from the host as one input" in note for note in records[0].notes)
    inputs = graph_inputs(gm, x, 5, 7)
    (out,) = execute(graph, inputs)
    torch.testing.assert_close(out, zeros_of_sizes(x, 5, 7))
    assert [op.attr_value(SYM_PACK_ATTR) is not None for op in graph.ops if op.type == "Data"].count(True) == 1


def test_a_graph_without_such_a_pack_is_left_alone():
    from tests.functional_graphs import functional_graph

    graph = convert_to_ascend_ir(functional_graph(lambda x: torch.zeros(2, 3) + x, torch.randn(2, 3)), "g").graph
    before = [op.name for op in graph.ops]
    assert optimize_sym_pack(graph).changed is False and [op.name for op in graph.ops] == before
