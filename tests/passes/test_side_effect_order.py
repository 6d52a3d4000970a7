"""TorchAir's order for side-effect ops in the GE graph."""
from __future__ import annotations

from fxlab.ir.builder import GraphBuilder, building
from fxlab.ir import ge
from fxlab.ir.model import DataType
from fxlab.passes.side_effect_order import order_side_effect_ops


def _graph():
    builder = GraphBuilder("g")
    with building(builder):
        x = builder.add_op("Data", (), {"index": 0}, dtypes=DataType.DT_FLOAT, shapes=[(4,)])[0]
        ge.op("AttentionToFFN", {"x": x}, {}, outputs=())
        ge.op("FFNToAttention", {"x": x}, {}, outputs=())
        y = ge.op1("Relu", {"x": x})
        builder.add_op("NetOutput", {"x0": y}, None, (), name="NetOutput")
    return builder.graph


def test_side_effect_ops_keep_their_order_and_feed_net_output():
    graph = _graph()
    result = order_side_effect_ops(graph)
    assert result.changed and result.changed_nodes == ["AttentionToFFN", "FFNToAttention"]
    ops = {op.name: op for op in graph.ops}
    assert "AttentionToFFN:-1" in ops["FFNToAttention"].inputs
    assert ops["NetOutput"].inputs[-1] == "FFNToAttention:-1"


def test_graphs_without_them_are_left_alone():
    graph = _graph()
    graph.ops = [op for op in graph.ops if op.type not in ("AttentionToFFN", "FFNToAttention")]
    before = [list(op.inputs) for op in graph.ops]
    assert not order_side_effect_ops(graph).changed
    assert [list(op.inputs) for op in graph.ops] == before
