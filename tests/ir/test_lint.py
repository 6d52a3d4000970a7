"""The IR lint: a well-formed graph passes; each fault is named with its op."""
from __future__ import annotations

import pytest
import torch

from tests.functional_graphs import functional_graph
from fxlab.ir.lint import IrLintError, lint_ir
from fxlab.ir.model import Attr, AttrKind, DataType, IrGraph, IrOp, TensorDesc
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir


def _data(name: str, index: int) -> IrOp:
    return IrOp(name, "Data", [], {"index": Attr(AttrKind.INT, index)}, (), (TensorDesc("y", DataType.DT_FLOAT, (3,)),))


def _graph() -> IrGraph:
    relu = IrOp("Relu", "Relu", ["a:0", "", "b:-1"], {}, (TensorDesc("x"),), (TensorDesc("y"),))  # "": an optional input left out
    return IrGraph("g", [_data("a", 0), _data("b", 1), relu, IrOp("NetOutput", "NetOutput", ["Relu:0"])], inputs=["a", "b"])


def test_a_converted_graph_and_a_hand_made_one_are_well_formed() -> None:
    lint_ir(_graph())
    lint_ir(convert_to_ascend_ir(functional_graph(lambda x, y: (x + y).relu(), torch.randn(3), torch.randn(3))).graph)


@pytest.mark.parametrize(
    ("break_it", "message"),
    [
        (lambda g: g.ops.insert(2, _data("a", 2)), "op name\\(s\\) a used more than once"),
        (lambda g: g.ops[2].inputs.__setitem__(0, "gone:0"), "input 0 of Relu \\(Relu\\) is 'gone:0', but the graph has no op 'gone'"),
        (lambda g: g.ops[2].inputs.__setitem__(0, "a:1"), "input 0 of Relu \\(Relu\\) is 'a:1', but a has 1 output"),
        (lambda g: g.ops[2].inputs.__setitem__(0, "a"), "is 'a', not \"producer:index\""),
        (lambda g: g.ops[1].set_attrs({"index": Attr(AttrKind.INT, 0)}), "Data ops a and b both have index 0"),
        (lambda g: g.ops.pop(), "0 NetOutput ops \\(none\\), not one"),
        (lambda g: g.ops.append(IrOp("NetOutput_1", "NetOutput", ["a:0"])), "2 NetOutput ops \\(NetOutput, NetOutput_1\\)"),
    ],
)
def test_each_fault_is_named(break_it, message) -> None:  # type: ignore[no-untyped-def]
    graph = _graph()
    break_it(graph)
    with pytest.raises(IrLintError, match=message):
        lint_ir(graph)
