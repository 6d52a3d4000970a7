"""Dead ``Data`` removal as TorchAir does it after conversion: unread inputs dropped, the
rest renumbered, and the graph still runs on the caller's inputs."""
from __future__ import annotations

import torch

from tests.functional_graphs import functional_graph
from fxlab.ir.execute import execute
from fxlab.ir.graph_inputs import INPUT_INDICES_ATTR
from fxlab.ir.lint import lint_ir
from fxlab.ir.model import Attr, AttrKind, IrGraph, IrOp
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.ge_passes import ge_graph_passes
from fxlab.passes.output_reuse import OPTION_ATTR_PREFIX, REUSE_INPUT_OPTION, execute_fx_outputs, ge_options
from fxlab.passes.remove_dead_data import remove_dead_data


def _indices(graph: IrGraph) -> dict[str, int]:
    return {op.name: op.attr_value("index") for op in graph.ops if op.type == "Data"}


def add_skipping_middle(x: torch.Tensor, shape_only: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x + y


def test_unread_data_is_dropped_and_later_indices_move_down() -> None:
    inputs = (torch.randn(2, 3), torch.randn(5), torch.randn(2, 3))
    graph = convert_to_ascend_ir(functional_graph(add_skipping_middle, *inputs), name="g").graph
    names = [op.name for op in graph.ops if op.type == "Data"]
    result = remove_dead_data(graph)
    assert result.graph is graph and result.changed
    assert result.changed_nodes == [names[2]]  # renumbered
    assert graph.types == ["Data", "Data", "Add", "NetOutput"]
    assert _indices(graph) == {names[0]: 0, names[2]: 1}
    assert graph.inputs == [names[0], names[2]]
    assert graph.attrs[INPUT_INDICES_ATTR].value == (0, 2)
    assert result.notes == [f"graph input(s) nothing reads dropped from the GE graph, as TorchAir drops them: {names[1]} (input 1); the other Data ops renumbered"]
    lint_ir(graph)
    # The executor takes the caller's inputs as they are; each Data reads its own.
    torch.testing.assert_close(execute(graph, list(inputs))[0], inputs[0] + inputs[2])


def test_a_graph_where_every_input_is_read_is_left_as_it_is() -> None:
    inputs = (torch.randn(3), torch.randn(3))
    graph = convert_to_ascend_ir(functional_graph(torch.add, *inputs), name="g").graph
    before = graph.to_json()
    result = remove_dead_data(graph)
    assert (result.changed, result.changed_nodes, result.notes) == (False, [], [])
    assert graph.to_json() == before


def _data(name: str, index: int) -> IrOp:
    return IrOp(name, "Data", attrs={"index": Attr(AttrKind.INT, index)})


def test_a_control_edge_does_not_keep_a_data_and_is_removed_with_it() -> None:
    graph = IrGraph("g", [
        _data("a", 0), _data("b", 1), _data("c", 2),
        IrOp("Relu", "Relu", ["c:0", "a:-1"]),
        IrOp("NetOutput", "NetOutput", ["b:0", "Relu:0"]),
    ], inputs=["a", "b", "c"], outputs=["b:0", "Relu:0"])
    result = remove_dead_data(graph)
    assert result.notes[0].endswith("drops them: a (input 0); the other Data ops renumbered")
    assert result.changed_nodes == ["b", "c", "Relu"]  # renumbered, and the control edge cut
    assert graph.op_by_name()["Relu"].inputs == ["c:0"]
    assert _indices(graph) == {"b": 0, "c": 1}  # a Data passed straight to NetOutput is read
    assert graph.inputs == ["b", "c"]


def test_a_second_run_keeps_the_mapping_to_the_callers_inputs() -> None:
    net_output = IrOp("NetOutput", "NetOutput", ["b:0", "c:0", "d:0"])
    graph = IrGraph("g", [_data("a", 0), _data("b", 1), _data("c", 2), _data("d", 3), net_output], inputs=["a", "b", "c", "d"])
    remove_dead_data(graph)
    assert graph.attrs[INPUT_INDICES_ATTR].value == (1, 2, 3)
    net_output.inputs = ["c:0"]
    result = remove_dead_data(graph)
    assert "b (input 1), d (input 3)" in result.notes[0]  # by the caller's input, not the Data index
    assert graph.attrs[INPUT_INDICES_ATTR].value == (2,)


def scale_last(x: torch.Tensor, shape_only: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    y.mul_(2)
    return x + 1


def test_the_reuse_option_names_the_renumbered_input_and_the_run_writes_the_callers() -> None:
    inputs = (torch.randn(3), torch.randn(4), torch.randn(3))
    graph = convert_to_ascend_ir(functional_graph(scale_last, *inputs), name="g").graph
    _, dead, _, reuse, _ = ge_graph_passes(graph)
    assert graph.types == ["Data", "Data", "Const", "Mul", "Cast", "Const", "Add", "NetOutput"]
    assert ge_options(graph)[REUSE_INPUT_OPTION] == "1,1"  # y is Data 1 now, written by output 1
    assert graph.attrs[OPTION_ATTR_PREFIX + REUSE_INPUT_OPTION].value == "1,1"
    assert len(dead.removed) == 1 and "dropped from the GE graph" in dead.notes[0]
    assert reuse.removed == ["Assign"]
    eager = [t.clone() for t in inputs]
    expected = scale_last(*eager)
    ran = [t.clone() for t in inputs]
    outputs = execute_fx_outputs(graph, ran)
    torch.testing.assert_close(outputs[0], expected)
    for got, want in zip(ran, eager):
        torch.testing.assert_close(got, want)
