"""The Ascend IR data model: attr kinds, tensor constants, dtype numbering, JSON, and
ops' shared read-only attrs and descs."""
from __future__ import annotations

import copy
import json
import pickle

import pytest
import torch
from hypothesis import given, settings

from fxlab.ir.model import (
    DTYPE_FROM_TORCHAIR_NUMBER,
    TORCHAIR_DTYPE_NUMBER,
    Attr,
    AttrKind,
    DataType,
    FrozenAttrs,
    IrGraph,
    IrOp,
    TensorDesc,
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


def _op() -> IrOp:
    return IrOp("Add", "Add", ["x:0", "y:0"], {"alpha": Attr(AttrKind.INT, 1)}, [TensorDesc("x1"), TensorDesc("x2")], [TensorDesc("y")])


def test_op_attrs_refuse_changes_in_place() -> None:
    attrs = _op().attrs
    changes = [
        lambda: attrs.__setitem__("beta", Attr(AttrKind.INT, 2)), lambda: attrs.__delitem__("alpha"),
        lambda: attrs.pop("alpha"), attrs.popitem, attrs.clear, lambda: attrs.update(beta=1),
        lambda: attrs.setdefault("beta", 1),
    ]
    for change in changes:
        with pytest.raises(TypeError, match="set_attrs"):
            change()
    assert attrs == {"alpha": Attr(AttrKind.INT, 1)}


def test_op_descs_are_tuples_whatever_the_constructor_gets() -> None:
    op = _op()
    assert op.input_desc == (TensorDesc("x1"), TensorDesc("x2")) and op.output_desc == (TensorDesc("y"),)
    assert type(op.attrs) is FrozenAttrs and IrOp("n", "NoOp").attrs == {}


def test_changing_an_op_replaces_what_it_shares() -> None:
    first, second = _op(), _op()
    second.attrs, second.output_desc = first.attrs, first.output_desc  # shared, as ops made from one dict share them
    second.set_attrs({"beta": Attr(AttrKind.BOOL, True), "alpha": Attr(AttrKind.INT, 3)})
    second.set_output_desc(0, TensorDesc("y", DataType.DT_FLOAT16, (2,)))
    assert first.attrs == {"alpha": Attr(AttrKind.INT, 1)} and first.output_desc == (TensorDesc("y"),)
    assert list(second.attrs.items()) == [("alpha", Attr(AttrKind.INT, 3)), ("beta", Attr(AttrKind.BOOL, True))]
    assert second.output_desc == (TensorDesc("y", DataType.DT_FLOAT16, (2,)),)
    second.drop_attrs("alpha", "absent")
    assert second.attrs == {"beta": Attr(AttrKind.BOOL, True)} and type(second.attrs) is FrozenAttrs
    unchanged = second.attrs
    second.drop_attrs("absent")
    assert second.attrs is unchanged


def test_ops_copy_and_pickle_with_their_attrs() -> None:
    op = _op()
    for twin in (copy.deepcopy(op), copy.copy(op), pickle.loads(pickle.dumps(op))):
        assert twin == op and type(twin.attrs) is FrozenAttrs


def test_ops_by_fx_node_lists_each_node_s_ops_in_graph_order() -> None:
    graph = IrGraph("g", [IrOp("x", "Data", fx_node="x"), IrOp("Const", "Const", fx_node="add"), IrOp("Add", "Add", fx_node="add"),
                          IrOp("Cast", "Cast"), IrOp("NetOutput", "NetOutput", fx_node="output")])
    assert graph.ops_by_fx_node() == {"x": ["x"], "add": ["Const", "Add"], "output": ["NetOutput"]}
