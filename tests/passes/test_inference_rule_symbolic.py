"""TorchAir's ``_inference_rule`` with symbolic sizes: the op run again on fresh symbols,
output sizes written in GE's rule language."""
from __future__ import annotations

import json

import pytest
import torch

from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.inference_rule import RULE_ATTR
from fxlab.passes.inference_rule_symbolic import ge_expression
from fxlab.passes.pre_ge import pre_ge_graph
from tests.passes.converters.custom_ops import define_test_op
from tests.passes.dynamic_functional import dynamic_functional

PAIR_ROWS = define_test_op(
    "sym_rule_pair_rows(Tensor x, Tensor y) -> Tensor",
    lambda x, y: torch.cat([x, y]).reshape(-1, x.shape[-1] // 2, 2).sum(-1),
    lambda x, y: x.new_empty(x.shape[0] + y.shape[0], x.shape[-1] // 2),
)


@pytest.mark.parametrize(
    "sympy_text, rule",
    [
        ("s0*s1", "s0 * s1"),
        ("s0 + 2", "s0 + 2"),
        ("(s0//2)", "Floor(Div(s0, 2))"),
        ("Mod(s0, 4)", "Mod(s0, 4)"),
        ("s0**2", "Pow(s0, 2)"),
        ("s0/s1", "Div(s0, s1)"),
        ("ceiling(s0/2)", "Ceil(Div(s0, 2))"),
        ("FloorToInt(s0)", "Floor(s0)"),
        ("IntTrueDiv(s0, 3)", "Div(s0, 3)"),
    ],
)
def test_sizes_in_ges_rule_language(sympy_text, rule):
    assert ge_expression(sympy_text) == rule


def test_a_scalar_symbol_is_renamed_as_torchair_renames_it():
    assert ge_expression("s7 + s3", {"s7": "v7"}) == "v7 + s3"


def _rule_of(graph):
    (op,) = graph.ops_of_type("SymRulePairRows")
    value = op.attr_value(RULE_ATTR)
    return None if value is None else json.loads(value)


def test_a_custom_op_on_symbolic_sizes_gets_its_outputs_as_expressions_of_fresh_symbols():
    gm = dynamic_functional(lambda x, y: PAIR_ROWS(x, y) * 2, torch.randn(4, 6), torch.randn(3, 6))
    rule = _rule_of(convert_to_ascend_ir(pre_ge_graph(gm).gm, "g").graph)
    (x_sizes, y_sizes) = rule["shape"]["inputs"]
    (out,) = rule["shape"]["outputs"]
    # Each symbolic size has its own fresh symbol (no two share one, though x and y share
    # their last dim in the graph); the output names the symbols of both inputs.
    assert len({*x_sizes, *y_sizes}) == 4 and all(s.startswith("s") for s in (*x_sizes, *y_sizes))
    assert out == [f"{x_sizes[0]} + {y_sizes[0]}", f"Floor(Div({x_sizes[1]}, 2))"]
    assert rule["dtype"] == [0]  # DT_FLOAT in TorchAir's numbering
    assert json.dumps(rule, indent=2) == convert_to_ascend_ir(pre_ge_graph(gm).gm, "g").graph.ops_of_type("SymRulePairRows")[0].attr_value(RULE_ATTR)


def test_an_input_that_names_no_needed_symbol_is_null():
    gm = dynamic_functional(lambda x, y: PAIR_ROWS(x, y[:1].expand(3, 6)), torch.randn(4, 6), torch.randn(2, 6))
    rule = _rule_of(convert_to_ascend_ir(pre_ge_graph(gm).gm, "g").graph)
    assert rule["shape"]["inputs"][1] is None  # y's rows are static (3): the output needs only x's symbols
    assert rule["shape"]["outputs"][0][0].endswith(" + 3")
