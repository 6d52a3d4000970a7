"""torch_npu's scatter converters: copies for the functional forms, kept writes for the
in-place ones."""
from __future__ import annotations

import torch

from tests.passes.converters.npu_fixtures import convert, npu_ops, op_types  # noqa: F401 - the fixture


def test_functional_forms_write_a_copy(npu_ops):
    result = convert("scatter_update", torch.zeros(2, 2, 8, 4), torch.tensor([1, 2]), torch.randn(2, 2, 1, 4), -2)
    assert op_types(result) == ["TensorMove", "Scatter"]
    scatter = result.graph.ops[-2]
    assert (scatter.attr_value("reduce"), scatter.attr_value("axis")) == ("update", -2)


def test_in_place_forms_are_kept_by_a_control_edge(npu_ops):
    result = convert("npu_scatter_nd_update_", torch.zeros(2, 6, 4), torch.tensor([[[0, 1]], [[1, 3]]]), torch.randn(2, 1, 4))
    assert op_types(result) == ["ScatterNdUpdate"]
    assert "ScatterNdUpdate:-1" in result.graph.ops[-1].inputs


def test_scatter_list_moves_every_tensor(npu_ops):
    caches = [torch.zeros(2, 8, 4) for _ in range(3)]
    result = convert("npu_scatter_list", caches, torch.tensor([1, 2, 3], dtype=torch.int32), torch.randn(3, 2, 1, 4), torch.ones(3, dtype=torch.uint8))
    assert op_types(result) == ["TensorMove", "TensorMove", "TensorMove", "ScatterList"]
    op = result.graph.ops[-2]
    assert [d.name for d in op.input_desc] == ["var0", "var1", "var2", "indice", "updates", "mask"]
