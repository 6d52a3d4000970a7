"""Size lists with symbolic sizes, packed before the converter runs as TorchAir's walk
packs them; and TorchAir's optimize_sym_pack, which feeds a list of host sizes as one input."""
from __future__ import annotations

import torch

from fxlab.ir.execute import execute
from fxlab.ir.graph_inputs import SYM_PACK_ATTR
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.ge_passes import ge_graph_passes
from fxlab.passes.optimize_sym_pack import optimize_sym_pack
from fxlab.passes.pre_ge import pre_ge_graph
from fxlab.passes.symbolic_lists import ALL_SYM_ATTR
from tests.passes.dynamic_functional import dynamic_functional, graph_inputs


def ones_of(x: torch.Tensor) -> torch.Tensor:
    return torch.ones(x.shape[0], 4) + x[:, :1]


def zeros_of_sizes(x: torch.Tensor, rows: int, cols: int) -> torch.Tensor:
    return torch.zeros(rows, cols) + x.sum()


def test_a_symbolic_size_list_is_one_int64_pack_made_before_the_converters_ops():
    gm = dynamic_functional(ones_of, torch.randn(6, 3))
    graph = convert_to_ascend_ir(pre_ge_graph(gm)[0], "g").graph
    ones = [op for op in graph.ops if op.fx_node == "ones"]
    assert [op.type for op in ones] == ["Const", "Pack", "Const", "Fill"]  # the 4, the Pack, the fill value, Fill
    pack = ones[1]
    assert pack.inputs[0].startswith("Gather") and pack.attr_value("_force_unknown_shape") is True
    assert pack.output_desc[0].dtype.name == "DT_INT64" and ALL_SYM_ATTR not in pack.attrs  # the size is read from x
    assert ones[3].inputs[0] == f"{pack.name}:0"


def test_sizes_fed_from_the_host_become_one_input_and_the_graph_still_runs():
    x = torch.randn(3, 2)
    gm = dynamic_functional(zeros_of_sizes, x, 5, 7)
    graph = convert_to_ascend_ir(pre_ge_graph(gm)[0], "g").graph
    (pack,) = graph.ops_of_type("Pack")
    assert pack.attr_value(ALL_SYM_ATTR) is True and all(ref.split(":")[0] in graph.inputs for ref in pack.inputs)
    result = optimize_sym_pack(graph)
    assert result.changed and not graph.ops_of_type("Pack")
    data = graph.ops[-1]
    assert (data.type, data.name, data.fx_node) == ("Data", "Data", None)  # appended after the walk, as TorchAir's
    assert data.output_desc[0].shape == (2,) and len(data.attr_value(SYM_PACK_ATTR)) == 2
    assert graph.ops_of_type("Fill")[0].inputs[0] == "Data:0"


def test_after_the_ge_passes_only_the_packed_input_is_left_and_matches_eager():
    x = torch.randn(3, 2)
    gm = dynamic_functional(zeros_of_sizes, x, 5, 7)
    graph = convert_to_ascend_ir(pre_ge_graph(gm)[0], "g").graph
    reuse = ge_graph_passes(graph)
    assert any("fed from the host as one input" in note for note in reuse.notes)
    inputs = graph_inputs(gm, x, 5, 7)
    (out,) = execute(graph, inputs)
    torch.testing.assert_close(out, zeros_of_sizes(x, 5, 7))
    assert [op.attr_value(SYM_PACK_ATTR) is not None for op in graph.ops if op.type == "Data"].count(True) == 1
