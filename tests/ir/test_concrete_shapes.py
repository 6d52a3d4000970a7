"""A run's concrete output sizes for ops of a graph with symbolic sizes."""
from __future__ import annotations

import torch

from fxlab.ir.concrete_shapes import size_bindings, with_concrete_descs
from fxlab.ir.model import Attr, AttrKind, DataType, IrGraph, IrOp, TensorDesc, attr_of


def _desc(shape: tuple[int, ...], symbolic: str | None = None) -> TensorDesc:
    attrs = {"_fxlab_symbolic_shape": Attr(AttrKind.STR, symbolic)} if symbolic else {}
    return TensorDesc("y", DataType.DT_FLOAT, shape, "ND", attrs)


def _graph() -> IrGraph:
    data = IrOp("x", "Data", [], {"index": attr_of(0)}, (), (_desc((-1, 16), "[s0, 16]"),))
    other = IrOp("n", "Data", [], {"index": attr_of(1)}, (), (_desc((-1,), "[2*s1]"),))  # no bare symbol: binds nothing
    sized = IrOp("d", "Dispatch", ["x:0"], {}, (), (_desc((-1, 16), "[4*s0, 16]"), _desc((-1,), "[s1]"), _desc((3,))))
    return IrGraph("g", [data, other, sized], ["x", "n"], ["d:0"])


def test_a_data_ops_bare_symbols_bind_to_the_sizes_the_run_feeds_it():
    graph = _graph()
    values = {"x:0": torch.zeros(5, 16), "n:0": torch.zeros(6)}
    assert {str(k): v for k, v in size_bindings(graph, values).items()} == {"s0": 5}


def test_an_ops_unknown_dims_get_this_runs_sizes_and_the_graph_is_left_as_it_was():
    graph = _graph()
    sized = graph.ops[2]
    bindings = size_bindings(graph, {"x:0": torch.zeros(5, 16)})
    resolved = with_concrete_descs(sized, bindings)
    assert [d.shape for d in resolved.output_desc] == [(20, 16), (-1,), (3,)]  # s1 is not bound: -1 stays
    assert [d.shape for d in sized.output_desc] == [(-1, 16), (-1,), (3,)]
    static = IrOp("s", "Relu", ["x:0"], {}, (), (_desc((2, 3)),))
    assert with_concrete_descs(static, bindings) is static and with_concrete_descs(sized, {}) is sized
