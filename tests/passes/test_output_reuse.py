"""Assign into a graph input -> extra graph output + ge.exec.outputReuseInputMemIndexes,
as TorchAir does; the result still mutates the input like eager."""
from __future__ import annotations

from typing import Any, Callable

import torch

from tests.functional_graphs import functional_graph
from fxlab.ir.builder import GraphBuilder, building
from fxlab.ir.host_outputs import fx_outputs_of
from fxlab.ir import ge
from fxlab.ir.model import DataType, IrGraph
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.output_reuse import (
    OPTION_ATTR_PREFIX,
    REUSE_INPUT_OPTION,
    REUSE_OUTPUT_OPTION,
    execute_fx_outputs,
    ge_options,
    map_assign_to_graph_output,
    parse_reuse_input_option,
)

LIB = torch.library.Library("fxlabtest", "FRAGMENT")
LIB.define("reuse_accumulate(Tensor(a!) x, Tensor y) -> Tensor")


def _accumulate(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x.add_(y)
    return y * 3


LIB.impl("reuse_accumulate", _accumulate, "CPU")
torch.library.register_fake("fxlabtest::reuse_accumulate", lambda x, y: torch.empty_like(y), lib=LIB)


def _graph(fn: Callable[..., Any], *inputs: torch.Tensor) -> IrGraph:
    return convert_to_ascend_ir(functional_graph(fn, *inputs), name="g").graph


def _written(graph: IrGraph) -> dict[int, int]:
    """Graph output index -> the graph input GE writes it into, from the recorded option."""
    return parse_reuse_input_option(ge_options(graph).get(REUSE_INPUT_OPTION, ""))


def _check(fn: Callable[..., Any], graph: IrGraph, outputs: int, *inputs: torch.Tensor) -> None:
    eager = [t.clone() for t in inputs]
    expected = fn(*eager)
    expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    ir = [t.clone() for t in inputs]
    actual = execute_fx_outputs(graph, ir)
    assert len(actual) >= outputs
    for got, want in zip(actual[:outputs], expected):
        torch.testing.assert_close(got, want)
    for got, want in zip(ir, eager):
        torch.testing.assert_close(got, want)


def add_into_input(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x.add_(y)
    return x * y


def test_assign_into_input_becomes_an_extra_output_reusing_its_memory() -> None:
    graph = _graph(add_into_input, torch.randn(2, 3), torch.randn(2, 3))
    (assign,) = graph.ops_of_type("Assign")
    value = assign.inputs[1]
    map_assign_to_graph_output(graph)
    assert "Assign" not in graph.types
    (net_output,) = graph.ops_of_type("NetOutput")
    assert net_output.inputs[-1] == value
    assert [d.name for d in net_output.input_desc][-1] == "input1"
    assert net_output.input_desc[-1].shape == (2, 3)
    assert graph.outputs == net_output.inputs
    assert _written(graph) == {1: 0}
    assert ge_options(graph) == {REUSE_OUTPUT_OPTION: "0", REUSE_INPUT_OPTION: "0,1"}
    assert graph.attrs[OPTION_ATTR_PREFIX + REUSE_INPUT_OPTION].value == "0,1"
    assert graph.attrs["_output_dtypes"].value == (0, 0)  # TorchAir's DT_FLOAT number
    _check(add_into_input, graph, 1, torch.randn(2, 3), torch.randn(2, 3))


def mutate_and_return(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    x.mul_(y)
    return x, y + 1


def test_returned_mutated_input_is_remade_on_the_host_and_the_value_written_back() -> None:
    graph = _graph(mutate_and_return, torch.randn(3), torch.randn(3))
    (assign,) = graph.ops_of_type("Assign")
    # The graph returns the mutated input (copy_'s result): TorchAir re-makes it from the
    # input after the run, so NetOutput carries only y + 1.
    assert graph.outputs == ["Add:0"]
    assert [o.kind for o in fx_outputs_of(graph)] == ["view", "ge"]
    map_assign_to_graph_output(graph)
    assert graph.outputs == ["Add:0", assign.inputs[1]]
    assert _written(graph) == {1: 0}
    assert ge_options(graph) == {REUSE_OUTPUT_OPTION: "0", REUSE_INPUT_OPTION: "0,1"}
    _check(mutate_and_return, graph, 2, torch.randn(3), torch.randn(3))


def custom_inplace(state: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.ops.fxlabtest.reuse_accumulate(state, y)


def test_custom_inplace_op_ref_output_is_written_back_into_the_input() -> None:
    graph = _graph(custom_inplace, torch.randn(4), torch.randn(4))
    map_assign_to_graph_output(graph)
    (net_output,) = graph.ops_of_type("NetOutput")
    assert net_output.inputs == ["ReuseAccumulate:1", "ReuseAccumulate:0"]
    assert _written(graph) == {1: 0}
    _check(custom_inplace, graph, 1, torch.randn(4), torch.randn(4))


def test_assign_into_a_non_input_is_kept_by_a_control_edge() -> None:
    builder = GraphBuilder("g")
    with building(builder):
        (x,) = builder.add_op("Data", (), {"index": 0}, ("y",), dtypes=DataType.DT_FLOAT, shapes=[(2,)], name="x")
        moved = ge.op1("TensorMove", {"x": x}, shapes=[(2,)])
        ge.op("Assign", {"ref": moved, "value": x}, None, ("ref",))
        builder.add_op("NetOutput", {"input0": x}, None, (), name="NetOutput")
    graph = builder.graph
    result = map_assign_to_graph_output(graph)
    assert result.changed and result.changed_nodes == ["NetOutput"] and _written(graph) == {}
    assert graph.types == ["Data", "TensorMove", "Assign", "NetOutput"]
    assert graph.ops_of_type("NetOutput")[0].inputs == ["x:0", "Assign:-1"]
    assert ge_options(graph) == {REUSE_OUTPUT_OPTION: "0"}


def test_option_string_parses_back() -> None:
    assert parse_reuse_input_option("0,2|3,1") == {2: 0, 1: 3}


def copy_and_return_value(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.sigmoid(y)
    x.copy_(z)
    return z


def test_assigned_value_already_an_output_is_reused_without_a_new_output() -> None:
    graph = _graph(copy_and_return_value, torch.randn(3), torch.randn(3))
    (assign,) = graph.ops_of_type("Assign")
    assert graph.outputs == [assign.inputs[1]]
    map_assign_to_graph_output(graph)
    assert graph.outputs == [assign.inputs[1]]
    assert _written(graph) == {0: 0}
    assert ge_options(graph) == {REUSE_INPUT_OPTION: "0,0"}
    _check(copy_and_return_value, graph, 1, torch.randn(3), torch.randn(3))


def copy_one_value_into_two_inputs(x0: torch.Tensor, x1: torch.Tensor) -> None:
    x1.add_(1)
    x0.copy_(x1)


def test_one_value_assigned_into_two_inputs_gets_an_output_for_each() -> None:
    # TorchAir's dict keyed by output kept only the last input: x1 was never written.
    graph = _graph(copy_one_value_into_two_inputs, torch.randn(3), torch.randn(3))
    result = map_assign_to_graph_output(graph)
    (add,) = graph.ops_of_type("Add")
    assert graph.outputs == [f"{add.name}:0", f"{add.name}:0"]
    assert _written(graph) == {0: 0, 1: 1}
    assert ge_options(graph) == {REUSE_INPUT_OPTION: "0,0|1,1"}
    assert result.notes == [f"{add.name}:0 is written into graph inputs 0, 1: one graph output each (TorchAir's own mapping would write only input 1)"]
    _check(copy_one_value_into_two_inputs, graph, 0, torch.randn(3), torch.randn(3))


def copy_input_then_write_it(x2: torch.Tensor, x0: torch.Tensor) -> None:
    x0.copy_(x2)
    x2.add_(1.5)


def test_an_input_copied_into_another_is_read_before_it_is_written() -> None:
    # Found by the property test: x0 got x2's new value, as x2 was written back first.
    graph = _graph(copy_input_then_write_it, torch.randn(3), torch.randn(3))
    map_assign_to_graph_output(graph)
    _check(copy_input_then_write_it, graph, 0, torch.randn(3), torch.randn(3))


def return_a_copy_of_an_input_then_write_it(x0: torch.Tensor) -> tuple[torch.Tensor]:
    v0 = x0 + x0
    v0.copy_(x0)  # converts to the input itself: a Data straight into NetOutput
    x0.add_(1.5)
    return (v0,)


def test_an_input_returned_as_it_is_keeps_its_value_from_before_the_write() -> None:
    # Found by the property test: the returned input read x0 after its write-back.
    graph = _graph(return_a_copy_of_an_input_then_write_it, torch.randn(4, 4))
    map_assign_to_graph_output(graph)
    net_output = next(op for op in graph.ops if op.type == "NetOutput")
    assert net_output.inputs[0] == "arg0_1:0"
    _check(return_a_copy_of_an_input_then_write_it, graph, 1, torch.randn(4, 4))
