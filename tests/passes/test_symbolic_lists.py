"""Size lists with symbolic sizes, packed before the converter runs as TorchAir's walk
packs them."""
from __future__ import annotations

import torch

from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.pre_ge import pre_ge_graph
from fxlab.passes.symbolic_lists import ALL_SYM_ATTR
from tests.passes.dynamic_functional import dynamic_functional


def ones_of(x: torch.Tensor) -> torch.Tensor:
    return torch.ones(x.shape[0], 4) + x[:, :1]


def test_a_symbolic_size_list_is_one_int64_pack_made_before_the_converters_ops():
    gm = dynamic_functional(ones_of, torch.randn(6, 3))
    graph = convert_to_ascend_ir(pre_ge_graph(gm).gm, "g").graph
    ones = [op for op in graph.ops if op.fx_node == "ones"]
    assert [op.type for op in ones] == ["Const", "Pack", "Const", "Fill"]  # the 4, the Pack, the fill value, Fill
    pack = ones[1]
    assert pack.inputs[0].startswith("Gather") and pack.attr_value("_force_unknown_shape") is True
    assert pack.output_desc[0].dtype.name == "DT_INT64" and ALL_SYM_ATTR not in pack.attrs  # the size is read from x
    assert ones[3].inputs[0] == f"{pack.name}:0"


def test_a_list_of_sizes_fed_from_the_host_is_marked_all_sym():
    from tests.passes.test_optimize_sym_pack import zeros_of_sizes

    gm = dynamic_functional(zeros_of_sizes, torch.randn(3, 2), 5, 7)
    graph = convert_to_ascend_ir(pre_ge_graph(gm).gm, "g").graph
    (pack,) = graph.ops_of_type("Pack")
    assert pack.attr_value(ALL_SYM_ATTR) is True and all(ref.split(":")[0] in graph.inputs for ref in pack.inputs)
    assert all(graph.op_by_name()[ref.split(":")[0]].attr_value("_host_tensor") is True for ref in pack.inputs)
