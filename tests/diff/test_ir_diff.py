"""Op-by-op IR diff on hand-made graphs: alignment by FX node and order, and each kind of
difference (type, attr, wiring, output dtype/shape, order, lone ops)."""
from __future__ import annotations

import copy
import json

import torch

from fxlab.ir.model import Attr, AttrKind, DataType, IrGraph, IrOp, TensorDesc
from fxlab.diff.ir_diff import DEFAULT_IGNORED_ATTRS, MISSING, diff_ir


def op(name, type_, inputs=(), fx=None, attrs=None, out=((DataType.DT_FLOAT, (2, 2)),)):
    return IrOp(
        name,
        type_,
        list(inputs),
        {k: v if isinstance(v, Attr) else _attr(v) for k, v in (attrs or {}).items()},
        output_desc=[TensorDesc("y", d, s) for d, s in out],
        fx_node=fx,
    )


def _attr(value):
    from fxlab.ir.model import attr_of

    return attr_of(value)


def graph(*ops, outputs=("Add:0",)):
    return IrGraph("g", list(ops), inputs=[o.name for o in ops if o.type == "Data"], outputs=list(outputs))


def base():
    return graph(
        op("x", "Data", fx="x", attrs={"index": 0}),
        op("Const", "Const", fx="add", attrs={"value": torch.tensor(1.0)}, out=((DataType.DT_FLOAT, ()),)),
        op("Add", "Add", ["x:0", "Const:0"], fx="add"),
        op("NetOutput", "NetOutput", ["Add:0"], fx="output", out=()),
    )


def test_identical_graphs():
    diff = diff_ir(base(), base())
    assert diff.identical
    assert diff.summary() == {"same": 4, "changed": 0, "only_left": 0, "only_right": 0, "moved": 0, "nodes_differing": 0}
    assert [n.fx_node for n in diff.nodes] == ["x", "add", "output"]


def test_op_names_do_not_matter_wiring_is_mapped_through_the_pairing():
    right = base()
    right.ops[1].name = "Const_7"
    right.ops[2].inputs = ["x:0", "Const_7:0"]
    assert diff_ir(base(), right).identical


def test_wiring_difference_is_reported_by_slot():
    right = base()
    right.ops[2].inputs = ["Const:0", "x:0"]
    (add,) = [o for o in diff_ir(base(), right).ops if o.left == "Add"]
    assert add.kind == "changed"
    assert add.inputs == [(0, "x:0", "Const:0"), (1, "Const:0", "x:0")]


def test_type_and_attr_differences():
    left, right = base(), base()
    left.ops[2].set_attrs({"alpha": Attr(AttrKind.FLOAT, 2.0)})
    right.ops[2].type = "AxpyV2"
    (add,) = [o for o in diff_ir(left, right).ops if o.left == "Add"]
    assert (add.kind, add.left_type, add.right_type) == ("changed", "Add", "AxpyV2")
    assert add.attrs == {"alpha": (2.0, MISSING)}


def test_a_node_both_sides_refuse_is_alike_whatever_each_placeholder_records():
    left, right = base(), base()
    left.ops[2] = op("Add", "FxlabUnsupported", ["x:0", "Const:0"], fx="add", attrs={"_fxlab_message": "no converter"})
    right.ops[2] = op("Add_1", "FxlabUnsupported", ["x:0", "Const:0", ""], fx="add", attrs={"_inference_rule": "{}"})
    assert diff_ir(left, right).identical
    right.ops[2].type = "Add"  # refused on one side only: a difference
    assert not diff_ir(left, right).identical


def test_float_attrs_compare_at_float32_precision_and_bookkeeping_attrs_are_ignored():
    left, right = base(), base()
    left.ops[2].set_attrs({"epsilon": Attr(AttrKind.FLOAT, 1e-5)})
    right.ops[2].set_attrs({"epsilon": Attr(AttrKind.FLOAT, 9.999999747378752e-06)})  # 1e-5 read back from GE's float
    right.ops[2].set_attrs({"_input_name_key": Attr(AttrKind.LIST_STR, ("x1", "x2"))})
    assert "_input_name_key" in DEFAULT_IGNORED_ATTRS
    assert diff_ir(left, right).identical
    assert not diff_ir(left, right, ignore_attrs=()).identical


