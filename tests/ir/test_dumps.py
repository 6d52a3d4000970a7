"""The four Ascend IR dumps of a graph, as files by name, and read back."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from tests.functional_graphs import functional_graph
from fxlab.cli.files import write_files
from fxlab.ir.dump_py import graph_to_py
from fxlab.ir.dumps import graph_to_json_text, ir_dump_files
from fxlab.ir.ge_proto import decode_model_def
from fxlab.ir.pbtxt import pbtxt_to_graph
from fxlab.ir.json_values import finite_json
from fxlab.ir.model import Attr, AttrKind, IrGraph
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from tests.ir.ir_fixtures import every_kind_graph, two_layer_decoder

NAMES = ["ascend_ir.json", "ascend_ir.pb", "ascend_ir.pbtxt", "ascend_ir.py"]


def _converted():
    gm = functional_graph(lambda x, y: (x + y + 1.5,), torch.randn(2, 3), torch.randn(2, 3))
    return convert_to_ascend_ir(gm, "graph_0").graph, gm


def write_ir_dumps(graph: IrGraph, folder: Path, fx_graph=None) -> list[Path]:
    """The dumps written as the saved trace writes them."""
    return write_files(folder, ir_dump_files(graph, graph_to_py(graph, fx_graph)))


def read_ir(path: Path) -> IrGraph:
    """A dump read back by its own reader: the JSON, the binary or the text protobuf."""
    if path.suffix == ".pb":
        return decode_model_def(path.read_bytes())
    text = path.read_text(encoding="utf-8")
    return pbtxt_to_graph(text) if path.suffix == ".pbtxt" else IrGraph.from_json(json.loads(text))


def test_the_four_files_of_the_saved_trace_layout(tmp_path: Path) -> None:
    graph, gm = _converted()
    files = ir_dump_files(graph, graph_to_py(graph, gm))
    assert list(files) == NAMES
    assert isinstance(files["ascend_ir.pb"], bytes) and all(isinstance(files[name], str) for name in NAMES if name != "ascend_ir.pb")
    assert files["ascend_ir.py"] == graph_to_py(graph, gm) and files["ascend_ir.json"] == graph_to_json_text(graph)
    paths = write_ir_dumps(graph, tmp_path / "graph_0", fx_graph=gm)
    assert [p.name for p in paths] == NAMES and all(p.parent == tmp_path / "graph_0" for p in paths)
    data = json.loads(paths[0].read_text(encoding="utf-8"))
    assert list(data) == ["name", "inputs", "outputs", "attrs", "ops"]
    assert [op["type"] for op in data["ops"]] == ["Data", "Data", "Add", "Const", "Add", "NetOutput"]
    assert data["ops"][2]["fx_node"] == "add" and data["ops"][2]["inputs"] == ["arg0_1:0", "arg1_1:0"]
    assert "## FX Code: add: torch.float32[2, 3]cpu = torch.ops.aten.add.Tensor(" in paths[3].read_text(encoding="utf-8")


@pytest.mark.parametrize("name", NAMES[:3])
def test_read_ir_gives_back_the_graph(tmp_path: Path, name: str) -> None:
    graph, _ = _converted()
    write_ir_dumps(graph, tmp_path)
    assert read_ir(tmp_path / name) == graph


@pytest.mark.parametrize("name", NAMES[1:3])
def test_read_ir_of_every_attr_kind(tmp_path: Path, name: str) -> None:
    graph = every_kind_graph()
    write_ir_dumps(graph, tmp_path)
    assert read_ir(tmp_path / name) == graph


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def test_non_finite_floats_are_strings_and_read_back_as_floats(tmp_path: Path) -> None:
    graph = every_kind_graph()
    graph.ops[1].set_attrs({"hi": Attr(AttrKind.FLOAT, math.inf), "nan": Attr(AttrKind.FLOAT, math.nan),
                            "list": Attr(AttrKind.LIST_FLOAT, (-math.inf, 1.5))})
    op = json.loads(graph_to_json_text(graph), parse_constant=_not_json)["ops"][1]
    assert (op["attrs"]["hi"], op["attrs"]["nan"], op["attrs"]["list"]) == ("Infinity", "NaN", ["-Infinity", 1.5])
    write_ir_dumps(graph, tmp_path)
    back = read_ir(tmp_path / "ascend_ir.json").ops[1].attrs
    assert back["hi"].value == math.inf and math.isnan(back["nan"].value) and back["list"].value == (-math.inf, 1.5)


def test_json_text_is_ir_graph_to_json_one_op_per_line() -> None:
    graph = every_kind_graph()
    text = graph_to_json_text(graph)
    assert json.loads(text, parse_constant=_not_json) == finite_json(graph.to_json())
    lines = text.splitlines()
    assert len(lines) == len(graph.ops) + 2
    assert [json.loads(line.rstrip(",")) for line in lines[1:-1]] == [finite_json(op.to_json()) for op in graph.ops]
    assert json.loads(graph_to_json_text(IrGraph("empty"))) == IrGraph("empty").to_json()


def test_json_keeps_negative_zero_apart_from_zero() -> None:
    graph = every_kind_graph()
    graph.ops[0].set_attrs({"a": Attr(AttrKind.FLOAT, 0.0)})
    graph.ops[1].set_attrs({"a": Attr(AttrKind.FLOAT, -0.0)})
    ops = json.loads(graph_to_json_text(graph))["ops"]
    assert str(ops[0]["attrs"]["a"]) == "0.0" and str(ops[1]["attrs"]["a"]) == "-0.0"


def test_dumps_are_deterministic() -> None:
    (first, first_gm), (second, second_gm) = _converted(), _converted()
    assert ir_dump_files(first, graph_to_py(first, first_gm)) == ir_dump_files(second, graph_to_py(second, second_gm))


def test_decoder_dumps_equal_the_references() -> None:
    """The two-layer Llama-style decoder's IR (ops sharing attrs and descs): each dump
    equals an independent reference."""
    from tests.ir.test_dump_references import assert_dumps_equal_references

    _, ir = two_layer_decoder()
    assert len(ir.ops) > 300
    assert_dumps_equal_references(ir)


def test_an_output_torchair_leaves_unset_is_saved_and_drawn_as_unknown_rank(tmp_path: Path) -> None:
    from fxlab.ir.ge_proto import decode_model_def
    from fxlab.viz.dot import desc_signature

    linear = lambda x, weight, bias: (torch.nn.functional.linear(x, weight, bias),)  # noqa: E731
    gm = functional_graph(linear, torch.randn(2, 3), torch.randn(4, 3), torch.randn(4))
    graph = convert_to_ascend_ir(gm, "graph_0").graph
    paths = write_ir_dumps(graph, tmp_path, fx_graph=gm)
    ops = {op["name"]: op for op in json.loads(paths[0].read_text(encoding="utf-8"))["ops"]}
    # addmm: MatMulV2's output is a helper nobody sets (GE infers it); Add's is the node's result.
    assert [op["type"] for op in ops.values()][3:9] == ["Const", "Transpose", "Const", "Const", "MatMulV2", "Mul"]
    assert ops["MatMulV2"]["output_desc"][0]["shape"] == [-2]
    assert ops["Mul"]["input_desc"][0]["shape"] == [-2]
    assert ops["Add"]["output_desc"][0]["shape"] == [2, 4]
    assert ops["Const_1"]["output_desc"][0]["shape"] == []  # a scalar constant is a scalar
    from_pb = {op.name: op for op in decode_model_def(paths[1].read_bytes()).ops}
    assert from_pb["MatMulV2"].output_desc[0].shape == (-2,) and from_pb["Const_1"].output_desc[0].shape == ()
    assert "shape {\n        dim: -2\n      }" in paths[2].read_text(encoding="utf-8")
    assert desc_signature(from_pb["MatMulV2"].output_desc[0]) == "FLOAT[*]"
    assert desc_signature(from_pb["Const_1"].output_desc[0]) == "FLOAT[]"
