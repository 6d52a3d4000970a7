"""_foreach_* converters: one Foreach op over the list."""
from __future__ import annotations

import json

import torch

from tests.passes.converters.lowering import lower, types


def test_add_scalar_is_one_op_with_a_const_of_the_first_dtype():
    graph = lower(lambda a, b: tuple(torch._foreach_add([a, b], 1.5)), torch.randn(3), torch.randn(2))
    assert types(graph) == ["Const", "ForeachAddScalar"]
    op = graph.ops_of_type("ForeachAddScalar")[0]
    assert [d.name for d in op.output_desc] == ["y0", "y1"] and len(op.inputs) == 3


def test_floor_is_round_off_number_with_mode_two():
    graph = lower(lambda a, b: tuple(torch._foreach_floor([a, b])), torch.randn(3) * 3, torch.randn(2) * 3)
    assert types(graph) == ["Const", "Cast", "Const", "Fill", "ForeachRoundOffNumber"]
    assert graph.ops_of_type("Const")[0].attr_value("_readable_value") == "2"


def test_acos_keeps_torchair_op_type_and_inference_rule():
    graph = lower(lambda a, b: tuple(torch._foreach_acos([a, b])), torch.rand(2, 3) * 0.9, torch.rand(4) * 0.9)
    op = graph.ops_of_type("ForeachAcos")[0]
    assert json.loads(op.attr_value("_inference_rule")) == {"shape": {"inputs": [None, None], "outputs": [["2", "3"], ["4"]]}, "dtype": [0, 0]}
