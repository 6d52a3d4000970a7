"""The graph builder's scope attrs: what ops created inside scopes carry, and that ops
sharing attrs keep sharing them once scoped."""
from __future__ import annotations

from fxlab.ir.builder import GraphBuilder, scoped_attrs
from fxlab.ir.model import Attr, AttrKind, IrOp


def _ops(builder: GraphBuilder, count: int) -> list[IrOp]:
    shared = {"axis": Attr(AttrKind.INT, 0)}
    ops = [IrOp(f"Op_{i}", "Op", attrs=shared) for i in range(count)]
    first = ops[0].attrs
    for op in ops:
        op.attrs = first  # as ops made from one attrs dict share it
    return ops


def test_scoped_attrs_outer_first_inner_overrides_and_empty_super_kernel_clears() -> None:
    stack = [
        {"_super_kernel_scope": "sk", "_super_kernel_options": "o", "_op_aicore_num": "8"},
        {"_op_aicore_num": "4", "_op_exec_never_timeout": "True"},
        {"_super_kernel_scope": ""},
    ]
    attrs = scoped_attrs({"axis": Attr(AttrKind.INT, 0)}, stack)
    assert attrs == {
        "axis": Attr(AttrKind.INT, 0),
        "_op_aicore_num": Attr(AttrKind.STR, "4"),
        "_op_exec_never_timeout": Attr(AttrKind.BOOL, True),
    }


def test_ops_sharing_attrs_share_their_scoped_attrs_and_scope_changes_are_seen() -> None:
    builder = GraphBuilder("g")
    builder.push_scope(["_op_aicore_num"], ["8"])
    ops = _ops(builder, 3)
    original = ops[0].attrs
    builder.apply_scopes(ops)
    assert all(op.attrs is ops[0].attrs for op in ops)
    assert ops[0].attrs == {"axis": Attr(AttrKind.INT, 0), "_op_aicore_num": Attr(AttrKind.STR, "8")}
    assert original == {"axis": Attr(AttrKind.INT, 0)}  # the shared attrs themselves are untouched
    builder.push_scope(["_op_aicore_num"], ["2"])
    inner = _ops(builder, 1)
    builder.apply_scopes(inner)
    assert inner[0].attrs["_op_aicore_num"] == Attr(AttrKind.STR, "2")
    builder.pop_scope()
    outer = _ops(builder, 1)
    builder.apply_scopes(outer)
    assert outer[0].attrs["_op_aicore_num"] == Attr(AttrKind.STR, "8")


def test_generated_names_are_torchair_s_across_chunks_and_skip_taken_ones() -> None:
    builder = GraphBuilder("g")
    builder.unique_name("Data", "Add_300")  # an explicit name that looks generated
    names = [builder.unique_name("Add") for _ in range(600)]
    assert names == ["Add", *[f"Add_{n}" for n in range(1, 601) if n != 300]]
    assert builder.unique_name("Mul") == "Mul"


def _int_data(builder: GraphBuilder) -> IrOp:
    from fxlab.ir.model import DataType, TensorDesc

    data = IrOp("x", "Data", output_desc=[TensorDesc("y", DataType.DT_INT32, (4,))])
    builder.graph.ops.append(data)
    return data


def test_outputs_nobody_set_and_the_inputs_copied_from_them_get_torchairs_unset_dtype() -> None:
    from fxlab.ir import ge
    from fxlab.ir.builder import Tensor, building
    from fxlab.ir.model import DataType

    builder = GraphBuilder("g")
    data = Tensor(_int_data(builder), 0)
    first_new = len(builder.graph.ops)
    with building(builder), builder.converting("node", None):
        shape = ge.op1("Shape", {"x": data}, {"dtype": 3}, dtypes=DataType.DT_INT32)
        index = ge.const(1, DataType.DT_INT64)
        gathered = ge.op1("Gather", {"x": shape, "indices": index}, dtypes=DataType.DT_INT32)
        pinned = builder.set_dtype(ge.op1("Cast", {"x": gathered}, {"dst_type": 9}), DataType.DT_INT64)
        assert gathered.dtype is DataType.DT_INT32  # the converter sees what fxlab inferred
    builder.unset_helper_dtypes(first_new)
    by_name = {op.name: op for op in builder.graph.ops}
    assert by_name["Shape"].input_desc[0].dtype is DataType.DT_INT32  # read from a Data
    assert by_name["Shape"].output_desc[0].dtype is DataType.DT_FLOAT
    assert by_name["Const"].output_desc[0].dtype is DataType.DT_INT64  # a Const says its type
    assert [d.dtype for d in by_name["Gather"].input_desc] == [DataType.DT_FLOAT, DataType.DT_INT64]
    assert by_name["Gather"].output_desc[0].dtype is DataType.DT_FLOAT
    assert by_name["Cast"].input_desc[0].dtype is DataType.DT_FLOAT
    assert pinned.dtype is DataType.DT_INT64  # set by hand: kept
    assert data.dtype is DataType.DT_INT32  # made before the node: not the node's to unset


def test_outputs_nobody_gave_a_shape_say_unknown_rank_not_scalar() -> None:
    from fxlab.ir import ge
    from fxlab.ir.builder import Tensor, building
    from fxlab.ir.model import UNKNOWN_RANK, DataType

    builder = GraphBuilder("g")
    data = Tensor(_int_data(builder), 0)
    first_new = len(builder.graph.ops)
    with building(builder), builder.converting("node", None):
        shapeless = ge.op1("Neg", {"x": data})  # no shape given: GE infers it
        scalar = ge.op1("ReduceSum", {"x": shapeless, "axes": ge.const([0], DataType.DT_INT64)}, shapes=[()])
        shaped = ge.op1("Relu", {"x": shapeless}, shapes=[(4,)])
        assert shapeless.shape == ()  # the converter sees what it always saw
    builder.unset_helper_dtypes(first_new)
    by_name = {op.name: op for op in builder.graph.ops}
    assert by_name["Neg"].output_desc[0].shape == UNKNOWN_RANK
    assert by_name["ReduceSum"].input_desc[0].shape == UNKNOWN_RANK  # copied from Neg's output
    assert by_name["Relu"].input_desc[0].shape == UNKNOWN_RANK
    assert scalar.shape == () and shaped.shape == (4,)  # given shapes are kept, scalars stay scalars
    assert by_name["Const"].output_desc[0].shape == (1,)
    assert by_name["Neg"].input_desc[0].shape == (4,)  # read from a Data
