"""DOT text of FX stages and Ascend IR graphs, exactly; rendering with and without dot."""
from __future__ import annotations


import torch

from fxlab.capture.records import stage_from_module
from fxlab.capture.stages import functional_graph
from fxlab.capture.trace import NodeRecord, StageTrace, TensorMeta
from fxlab.ir.model import Attr, AttrKind, DataType, IrGraph, IrOp, TensorDesc
from fxlab.viz import dot
from fxlab.viz.dot import fx_node_views, fx_stage_dot, ir_graph_dot

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


EXPECTED_STAGE_DOT = r'''digraph "g" {
  graph [fontname="Helvetica", fontsize=11, labelloc=t, labeljust=l];
  node [shape=box, style="rounded,filled", fillcolor="white", fontname="Helvetica", fontsize=10];
  edge [fontname="Helvetica", fontsize=9, color="#555555"];
  label="graph 0 · functional";
  "x" [label="x\nfloat32[2]", shape="ellipse"];
  "y" [label="y\nfloat32[2]", shape="ellipse"];
  "copy_" [label="copy_\naten.copy_.default\nfloat32[2]\ncopy_ epilogue", fillcolor="#f9d0f3", color="#a3229a", penwidth="2"];
  "output" [label="output", shape="house"];
  subgraph "cluster_scope_0" {
    label="scope 0\nSuperKernel s1\nstream-fusion=1";
    style="filled,rounded";
    fillcolor="#d0defa";
    color="#1f4fb4";
    "scope_enter" [label="scope_enter\nair.scope_enter.default\nscope marker", fillcolor="#d3f2cc", color="#2e7d32", penwidth="2"];
    "add_" [label="add_\naten.add_.Tensor\nfloat32[2]\nin-place", fillcolor="#fff3b0", color="#b8860b", penwidth="2"];
    "scope_exit_1" [label="scope_exit_1\nair.scope_exit.default\nscope marker", fillcolor="#d3f2cc", color="#2e7d32", penwidth="2"];
    subgraph "cluster_scope_1" {
      label="scope 1\ncores: aicore 8, vectorcore 16";
      style="dashed,rounded";
      color="#777777";
      "scope_enter_1" [label="scope_enter_1\nair.scope_enter.default\nscope marker", fillcolor="#d3f2cc", color="#2e7d32", penwidth="2"];
      "relu" [label="relu\naten.relu.default\nfloat32[2]"];
      "scope_exit" [label="scope_exit\nair.scope_exit.default\nscope marker", fillcolor="#d3f2cc", color="#2e7d32", penwidth="2"];
    }
  }
  "x" -> "add_";
  "y" -> "add_";
  "add_" -> "relu";
  "x" -> "copy_";
  "relu" -> "copy_";
  "relu" -> "output";
  "scope_enter_1" -> "relu" [style="invis"];
  "relu" -> "scope_exit" [style="invis"];
  "scope_enter" -> "add_" [style="invis"];
  "add_" -> "scope_exit_1" [style="invis"];
}
'''


def test_fx_stage_dot_exact() -> None:
    assert fx_stage_dot(small_stage(), "g", "graph 0 · functional") == EXPECTED_STAGE_DOT


def test_edges_are_the_recorded_inputs_not_names_in_the_argument_text() -> None:
    nodes = [
        NodeRecord("x", "placeholder", "x", ""),
        NodeRecord("h", "placeholder", "h", ""),
        NodeRecord("auto", "call_function", "higher_order.auto_functionalized_v2", "npu.my_inplace.default, x=h, y='x', h=[x, auto]", ["h", "x"]),
    ]
    views = fx_node_views(StageTrace("functional", "", nodes))
    assert [v.inputs for v in views] == [[], [], ["h", "x"]]
    text = fx_stage_dot(StageTrace("functional", "", nodes), "g")
    assert [line.strip() for line in text.splitlines() if "->" in line] == ['"h" -> "auto";', '"x" -> "auto";']