def test_const_values_are_compared():
    right = base()
    right.ops[1].set_attrs({"value": _attr(torch.tensor(2.0))})
    (const,) = [o for o in diff_ir(base(), right).ops if o.left == "Const"]
    assert const.attrs["value"][0]["values"] == [1.0] and const.attrs["value"][1]["values"] == [2.0]


def test_lone_ops_inside_a_node_and_lone_nodes():
    right = base()
    cast = op("Cast", "Cast", ["Add:0"], fx="add", attrs={"dst_type": 0})
    right.ops.insert(3, cast)
    right.ops.insert(1, op("Transpose", "Transpose", ["x:0"], fx="t"))
    diff = diff_ir(base(), right)
    by_node = {n.fx_node: n for n in diff.nodes}
    assert by_node["add"].left_types == ["Const", "Add"] and by_node["add"].right_types == ["Const", "Add", "Cast"]
    assert [(o.kind, o.right) for o in by_node["add"].ops] == [("same", "Const"), ("same", "Add"), ("only_right", "Cast")]
    assert [n.fx_node for n in diff.nodes] == ["x", "t", "add", "output"]
    assert [o.kind for o in by_node["t"].ops] == ["only_right"]
    assert diff.summary()["only_right"] == 2


def test_output_dtype_differs_but_an_unset_shape_is_not_a_difference():
    right = base()
    right.ops[2].output_desc = (TensorDesc("y", DataType.DT_FLOAT, ()),)  # TorchAir leaves shapes to GE
    assert diff_ir(base(), right).identical
    right.ops[2].output_desc = (TensorDesc("y", DataType.DT_FLOAT16, (2, 2)),)
    (add,) = [o for o in diff_ir(base(), right).ops if o.left == "Add"]
    assert add.outputs == [(0, {"dtype": "DT_FLOAT", "shape": [2, 2]}, {"dtype": "DT_FLOAT16", "shape": [2, 2]})]


def test_moved_ops_and_nodes():
    left = graph(
        op("x", "Data", fx="x"),
        op("A", "Abs", ["x:0"], fx="a"),
        op("B", "Neg", ["x:0"], fx="b"),
        op("NetOutput", "NetOutput", ["A:0", "B:0"], fx="output", out=()),
        outputs=("A:0", "B:0"),
    )
    right = copy.deepcopy(left)
    right.ops[1], right.ops[2] = right.ops[2], right.ops[1]
    diff = diff_ir(left, right)
    assert not diff.identical
    moved = [(n.fx_node, n.moved) for n in diff.nodes]
    assert sum(flag for _, flag in moved) == 1
    assert sum(o.moved for o in diff.ops) == 1


def test_graph_outputs_are_compared_after_mapping():
    right = base()
    right.ops.append(op("Extra", "Identity", ["x:0"], fx="output"))
    right.outputs = ["Add:0", "x:0"]
    diff = diff_ir(base(), right)
    assert diff.outputs == (["Add:0"], ["Add:0", "x:0"])
    assert not diff.identical


def test_json_form_round_trips_through_json():
    right = base()
    right.ops[2].type = "AxpyV2"
    data = json.loads(json.dumps(diff_ir(base(), right, left_label="ascend_ir", right_label="ascend_ir:torchair").to_json()))
    assert data["left"] == "ascend_ir" and data["right"] == "ascend_ir:torchair"
    assert data["summary"]["changed"] == 1
    node = next(n for n in data["nodes"] if n["fx_node"] == "add")
    assert node["ops"][1]["left_type"] == "Add" and node["ops"][1]["right_type"] == "AxpyV2"
