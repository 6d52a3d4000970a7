"""The CPU reference executor gives each op its own output memory, as GE does, except an
in-place op's ref output."""
from __future__ import annotations

import torch

from fxlab.capture.stages import functional_graph
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