def test_a_recorded_stage_draws_the_edges_of_its_graph_module() -> None:
    def fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x.add_(y)
        return x * 2

    gm = functional_graph(fn, torch.randn(3), torch.randn(3))
    drawn = fx_stage_dot(stage_from_module("functional", gm), "g")
    edges = [line.strip() for line in drawn.splitlines() if "->" in line]
    assert edges == [f'"{i.name}" -> "{n.name}";' for n in gm.graph.nodes for i in n.all_input_nodes]
    # the functional graph writes x back with a copy_ epilogue, drawn magenta
    epilogue = next(line for line in drawn.splitlines() if "aten.copy_.default" in line)
    assert 'fillcolor="#f9d0f3", color="#a3229a"' in epilogue and "copy_ epilogue" in epilogue
    assert '  "arg0_1" -> "copy_";' in drawn and '  "mul" -> "output";' in drawn


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


EXPECTED_IR_DOT = r'''digraph "g" {
  graph [fontname="Helvetica", fontsize=11, labelloc=t, labeljust=l];
  node [shape=box, style="rounded,filled", fillcolor="white", fontname="Helvetica", fontsize=10];
  edge [fontname="Helvetica", fontsize=9, color="#555555"];
  "x" [label="Data\nx\nFLOAT[2, ?]", shape="ellipse", fillcolor="#eeeeee", tooltip="fx: x"];
  "FxlabUnsupported" [label="FxlabUnsupported\nunsupported: aten.foo.default\n<- foo", fillcolor="#f8c4c4", color="#c62828", fontcolor="#c62828", penwidth="2", tooltip="fx: foo"];
  "NetOutput" [label="NetOutput\n<- output", shape="house", fillcolor="#eeeeee", tooltip="fx: output"];
  subgraph "cluster_sk_s1" {
    label="SuperKernel s1\nstream-fusion=1";
    style="filled,rounded";
    fillcolor="#d0defa";
    color="#1f4fb4";
    penwidth="2";
    subgraph "cluster_fx_0" {
      label="fx: mul  (model.py:7)"; style="dashed,rounded"; color="#777777";
      "Const" [label="Const\nFLOAT[]\n= 0.5", fontsize="8", color="#999999", tooltip="fx: mul\nmodel.py:7"];
      "Mul" [label="Mul\nFLOAT[2, ?]", tooltip="fx: mul\nmodel.py:7"];
    }
    "Split" [label="SplitV\nSplit\nFLOAT[1], FLOAT16[*]\ncores: aicore 8, vectorcore 16\n<- split", tooltip="fx: split\nmodel.py:8"];
  }
  "Gone" [label="Gone\n(not in graph)", style="dashed", color="#c62828", fontcolor="#c62828"];
  "x" -> "Mul";
  "Const" -> "Mul";
  "Mul" -> "Split";
  "Split" -> "FxlabUnsupported" [label="1"];
  "Mul" -> "FxlabUnsupported" [style="dashed", color="#999999"];
  "FxlabUnsupported" -> "NetOutput";
  "Gone" -> "NetOutput";
}
'''


def test_ir_graph_dot_exact() -> None:
    assert ir_graph_dot(small_ir(), "g") == EXPECTED_IR_DOT


def test_big_graphs_get_bounded_layout_passes() -> None:
    ops = [IrOp("x", "Data")] + [IrOp(f"Relu_{i}", "Relu", [f"{'x' if i == 0 else f'Relu_{i - 1}'}:0"]) for i in range(dot.LARGE_GRAPH_NODES)]
    text = ir_graph_dot(IrGraph("big", ops))
    assert "  graph [nslimit=2, nslimit1=2];" in text.splitlines()[:6]
    assert text.count(" -> ") == dot.LARGE_GRAPH_NODES
    assert "nslimit" not in ir_graph_dot(small_ir())


def test_quote_shows_bidi_and_control_characters_escaped():
    from fxlab.viz.dot import quote

    assert quote('a"b\\c\nd\u202ee\x1b') == '"a\\"b\\\\c\\nd\\\\u202ee\\\\u001b"'
