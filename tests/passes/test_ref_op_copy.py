"""TorchAir's removal of the TensorMove/Assign copies around a ref op writing a graph input."""
from __future__ import annotations

import torch

from fxlab.ir.execute import execute
from fxlab.ir.model import Attr, AttrKind, DataType, IrGraph, IrOp, TensorDesc
from fxlab.ir.lint import lint_ir
from fxlab.passes.infra import NamedPass, PassManager
from fxlab.passes.ref_op_copy import remove_ref_op_copies


def _desc(name: str, shape: tuple[int, ...], dtype: DataType = DataType.DT_FLOAT) -> TensorDesc:
    return TensorDesc(name, dtype, shape)


def _write_back(outputs: list[str]) -> IrGraph:
    """cache (Data 0) -> TensorMove -> ScatterNdUpdate(indices, updates) -> Assign(cache, .);
    ``outputs`` are the NetOutput inputs."""
    ops = [
        IrOp("cache", "Data", [], {"index": Attr(AttrKind.INT, 0)}, (), (_desc("y", (4, 3)),)),
        IrOp("idx", "Data", [], {"index": Attr(AttrKind.INT, 1)}, (), (_desc("y", (2, 1), DataType.DT_INT64),)),
        IrOp("upd", "Data", [], {"index": Attr(AttrKind.INT, 2)}, (), (_desc("y", (2, 3)),)),
        IrOp("TensorMove", "TensorMove", ["cache:0"], {}, (_desc("x", (4, 3)),), (_desc("y", (4, 3)),)),
        IrOp("Scatter", "ScatterNdUpdate", ["TensorMove:0", "idx:0", "upd:0"], {"use_locking": Attr(AttrKind.BOOL, False)},
             (_desc("var", (4, 3)), _desc("indices", (2, 1), DataType.DT_INT64), _desc("updates", (2, 3))), (_desc("var", (4, 3)),)),
        IrOp("Relu", "Relu", ["Scatter:0"], {}, (_desc("x", (4, 3)),), (_desc("y", (4, 3)),)),
        IrOp("Assign", "Assign", ["cache:0", "Scatter:0"], {}, (_desc("ref", (4, 3)), _desc("value", (4, 3))), (_desc("ref", (4, 3)),)),
        IrOp("NetOutput", "NetOutput", outputs, {}, tuple(_desc(f"input{i}", (4, 3)) for i in range(len(outputs)))),
    ]
    return IrGraph("g", ops, inputs=["cache", "idx", "upd"], outputs=list(outputs))


def _inputs() -> list[torch.Tensor]:
    return [torch.zeros(4, 3), torch.tensor([[1], [3]]), torch.randn(2, 3)]


def test_the_ref_op_writes_the_input_itself_and_both_copies_go() -> None:
    graph = _write_back(["Relu:0"])
    (record,) = PassManager([NamedPass("ref_op_copy", remove_ref_op_copies)], lint=lint_ir).run(graph)[1]
    assert (record.changed, record.removed, record.changed_nodes) == (True, ["TensorMove", "Assign"], ["Scatter"])
    assert graph.types == ["Data", "Data", "Data", "ScatterNdUpdate", "Relu", "NetOutput"]
    assert graph.op_by_name()["Scatter"].inputs == ["cache:0", "idx:0", "upd:0"]
    inputs = _inputs()
    expected = inputs[0].clone()
    expected[[1, 3]] = inputs[2]
    out = execute(graph, inputs)[0]
    torch.testing.assert_close(inputs[0], expected)  # the caller's input written in place
    torch.testing.assert_close(out, expected.relu())


def test_the_assign_stays_when_the_ref_output_is_a_graph_output_or_read_by_the_assign_only() -> None:
    returned = _write_back(["Relu:0", "Scatter:0"])
    assert remove_ref_op_copies(returned).changed_nodes == ["Scatter"]
    assert returned.types == ["Data", "Data", "Data", "ScatterNdUpdate", "Relu", "Assign", "NetOutput"]
    only_assign = _write_back(["upd:0"])
    only_assign.ops = [op for op in only_assign.ops if op.name != "Relu"]
    result = remove_ref_op_copies(only_assign)
    assert result.changed
    assert only_assign.types == ["Data", "Data", "Data", "ScatterNdUpdate", "Assign", "NetOutput"]


def test_an_input_read_elsewhere_keeps_its_copies() -> None:
    graph = _write_back(["Relu:0", "cache:0"])  # the input's old value is an output too
    before = graph.types
    result = remove_ref_op_copies(graph)
    assert (result.changed, result.changed_nodes) == (False, [])
    assert graph.types == before
