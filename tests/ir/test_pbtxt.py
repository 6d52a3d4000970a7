"""GE ModelDef as protobuf text: the writer matches protobuf's own text format."""
from __future__ import annotations

import pytest
from google.protobuf import text_format
from hypothesis import given, settings

from fxlab.ir.ge_proto import GeProtoError, model_def_message
from fxlab.ir.model import Attr, AttrKind, DataType, IrGraph, IrOp, TensorDesc
from fxlab.ir.pbtxt import graph_to_pbtxt, pbtxt_to_graph
from tests.ir.ir_fixtures import every_kind_graph, ir_graphs, torchair_pb2


def test_text_equals_protobuf_text_format() -> None:
    graph = every_kind_graph()
    assert graph_to_pbtxt(graph) == text_format.MessageToString(model_def_message(graph))


def test_text_of_a_small_graph() -> None:
    graph = IrGraph("g", [
        IrOp("x", "Data", [], {"index": Attr(AttrKind.INT, 0)}, [], [TensorDesc("y", DataType.DT_FLOAT16, (2,))], fx_node="arg0_1"),
        IrOp("Cast", "Cast", ["x:0"], {"dst_type": Attr(AttrKind.INT, 0), "eps": Attr(AttrKind.FLOAT, 1e-5)},
             [TensorDesc("x", DataType.DT_FLOAT16, (2,))], [TensorDesc("y", DataType.DT_FLOAT, (2,))], fx_node="cast", source="m.py:3"),
    ], ["x"], ["Cast:0"])
    assert graph_to_pbtxt(graph) == """\
name: "g"
graph {
  name: "g"
  input: "x"
  output: "Cast:0"
  op {
    name: "x"
    type: "Data"
    attr {
      key: "_fxlab_fx_node"
      value {
        s: "arg0_1"
      }
    }
    attr {
      key: "index"
      value {
        i: 0
      }
    }
    output_desc {
      name: "y"
      dtype: DT_FLOAT16
      shape {
        dim: 2
      }
      layout: "ND"
    }
  }
  op {
    name: "Cast"
    type: "Cast"
    input: "x:0"
    attr {
      key: "_fxlab_fx_node"
      value {
        s: "cast"
      }
    }
    attr {
      key: "_fxlab_source"
      value {
        s: "m.py:3"
      }
    }
    attr {
      key: "dst_type"
      value {
        i: 0
      }
    }
    attr {
      key: "eps"
      value {
        f: 1e-05
      }
    }
    input_desc {
      name: "x"
      dtype: DT_FLOAT16
      shape {
        dim: 2
      }
      layout: "ND"
    }
    output_desc {
      name: "y"
      dtype: DT_FLOAT
      shape {
        dim: 2
      }
      layout: "ND"
    }
  }
}
"""


@given(ir_graphs())
@settings(max_examples=40, deadline=None)
def test_generated_graphs_text_and_round_trip(graph: IrGraph) -> None:
    text = graph_to_pbtxt(graph)
    assert text == text_format.MessageToString(model_def_message(graph))
    assert pbtxt_to_graph(text) == graph


def test_round_trip_of_every_attr_kind() -> None:
    graph = every_kind_graph()
    assert pbtxt_to_graph(graph_to_pbtxt(graph)) == graph


def test_bad_text_is_a_clear_error() -> None:
    with pytest.raises(GeProtoError, match="not GE ModelDef text"):
        pbtxt_to_graph("graph { op { nme: 1 } }")


def test_torchair_pb2_parses_fxlab_text(torchair_path) -> None:
    pb2 = torchair_pb2(torchair_path)
    graph = every_kind_graph()
    theirs = text_format.Parse(graph_to_pbtxt(graph), pb2.ModelDef())
    assert [op.type for op in theirs.graph[0].op] == ["Data", "MatMulV2", "NetOutput"]
    assert text_format.MessageToString(theirs) == graph_to_pbtxt(graph)
