"""grid_sampler, linspace and searchsorted converters."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from tests.passes.converters.lowering import lower, types
from tests.passes.converters.node_lowering import lower_call

aten = torch.ops.aten


def test_grid_sample_names_its_modes_and_casts_back():
    graph = lower(lambda x, g: F.grid_sample(x, g, mode="nearest", padding_mode="border", align_corners=True), torch.randn(1, 2, 4, 4), torch.rand(1, 3, 3, 2) * 2 - 1)
    assert types(graph) == ["GridSampler2D", "Cast"]
    op = graph.ops_of_type("GridSampler2D")[0]
    assert (op.attr_value("interpolation_mode"), op.attr_value("padding_mode"), op.attr_value("align_corners")) == ("nearest", "border", True)


def test_linspace_makes_the_count_const_first():
    graph = lower_call(aten.linspace.default, 0.0, 1.0, 5)
    assert [op.attr_value("_readable_value") for op in graph.ops_of_type("Const")] == ["5", "0.0", "1.0"]


def test_searchsorted_right_and_int32():
    graph = lower_call(aten.searchsorted.Tensor, torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.0]), out_int32=True, right=True)
    op = graph.ops_of_type("SearchSorted")[0]
    assert op.attr_value("right") is True and op.attr_value("dtype").name == "DT_INT32"
