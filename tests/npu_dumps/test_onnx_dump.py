"""GE's ONNX-text phase dumps: ops from ``ge:<Type>`` nodes, originals and passes from node
attributes, output descs from the flattened ``output_desc_*:<i>`` attributes or one JSON
string per desc, subgraphs from ``subgraph`` nodes."""

from __future__ import annotations

import json
from pathlib import Path

from fxlab.npu_dumps.read import read_dumps

ONNX_TEXT = """ir_version: 4
producer_name: "GE"
graph {
  node {
    input: "x:0"
    input: "w:0"
    name: "MatMulV2"
    op_type: "ge:MatMulV2"
    attribute { name: "_datadump_original_op_names" strings: "MatMulV2" strings: "Mul" strings: "Add" type: STRINGS }
    attribute { name: "_datadump_original_op_types" strings: "MatMulV2" strings: "Mul" strings: "Add" type: STRINGS }
    attribute { name: "pass_name" strings: "MatMulBiasAddFusionPass" type: STRINGS }
    attribute { name: "fusion_scope" i: 3 type: INT }
    attribute { name: "_super_kernel_scope" s: "mlp" type: STRING }
    attribute { name: "output_desc_nums" i: 1 type: INT }
    attribute { name: "output_desc_dtype:0" s: "DT_FLOAT16" type: STRING }
    attribute { name: "output_desc_layout:0" s: "FRACTAL_NZ" type: STRING }
    attribute { name: "output_desc_origin_dtype:0" s: "DT_FLOAT" type: STRING }
    attribute { name: "output_desc_origin_layout:0" s: "ND" type: STRING }
    attribute { name: "output_desc_attr__datadump_origin_name:0" s: "Add" type: STRING }
    attribute { name: "output_desc_attr__fx_tensor_name:0" s: "addmm-aten.addmm.default.OUTPUT.0" type: STRING }
  }
  node {
    input: "MatMulV2:0"
    name: "trans_Cast_4"
    op_type: "ge:Cast"
    attribute { name: "_datadump_original_op_names" type: STRINGS }
    attribute { name: "output_desc_0" s: %s type: STRING }
  }
  node {
    name: "branch"
    op_type: "subgraph"
    attribute { name: "graph" type: GRAPH g { name: "branch" node { name: "Relu" op_type: "ge:Relu" } } }
  }
  name: "graph_1"
}
"""


def _write(tmp_path: Path) -> Path:
    desc = {"dtype": "DT_FLOAT16", "layout": "ND", "origin_dtype": "DT_FLOAT", "origin_layout": "ND", "_datadump_origin_name": 's: "Add"\n'}
    text = ONNX_TEXT % json.dumps(json.dumps(desc))
    path = tmp_path / "ge_onnx_00000002_graph_1_PreRunAfterBuild.pbtxt"
    path.write_text(text)
    return path


def test_onnx_dump_ops_descs_and_subgraphs(tmp_path):
    dumps = read_dumps([_write(tmp_path)])
    root, branch = dumps.graphs
    assert (root.format, root.graph_id, root.phase, root.index, root.name) == ("ge_onnx", 1, "PreRunAfterBuild", 2, "graph_1")
    matmul, cast = root.ops
    assert (matmul.type, matmul.inputs, matmul.originals, matmul.passes, matmul.fusion_scope, matmul.super_kernel_scope) == (
        "MatMulV2",
        ["x:0", "w:0"],
        ["MatMulV2", "Mul", "Add"],
        ["MatMulBiasAddFusionPass"],
        3,
        "mlp",
    )
    out = matmul.outputs[0]
    assert (out.origin_name, out.fx_tensor_name) == ("Add", "addmm-aten.addmm.default.OUTPUT.0")
    assert matmul.changes() == ["output 0 format ND -> FRACTAL_NZ", "output 0 dtype DT_FLOAT -> DT_FLOAT16"]
    assert (cast.inserted, cast.originals, cast.outputs[0].origin_name, cast.changes()) == (
        True,
        [],
        "Add",
        ["output 0 dtype DT_FLOAT -> DT_FLOAT16"],
    )
    assert (branch.name, branch.parent, [op.name for op in branch.ops]) == ("branch", "graph_1", ["Relu"])


def test_a_desc_string_that_is_not_a_json_object_is_an_empty_desc(tmp_path):
    text = ONNX_TEXT % json.dumps("[1, 2]")
    path = tmp_path / "ge_onnx_00000002_graph_1_Build.pbtxt"
    path.write_text(text)
    root = read_dumps([path]).graphs[0]
    cast = next(op for op in root.ops if op.name == "trans_Cast_4")
    assert cast.inserted and [(o.dtype, o.layout, o.origin_name) for o in cast.outputs] == [("", "", None)]


LEVEL_2 = """ir_version: 4
graph {
  node {
    name: "MatMulV2"
    op_type: "ge:MatMulV2"
    attribute { name: "fusion_scope" i: 3 type: INT }
    attribute { name: "output_desc_dtype:0" s: "DT_FLOAT16" type: STRING }
  }
  name: "graph_1"
}
"""


def test_a_dump_that_keeps_no_op_string_attrs_is_said_to_hide_what_ge_fused(tmp_path):
    # At DUMP_GE_GRAPH=2 or 3 an ONNX dump keeps only the flattened descs as strings.
    (tmp_path / "ge_onnx_00000002_graph_1_Build.pbtxt").write_text(LEVEL_2)
    (tmp_path / "ge_onnx_00000003_graph_1_AfterBuild.pbtxt").write_text(LEVEL_2)
    notes = read_dumps([tmp_path]).notes
    assert [n for n in notes if "keep no op's string attrs" in n] == [
        "the ge_onnx_*.pbtxt dumps keep no op's string attrs (GE writes them only at DUMP_GE_GRAPH=1): without GE's original "
        "op names, an op GE fused or renamed shows as ops removed and one added; dump at DUMP_GE_GRAPH=1, or give the same "
        "run's ge_proto_*.txt files, which keep them"
    ]
    full = tmp_path / "full"
    full.mkdir()
    assert not any("string attrs" in n for n in read_dumps([_write(full)]).notes)  # a DUMP_GE_GRAPH=1 dump keeps them
