"""Pairing nodes of two FX stages: op families and the value keys both sides share."""
from __future__ import annotations

import pytest

from fxlab.capture.trace import NodeRecord, Provenance, StageTrace, TensorMeta
from fxlab.diff.fx_align import StageSide, align_nodes, op_family


@pytest.mark.parametrize(
    "target, family",
    [
        ("aten.add_.Tensor", "add"),
        ("aten.add.Tensor", "add"),
        ("aten.copy_.default", "copy"),
        ("aten.__and__.Tensor", "__and__"),
        ("npu.my_inplace.default", "npu.my_inplace"),
        ("npu.my_inplace", "npu.my_inplace"),
        ("mul_", "mul"),
        ("linear", "linear"),
        ("_VariableFunctionsClass.relu", "relu"),
        ("aten._unsafe_view.default", "view"),
        ("higher_order.auto_functionalized_v2", "higher_order.auto_functionalized_v2"),
    ],
)
def test_op_family(target: str, family: str) -> None:
    assert op_family(target) == family


def node(name: str, target: str, args: str = "", *, kind: str = "", op: str = "call_function", outputs: int = 1) -> NodeRecord:
    return NodeRecord(
        name=name, op=op, target=target, args=args, kind=kind,
        outputs=[TensorMeta(shape=[2], dtype="float32")] * outputs, provenance=Provenance(file="m.py", line=1),
    )


def test_getitems_of_a_wrapper_read_as_its_result_and_the_base_it_rewrote() -> None:
    stage = StageTrace("functional", "", [
        node("x", "x", op="placeholder"),
        node("h", "aten.mul.Tensor", "x, 2"),
        node("w", "higher_order.auto_functionalized_v2", "npu.my_inplace.default, y=x, _x_base_index=0, _all_bases=[h]", kind="auto_functionalized", outputs=2),
        node("getitem", "getitem", "w, 0"),
        node("getitem_1", "getitem", "w, 1"),
        node("out", "aten.add.Tensor", "getitem, getitem_1"),
    ])
    side = StageSide(stage, "R")
    assert [n.name for n in side.ops] == ["h", "w", "out"]  # getitems travel with the wrapper
    assert [n.name for n in side.attached["w"]] == ["getitem", "getitem_1"]
    assert (side.key_of("getitem"), side.key_of("getitem_1")) == ("R:w", "R:h")
    # pairing h or w changes getitem_1's key: its readers are looked up again
    assert "getitem_1" in side.derived("h") and side.derived("w") == {"w", "getitem", "getitem_1"}
    assert side.derived("x") == {"x"}
    assert side.canonical("getitem_1, slice(None, 2, None), y=h") == "R:h, slice(None, 2, None), y=R:h"


def test_a_value_written_back_into_an_input_is_that_input() -> None:
    stage = StageTrace("functional", "", [
        node("x", "x", op="placeholder"),
        node("add", "aten.add.Tensor", "x, 1"),
        node("copy_", "aten.copy_.default", "x, add", kind="copy_epilogue"),
        node("self_copy", "aten.copy_.default", "x, x", kind="copy_epilogue"),  # no cycle
    ])
    side = StageSide(stage, "R")
    side.keys["x"] = "input0"
    assert side.key_of("add") == "input0" and side.key_of("x") == "input0"


def test_an_inplace_op_on_an_input_returns_that_inputs_new_value() -> None:
    """``add_(x, 1)`` in the aten stage is what the functional stage writes back into x:
    a reader of either reads the input's new value."""
    add_ = node("add_", "aten.add_.Tensor", "x, 1")
    add_.mutates = ["self"]
    on_intermediate = node("mul_", "aten.mul_.Tensor", "add_, 2")
    on_intermediate.mutates = ["self"]
    side = StageSide(StageTrace("aten", "", [node("x", "x", op="placeholder"), add_, on_intermediate]), "L")
    side.keys["x"] = "input0"
    assert side.key_of("add_") == "input0" and side.key_of("mul_") == "L:mul_"  # only an op on a graph input


def test_same_computations_pair_across_reordered_copies() -> None:
    def stage(*nodes: NodeRecord) -> StageTrace:
        return StageTrace("s", "", [node("a", "a", op="placeholder"), node("b", "b", op="placeholder"), *nodes])

    left = StageSide(stage(node("n1", "aten.neg.default", "a"), node("n2", "aten.neg.default", "b")), "L")
    right = StageSide(stage(node("m1", "aten.neg.default", "b"), node("m2", "aten.neg.default", "a")), "R")
    for side in (left, right):
        side.keys.update({"a": "input0", "b": "input1"})
    assert [(l.name, r.name) for l, r in align_nodes(left, right)] == [("n2", "m1"), ("n1", "m2")]
