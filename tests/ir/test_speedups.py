"""The C loops (fxlab/ir/_speedups.c) give the same bytes and ops as the Python paths,
and hand back input they do not handle."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings

from fxlab.capture.stages import functional_graph
from fxlab.ir import speedups
from fxlab.ir.dumps import write_ir_dumps
from fxlab.ir.model import Attr, AttrKind, IrGraph, IrOp, TensorDesc
from fxlab.ir.op_shapes import INPUTS_END, op_shapes
from fxlab.ir.pbtxt import graph_to_pbtxt
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from tests.ir.ir_fixtures import every_kind_graph, ir_graphs, two_layer_decoder
from tests.ir.test_op_shapes import assert_dumps_equal_references, repeating_graphs

native = speedups.native
needs_c = pytest.mark.skipif(native is None, reason="fxlab.ir._speedups is not built here")


def test_ci_builds_the_c_loops() -> None:
    """CI sets FXLAB_REQUIRE_SPEEDUPS: there, the install must have compiled them."""
    if os.environ.get("FXLAB_REQUIRE_SPEEDUPS"):
        assert native is not None, speedups.describe()
    assert speedups.describe().startswith("C loops" if native is not None else "Python loops")


def _dump_bytes(graph: IrGraph, fx_graph: object, folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in write_ir_dumps(graph, folder, fx_graph=fx_graph)}


def _without_c(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(speedups, "native", None)


@needs_c
def test_decoder_dumps_are_the_same_bytes_either_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    functional, ir = two_layer_decoder()
    with_c = _dump_bytes(ir, functional, tmp_path / "c")
    shapes_c = op_shapes(ir)
    _without_c(monkeypatch)
    assert _dump_bytes(ir, functional, tmp_path / "python") == with_c
    assert op_shapes(ir) == shapes_c


@needs_c
def test_decoder_converts_to_the_same_ops_either_way(monkeypatch: pytest.MonkeyPatch) -> None:
    functional, _ = two_layer_decoder()
    with_c = convert_to_ascend_ir(functional, "graph_0")
    _without_c(monkeypatch)
    without = convert_to_ascend_ir(functional, "graph_0")
    assert with_c.graph.ops == without.graph.ops and with_c.nodes == without.nodes


@needs_c
@given(repeating_graphs())
@settings(max_examples=60, deadline=None)
def test_repeating_graphs_dump_the_same_with_the_c_loops(graph: IrGraph) -> None:
    assert_dumps_equal_references(graph)  # the C loops are on here


@needs_c
@given(ir_graphs())
@settings(max_examples=60, deadline=None)
def test_any_graph_dumps_the_same_with_the_c_loops(graph: IrGraph) -> None:
    assert_dumps_equal_references(graph)


def test_the_python_paths_still_equal_the_references(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_c(monkeypatch)
    assert_dumps_equal_references(two_layer_decoder()[1])
    assert_dumps_equal_references(every_kind_graph())


# -- input the C loops hand back ------------------------------------------------------------
def _op(name: str, inputs: list[str], fx_node: str | None = "add", source: str | None = "m.py:1", like: IrOp | None = None) -> IrOp:
    """An op; with ``like``, one sharing its attrs and desc objects."""
    desc = TensorDesc("x", shape=(2,))
    op = IrOp(name, name.split("_")[0], inputs, {"T": Attr(AttrKind.INT, 1)}, (desc,), (desc,), fx_node, source)
    if like is not None:
        op.attrs, op.input_desc, op.output_desc = like.attrs, like.input_desc, like.output_desc
    return op


PIECES = ("<a>", "<b>", "<c>", "<d>")


@needs_c
def test_text_ops_puts_each_ops_fields_between_its_pieces() -> None:
    ops = [_op("Add_1", ["x:0", "y:0"]), _op("Add_2", [], fx_node=None, source=None)]
    text = native.text_ops(ops, [PIECES, PIECES], "{", ", ")
    assert text == "{Add_1<a>x:0, y:0<b>add<c>m.py:1<d>{Add_2<a><b><c><d>"
    assert native.text_ops(ops, [PIECES, PIECES], "{", ", ", 3) == text[:-3]


@needs_c
@pytest.mark.parametrize("op", [
    _op("Add_ü", ["x:0"]),  # not ASCII
    _op("Add_1", ["x:0"], source="模型.py:3"),
])
def test_text_ops_hands_back_text_that_is_not_ascii(op: IrOp) -> None:
    assert native.text_ops([op], [PIECES], "{", ", ") is None
    assert native.text_ops([_op("Add_1", ["x:0"])], [("ü", "", "", "")], "{", ", ") is None


@needs_c
def test_the_c_loops_hand_back_ops_that_are_not_ir_ops() -> None:
    class OtherOp(IrOp):
        __slots__ = ()

    other = OtherOp("Add_1", "Add")
    bad_inputs = _op("Add_2", ["x:0"])
    bad_inputs.inputs = ("x:0",)  # a tuple, not a list
    for ops in ([other], [bad_inputs]):
        assert native.identity_groups(ops) is None
        assert native.scan_ops(ops, INPUTS_END) is None
        assert native.text_ops(ops, [PIECES], "{", ", ") is None
        assert native.pb_ops(ops, [PIECES], {"add": ""}, {"m.py:1": ""}) is None


@needs_c
def test_scan_ops_finds_strings_that_need_escapes() -> None:
    plain = [_op("Add_1", ["x:0"]), _op("Add_2", ["Add_1:0"])]
    inputs, is_plain, fx_nodes, sources = native.scan_ops(plain, INPUTS_END)
    assert inputs == ["x:0", INPUTS_END, "Add_1:0", INPUTS_END] and is_plain
    assert fx_nodes == frozenset({"add"}) and sources == frozenset({"m.py:1"})
    for op in (_op('Add_"1', []), _op("Add_1", ["x\\0"]), _op("Add_1", [], fx_node="a'b"), _op("Add_1", [], source="m.py:1\n")):
        assert native.scan_ops([*plain, op], INPUTS_END)[1] is False


@needs_c
def test_identity_groups_number_groups_in_order_of_first_appearance() -> None:
    first = _op("Add_1", ["x:0"])
    second, other_type, no_inputs = _op("Add_2", ["y:0"], like=first), _op("Mul_1", ["x:0"], like=first), _op("Add_3", [], like=first)
    assert native.identity_groups([first, other_type, second, no_inputs, first]) == ([0, 1, 0, 2, 0], [0, 1, 3])


@needs_c
def test_copy_ops_makes_ops_like_the_python_copy_and_hands_back_bad_rows() -> None:
    desc = (TensorDesc("x", shape=(2,)),)
    attrs = _op("Add_1", []).attrs
    rows = (("Add", (0, 1), attrs, desc + desc, desc), ("Neg", (2,), attrs, desc, desc))
    ops: list[IrOp] = []
    assert native.copy_ops(ops, rows, ["Add_7", "Neg_3"], ["a:0", "b:0", "Add_7:0"], "add_1", None) is True
    assert ops == [
        IrOp("Add_7", "Add", ["a:0", "b:0"], attrs, desc + desc, desc, "add_1", None),
        IrOp("Neg_3", "Neg", ["Add_7:0"], attrs, desc, desc, "add_1", None),
    ]
    assert ops[0].attrs is attrs and ops[0].output_desc is desc  # shared, as the Python copy does
    for bad_rows in ((("Add", (5,), attrs, desc, desc),), (("Add", [0], attrs, desc, desc),), (("Add", (0,), attrs, desc),)):
        assert native.copy_ops(ops, bad_rows, ["Add_8"], ["a:0"], "add_1", None) is None
    assert len(ops) == 2  # nothing appended by a refused call


def test_a_graph_with_non_ascii_names_dumps_through_the_python_paths(tmp_path: Path) -> None:
    gm = functional_graph(lambda x: (x * 2,), torch.randn(2))
    graph = convert_to_ascend_ir(gm, "graph_0").graph
    for op in graph.ops:
        op.source = "模型.py:1"
    assert_dumps_equal_references(graph)
    assert len(write_ir_dumps(graph, tmp_path / "d")) == 4


def test_a_module_built_from_other_sources_is_left_unused(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    import fxlab.ir

    monkeypatch.delenv("FXLAB_NO_SPEEDUPS", raising=False)
    monkeypatch.setattr(fxlab.ir, "_speedups", types.SimpleNamespace(VERSION=speedups.VERSION - 1), raising=False)
    module, why_not = speedups._load()
    assert module is None and "reinstall fxlab" in why_not
    monkeypatch.setenv("FXLAB_NO_SPEEDUPS", "1")
    assert speedups._load() == (None, "FXLAB_NO_SPEEDUPS is set")


def test_ops_the_c_loops_hand_back_are_written_whole_by_the_python_paths() -> None:
    """Ops of an IrOp subclass, in a graph without graph inputs (so no per-op index
    pieces): every C loop hands them back after the shapes' pieces were made, and the
    Python paths must still write every op."""
    class TaggedOp(IrOp):
        __slots__ = ()

    first = TaggedOp("Add_1", "Add", ["x:0", "y:0"], {"T": Attr(AttrKind.INT, 1)}, (TensorDesc("x", shape=(2,)),), (), "add", "m.py:1")
    second = TaggedOp("Add_2", "Add", ["Add_1:0"], first.attrs, first.input_desc, first.output_desc, "add_1", "m.py:2")
    graph = IrGraph("g", [first, second], outputs=["Add_2:0"])
    assert_dumps_equal_references(graph)
    assert graph_to_pbtxt(graph).count("  op {") == 2
