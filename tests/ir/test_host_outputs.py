"""fxlab.ir.host_outputs: the record of where each FX output comes from, and the FX
outputs rebuilt from a GE run as TorchAir does."""
from __future__ import annotations

import pytest
import torch

from fxlab.ir.host_outputs import (
    FX_OUTPUTS_ATTR,
    GE,
    SYM,
    VALUE,
    VIEW,
    VIEW_AS_REAL,
    FxOutput,
    converted_values,
    converter_fx_outputs,
    evaluate,
    fx_outputs_of,
    host_output_notes,
    rebuild_fx_outputs,
    record_fx_outputs,
)
from fxlab.ir.model import IrGraph

MIXED = [
    FxOutput(GE, "mul", ge_index=0),
    FxOutput(VIEW, "t", input_index=0, size=(3, "s0"), stride=(1, 3), offset=0, symbols={"s0": 1}),
    FxOutput(SYM, "mul_1", expr="2*s0", symbols={"s0": 1}),
    FxOutput(VALUE, expr="None"),
    FxOutput(GE, "mul", ge_index=0),
    FxOutput(VIEW, "slice", input_index=0, size=("s0 - 1", 3), stride=(3, 1), offset=3, symbols={"s0": 1}),
]


def _graph_with(outputs: list[FxOutput]) -> IrGraph:
    graph = IrGraph("g")
    record_fx_outputs(graph, outputs)
    return graph


def test_plain_outputs_are_not_recorded():
    graph = IrGraph("g")
    record_fx_outputs(graph, [FxOutput(GE, "a", ge_index=0), FxOutput(GE, "b", ge_index=1)])
    assert FX_OUTPUTS_ATTR not in graph.attrs and fx_outputs_of(graph) is None
    # A dump-and-read graph with the attr left over loses it when the outputs are plain.
    graph = _graph_with(MIXED)
    record_fx_outputs(graph, [FxOutput(GE, ge_index=0)])
    assert FX_OUTPUTS_ATTR not in graph.attrs


def test_the_record_survives_its_json_attr():
    assert fx_outputs_of(_graph_with(MIXED)) == MIXED


def test_rebuilt_outputs_are_the_ge_values_views_of_the_inputs_and_sizes():
    x = torch.arange(15.0).reshape(5, 3)
    s0 = torch.tensor(5)
    product = torch.full((2,), 7.0)
    outputs = rebuild_fx_outputs(_graph_with(MIXED), [x, s0], [product])
    assert outputs[0] is product and outputs[4] is product
    assert torch.equal(outputs[1], x.t()) and outputs[1].data_ptr() == x.data_ptr()  # a view, no copy
    assert outputs[2] == 10
    assert outputs[3] is None
    assert torch.equal(outputs[5], x[1:])


def test_views_changing_the_dtype_kind_use_view_as_real_or_complex():
    z = torch.randn(4, dtype=torch.complex64)
    graph = _graph_with([FxOutput(VIEW, input_index=0, view_fn=VIEW_AS_REAL)])
    (out,) = rebuild_fx_outputs(graph, [z], [])
    assert torch.equal(out, torch.view_as_real(z))


def test_without_a_record_the_ge_outputs_are_the_outputs():
    values = [torch.ones(1), torch.zeros(2)]
    assert rebuild_fx_outputs(IrGraph("g"), [], values) == values


def test_sizes_evaluate_with_torchs_own_sympy_functions():
    assert evaluate("FloorDiv(s0, 2) + Max(s1, 3)", {"s0": 9, "s1": 1}) == 7
    assert evaluate(4, {}) == 4
    with pytest.raises(ValueError, match="s9 has symbols no graph input holds"):
        evaluate("2*s9", {"s0": 1})


def test_notes_say_how_each_host_output_and_returned_twice_output_is_made():
    notes = host_output_notes(_graph_with(MIXED))
    assert notes == [
        "output 1 (t): a view of graph input 0, not a GE output; re-made on the host after the run as torch.as_strided(input 0, [3, s0], [1, 3], 0)",
        "output 2 (mul_1): the symbolic size 2*s0, not a GE output; evaluated on the host from the symbolic inputs",
        "output 3: the value None, not a GE output; returned as it is",
        "output 4 (mul): NetOutput input 0, returned again (TorchAir hands out one GE output for a value returned twice)",
        "output 5 (slice): a view of graph input 0, not a GE output; re-made on the host after the run as torch.as_strided(input 0, [s0 - 1, 3], [3, 1], 3)",
    ]


def test_the_converters_own_values_of_host_outputs_are_kept_apart():
    graph = _graph_with([FxOutput(GE, ge_index=0), FxOutput(VIEW, "t", input_index=0, size=(2,), stride=(1,), ge_value="Transpose:0"),
                         FxOutput(SYM, expr="s0", symbols={"s0": 1}, ge_value="Gone:0")])
    x, s0, made = torch.arange(2.0), torch.tensor(4), torch.zeros(2)
    values = {"Transpose:0": made, "Add:0": torch.ones(1)}
    assert converted_values(graph, values) == {1: made}  # Gone:0 was removed from the graph
    outputs = converter_fx_outputs(graph, [x, s0], [values["Add:0"]], values)
    assert outputs[0] is values["Add:0"] and outputs[1] is made and outputs[2] == 4
