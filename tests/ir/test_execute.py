"""The CPU reference executor gives each op its own output memory, as GE does, except an
in-place op's ref output."""
from __future__ import annotations

import torch

from tests.functional_graphs import functional_graph
from fxlab.ir.execute import execute
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.output_reuse import execute_with_output_reuse, map_assign_to_graph_output


def clone_then_mutate_the_input(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    x.add_(1)
    return y


def test_clone_of_an_input_is_not_overwritten_by_the_input_write_back():
    # Identity's kernel returned its input itself; the write into x then changed y.
    x = torch.arange(4.0)
    graph = convert_to_ascend_ir(functional_graph(clone_then_mutate_the_input, x.clone()), name="g").graph
    map_assign_to_graph_output(graph)
    inputs = [x.clone()]
    outputs = execute_with_output_reuse(graph, inputs)
    assert torch.equal(outputs[0], torch.arange(4.0))
    assert torch.equal(inputs[0], torch.arange(4.0) + 1)


def test_ref_output_of_assign_is_the_input_memory():
    def assign_into_input(x: torch.Tensor, y: torch.Tensor) -> None:
        x.copy_(y * 2)

    graph = convert_to_ascend_ir(functional_graph(assign_into_input, torch.zeros(3), torch.ones(3)), name="g").graph
    assert "Assign" in graph.types
    x = torch.zeros(3)
    execute(graph, [x, torch.ones(3)])
    assert torch.equal(x, torch.full((3,), 2.0)), "Assign writes the caller's tensor, as GE writes the input memory"


def test_values_of_ops_nothing_reads_are_kept_and_converted_outputs_use_them():
    from tests.ir.executing import execute_converted

    x = torch.arange(6.0).reshape(2, 3)
    graph = convert_to_ascend_ir(functional_graph(lambda x: (x.t(), x + x), x), name="g").graph
    values: dict = {}
    outputs = execute(graph, [x], values)
    assert len(outputs) == 1 and torch.equal(outputs[0], x + x)  # x.t() is made on the host
    (transpose,) = graph.ops_of_type("Transpose")
    assert torch.equal(values[f"{transpose.name}:0"], x.t())  # the Transpose still ran
    converted = execute_converted(graph, [x])
    assert torch.equal(converted[0], x.t()) and converted[0].data_ptr() != x.data_ptr()  # GE's own buffer
    assert torch.equal(converted[1], x + x)
