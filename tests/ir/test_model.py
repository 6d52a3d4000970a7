"""The Ascend IR data model: attr kinds, tensor constants, dtype numbering, JSON."""
from __future__ import annotations

import json

import pytest
import torch
from hypothesis import given, settings

from fxlab.ir.model import (
    DTYPE_FROM_TORCHAIR_NUMBER,
    TORCHAIR_DTYPE_NUMBER,
    Attr,
    AttrKind,
    DataType,
    IrGraph,
    TensorValue,
    attr_of,
    ge_dtype,
    torch_dtype,
)
from tests.ir.ir_fixtures import every_kind_graph, ir_graphs


@pytest.mark.parametrize("value, kind", [
    (True, AttrKind.BOOL), (3, AttrKind.INT), (0.5, AttrKind.FLOAT), ("s", AttrKind.STR),
    (DataType.DT_BF16, AttrKind.DTYPE), ([1, 2], AttrKind.LIST_INT), ([1, 2.5], AttrKind.LIST_FLOAT),
    ([True], AttrKind.LIST_BOOL), (["a"], AttrKind.LIST_STR), ([DataType.DT_FLOAT], AttrKind.LIST_DTYPE),
    ([[1], [2, 3]], AttrKind.LIST_LIST_INT), ([], AttrKind.LIST_INT), (torch.ones(2), AttrKind.TENSOR),
])
def test_attr_kind_inferred_from_python_value(value: object, kind: AttrKind) -> None:
    assert attr_of(value).kind is kind


def test_attr_of_rejects_values_ge_cannot_hold() -> None:
    with pytest.raises(TypeError, match="mixed list"):
        attr_of([1, "a"])
    with pytest.raises(TypeError, match="cannot store dict"):
        attr_of({"a": 1})


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int8, torch.bool])
def test_tensor_value_keeps_bytes_shape_and_type(dtype: torch.dtype) -> None:
    tensor = torch.tensor([[1, 0, 3], [4, 5, 0]]).to(dtype)
    value = TensorValue.from_torch(tensor)
    assert value.desc.shape == (2, 3) and value.desc.dtype is ge_dtype(dtype)
    assert len(value.data) == tensor.numel() * tensor.element_size()
    assert torch.equal(value.to_torch(), tensor)


def test_dtype_numberings() -> None:
    assert (DataType.DT_FLOAT.value, TORCHAIR_DTYPE_NUMBER[DataType.DT_FLOAT]) == (1, 0)
    assert (DataType.DT_INT64.value, TORCHAIR_DTYPE_NUMBER[DataType.DT_INT64]) == (8, 9)
    assert (DataType.DT_BF16.value, TORCHAIR_DTYPE_NUMBER[DataType.DT_BF16]) == (27, 27)
    assert set(TORCHAIR_DTYPE_NUMBER) == set(DataType)
    assert all(DTYPE_FROM_TORCHAIR_NUMBER[n] is d for d, n in TORCHAIR_DTYPE_NUMBER.items())
    assert torch_dtype(ge_dtype(torch.bfloat16)) is torch.bfloat16


def test_plain_json_values() -> None:
    assert Attr(AttrKind.DTYPE, DataType.DT_FLOAT16).to_json() == "DT_FLOAT16"
    assert Attr(AttrKind.LIST_LIST_INT, ((1,), ())).to_json() == [[1], []]
    assert Attr(AttrKind.TENSOR, TensorValue.from_torch(torch.tensor([2.5]))).to_json() == {"dtype": "DT_FLOAT", "shape": [1], "values": [2.5]}


def test_json_round_trip_of_every_attr_kind() -> None:
    graph = every_kind_graph()
    assert IrGraph.from_json(json.loads(json.dumps(graph.to_json()))) == graph


@given(ir_graphs())
@settings(max_examples=40, deadline=None)
def test_json_round_trip_of_generated_graphs(graph: IrGraph) -> None:
    assert IrGraph.from_json(json.loads(json.dumps(graph.to_json()))) == graph
