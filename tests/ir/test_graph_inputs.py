from __future__ import annotations

from fxlab.ir.graph_inputs import INPUT_INDICES_ATTR, graph_input_index, record_input_indices
from fxlab.ir.model import IrGraph


def test_without_a_record_each_data_index_is_the_graph_input() -> None:
    graph = IrGraph("g")
    assert graph_input_index(graph, 2) == 2


def test_a_record_maps_each_data_index_to_the_callers_input() -> None:
    graph = IrGraph("g")
    record_input_indices(graph, [0, 2])
    assert graph.attrs[INPUT_INDICES_ATTR].value == (0, 2)
    assert [graph_input_index(graph, i) for i in (0, 1)] == [0, 2]
