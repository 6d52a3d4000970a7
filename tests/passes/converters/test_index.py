"""Indexing converters: slice/select/gather/scatter op sequences as TorchAir emits them,
and index_put left unsupported because TorchAir has no converter for it."""
from __future__ import annotations

import torch

from tests.functional_graphs import functional_graph
from fxlab.passes.conversion_result import UNSUPPORTED_OP_TYPE, Status
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from tests.passes.converters.test_shape import body_types, const_values, convert


def test_slice_is_strided_slice_v2_with_int32_max_open_end() -> None:
    graph = convert(lambda x: (x[:, 1:], x[1:3]), torch.randn(4, 6))
    assert body_types(graph) == ["Const"] * 4 + ["StridedSliceV2"] + ["Const"] * 4 + ["StridedSliceV2"]
    assert const_values(graph)[:4] == ["1", "1", "2147483647", "1"]
    op = graph.ops_of_type("StridedSliceV2")[0]
    assert [d.name for d in op.input_desc] == ["x", "begin", "end", "axes", "strides"]
    assert op.attr_value("shrink_axis_mask") == 0 and op.attr_value("begin_mask") == 0


def test_full_slice_is_skipped() -> None:
    graph = convert(lambda x: x[:, :] + 1, torch.randn(4, 6))
    assert "StridedSliceV2" not in graph.types


def test_select_is_gather_v2_with_negative_index_support() -> None:
    graph = convert(lambda x: x[:, -1], torch.randn(3, 4))
    assert body_types(graph) == ["Const", "Const", "GatherV2"]
    assert const_values(graph) == ["-1", "[1]"]
    op = graph.ops_of_type("GatherV2")[0]
    assert op.attr_value("negative_index_support") is True and op.attr_value("batch_dims") == 0


def test_embedding_and_index_select_are_gather_v2() -> None:
    weight, ids = torch.randn(10, 4), torch.tensor([[1, 3], [0, 0]])
    graph = convert(lambda w, i: (torch.nn.functional.embedding(i, w), w.index_select(1, i[0])), weight, ids)
    assert body_types(graph).count("GatherV2") == 3  # the select of i[0] is a GatherV2 as well


def test_advanced_index_is_index_by_tensor_with_mask() -> None:
    x, rows = torch.randn(3, 4, 5), torch.tensor([2, 0], dtype=torch.int32)
    graph = convert(lambda x, r: x[:, r], x, rows)
    op = graph.ops_of_type("IndexByTensor")[0]
    assert op.attr_value("indices_mask") == (0, 1)
    assert body_types(graph) == ["Cast", "IndexByTensor"]  # int32 indices promoted to int64


def test_gather_scatter() -> None:
    x, idx = torch.randn(3, 4), torch.tensor([[0, 3], [1, 1], [2, 0]])
    graph = convert(lambda x, i: (x.gather(1, i), torch.zeros(3, 4).scatter(1, i, 2.0)), x, idx)
    types = body_types(graph)
    assert "GatherElements" in types
    assert types[-5:] == ["Shape", "Const", "Cast", "Fill", "ScatterElements"]
    assert graph.ops_of_type("ScatterElements")[0].attr_value("reduction") == "none"


def test_index_put_is_unsupported_as_in_torchair() -> None:
    def write(cache: torch.Tensor, pos: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
        cache[:, pos] = value
        return cache + 0

    gm = functional_graph(write, torch.zeros(2, 8), torch.tensor([1, 3]), torch.randn(2, 2))
    result = convert_to_ascend_ir(gm, name="kv")
    refused = [(n.target, n.message.split(":")[0]) for n in result.nodes if n.status is Status.REFUSED]
    assert refused == [("aten.index_put.default", "TorchAir refuses aten.index_put.default")]
    assert len(result.graph.ops_of_type(UNSUPPORTED_OP_TYPE)) == 1
