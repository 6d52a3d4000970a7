"""DOT text of FX stages and Ascend IR graphs, exactly; rendering with and without dot."""
from __future__ import annotations


import torch

from fxlab.capture.records import stage_from_module
from tests.functional_graphs import functional_graph
from fxlab.capture.trace import NodeRecord, StageTrace, TensorMeta
from fxlab.ir.model import Attr, AttrKind, DataType, IrGraph, IrOp, TensorDesc
from fxlab.viz import dot
from fxlab.viz.dot import fx_node_views

SK_FRAME = {"index": 0, "enter": "scope_enter", "attrs": {"_super_kernel_scope": "s1", "_super_kernel_options": "stream-fusion=1"}}
CORE_FRAME = {"index": 1, "enter": "scope_enter_1", "attrs": {"_op_aicore_num": "8", "_op_vectorcore_num": "16"}}


def _f32(*shape: int) -> list[TensorMeta]:
    return [TensorMeta(shape=list(shape), dtype="float32")]


def small_stage() -> StageTrace:
    """x.add_(y) inside SuperKernel scope s1, a core limit nested in it, and a copy_
    epilogue writing the result back into the input (names as the functional stage has them)."""
    nodes = [
        NodeRecord("x", "placeholder", "x", "", outputs=_f32(2)),
        NodeRecord("y", "placeholder", "y", "", outputs=_f32(2)),
        NodeRecord("scope_enter", "call_function", "air.scope_enter.default", "['_super_kernel_scope'], ['s1']", kind="scope", scopes=[SK_FRAME]),
        NodeRecord("add_", "call_function", "aten.add_.Tensor", "x, y", ["x", "y"], _f32(2), mutates=["self"], kind="inplace", scopes=[SK_FRAME]),
        NodeRecord("scope_enter_1", "call_function", "air.scope_enter.default", "['_op_aicore_num'], ['8']", kind="scope", scopes=[SK_FRAME, CORE_FRAME]),
        NodeRecord("relu", "call_function", "aten.relu.default", "add_", ["add_"], _f32(2), scopes=[SK_FRAME, CORE_FRAME]),
        NodeRecord("scope_exit", "call_function", "air.scope_exit.default", "", kind="scope", scopes=[SK_FRAME, CORE_FRAME]),
        NodeRecord("scope_exit_1", "call_function", "air.scope_exit.default", "", kind="scope", scopes=[SK_FRAME]),
        NodeRecord("copy_", "call_function", "aten.copy_.default", "x, relu", ["x", "relu"], _f32(2), mutates=["self"], kind="copy_epilogue"),
        NodeRecord("output", "output", "output", "[relu]", ["relu"]),
    ]
    return StageTrace(name="functional", code="", nodes=nodes)


def test_edges_are_the_recorded_inputs_not_names_in_the_argument_text() -> None:
    nodes = [
        NodeRecord("x", "placeholder", "x", ""),
        NodeRecord("h", "placeholder", "h", ""),
        NodeRecord("auto", "call_function", "higher_order.auto_functionalized_v2", "npu.my_inplace.default, x=h, y='x', h=[x, auto]", ["h", "x"]),
    ]
    views = fx_node_views(StageTrace("functional", "", nodes))
    assert [v.inputs for v in views] == [[], [], ["h", "x"]]


def test_a_recorded_stage_draws_the_edges_of_its_graph_module() -> None:
    def fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x.add_(y)
        return x * 2

    gm = functional_graph(fn, torch.randn(3), torch.randn(3))
    views = fx_node_views(stage_from_module("functional", gm))
    assert [(i, v.name) for v in views for i in v.inputs] == [(i.name, n.name) for n in gm.graph.nodes for i in n.all_input_nodes]
    # the functional graph writes x back with a copy_ epilogue, drawn magenta
    epilogue = next(dot.fx_node_line(v) for v in views if v.target == "aten.copy_.default")
    assert 'fillcolor="#f9d0f3", color="#a3229a"' in epilogue and "copy_ epilogue" in epilogue


def _desc(dtype: DataType, *shape: int) -> TensorDesc:
    return TensorDesc(name="y", dtype=dtype, shape=shape)


def small_ir() -> IrGraph:
    sk = {"_super_kernel_scope": Attr(AttrKind.STR, "s1"), "_super_kernel_options": Attr(AttrKind.STR, "stream-fusion=1")}
    cores = {"_op_aicore_num": Attr(AttrKind.STR, "8"), "_op_vectorcore_num": Attr(AttrKind.STR, "16")}
    ops = [
        IrOp("x", "Data", attrs={"index": Attr(AttrKind.INT, 0)}, output_desc=[_desc(DataType.DT_FLOAT, 2, -1)], fx_node="x"),
        IrOp("Const", "Const", attrs={"_readable_value": Attr(AttrKind.STR, "0.5"), **sk}, output_desc=[_desc(DataType.DT_FLOAT)], fx_node="mul", source="/m/model.py:7"),
        IrOp("Mul", "Mul", ["x:0", "Const:0"], attrs=dict(sk), output_desc=[_desc(DataType.DT_FLOAT, 2, -1)], fx_node="mul", source="/m/model.py:7"),
        IrOp("Split", "SplitV", ["Mul:0"], attrs={**sk, **cores}, output_desc=[_desc(DataType.DT_FLOAT, 1), _desc(DataType.DT_FLOAT16, -2)], fx_node="split", source="/m/model.py:8"),
        IrOp("FxlabUnsupported", "FxlabUnsupported", ["Split:1", "Mul:-1", ""], attrs={"_fxlab_unsupported": Attr(AttrKind.STR, "aten.foo.default")}, fx_node="foo"),
        IrOp("NetOutput", "NetOutput", ["FxlabUnsupported:0", "Gone:0"], fx_node="output"),
    ]
    return IrGraph(name="g", ops=ops, inputs=["x"], outputs=["FxlabUnsupported:0"])


def test_big_graphs_get_bounded_layout_passes() -> None:
    assert "  graph [nslimit=2, nslimit1=2];" in dot.open_graph("big", "", dot.LARGE_GRAPH_NODES + 1)
    assert not any("nslimit" in line for line in dot.open_graph("small", "", 3))


def test_a_ge_op_box_names_its_type_desc_core_limits_and_fx_node() -> None:
    split = next(op for op in small_ir().ops if op.name == "Split")
    line = dot.ir_op_line(split, None)
    assert line == '"Split" [label="SplitV\\nSplit\\nFLOAT[1], FLOAT16[*]\\ncores: aicore 8, vectorcore 16", tooltip="fx: split\\nmodel.py:8"];'
    unsupported = next(op for op in small_ir().ops if op.type == "FxlabUnsupported")
    assert 'fillcolor="#f8c4c4", color="#c62828"' in dot.ir_op_line(unsupported, None)


def test_quote_shows_bidi_and_control_characters_escaped():
    from fxlab.viz.dot import quote

    assert quote('a"b\\c\nd\u202ee\x1b') == '"a\\"b\\\\c\\nd\\\\u202ee\\\\u001b"'
