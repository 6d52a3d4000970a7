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
