"""Unary math and activation converters: GE ops as TorchAir builds them, numbers on CPU."""
from __future__ import annotations

from typing import Any, Callable

import pytest
import torch

from tests.functional_graphs import functional_graph
from fxlab.ir.execute import execute
from fxlab.ir.model import DataType, TORCHAIR_DTYPE_NUMBER
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from tests.passes.converters.lowering import lower, body, types, cast_targets






def test_silu_is_swish_with_unit_scale() -> None:
    graph = lower(torch.nn.functional.silu, torch.randn(2, 3))
    assert types(graph) == ["Swish"]
    assert graph.ops_of_type("Swish")[0].attr_value("scale") == 1.0


@pytest.mark.parametrize(
    "fn,op_type",
    [(torch.sigmoid, "Sigmoid"), (torch.tanh, "Tanh"), (torch.sin, "Sin"), (torch.cos, "Cos"), (torch.erf, "Erf"), (torch.relu, "Relu"), (torch.neg, "Neg"), (torch.sign, "Sign")],
)
def test_one_op_activations(fn: Callable[..., Any], op_type: str) -> None:
    assert types(lower(fn, torch.randn(3, 4))) == [op_type]


def test_exact_gelu_becomes_ges_tanh_approximated_gelu() -> None:
    x = torch.linspace(-4, 4, 101)
    graph = convert_to_ascend_ir(functional_graph(torch.nn.functional.gelu, x), "g").graph
    assert types(graph) == ["Gelu"]
    (got,) = execute(graph, [x])
    torch.testing.assert_close(got, torch.nn.functional.gelu(x, approximate="tanh"))
    gap = (got - torch.nn.functional.gelu(x)).abs().max().item()
    assert 1e-5 < gap < 1e-3  # the documented difference from eager's exact gelu


def test_exp_and_log_carry_their_prototype_attrs() -> None:
    graph = lower(lambda a: torch.log(torch.exp(a)), torch.randn(3))
    assert types(graph) == ["Exp", "Log"]
    for op in body(graph):
        assert {k: op.attr_value(k) for k in ("base", "scale", "shift")} == {"base": -1.0, "scale": 1.0, "shift": 0.0}


def test_exp_of_bool_casts_to_the_output_dtype_first() -> None:
    graph = lower(torch.exp, torch.rand(4) > 0.5)
    assert types(graph) == ["Cast", "Exp"]
    assert cast_targets(graph) == [TORCHAIR_DTYPE_NUMBER[DataType.DT_FLOAT]]


def test_abs_of_uint8_is_the_input_itself() -> None:
    graph = lower(torch.abs, torch.randint(0, 200, (5,), dtype=torch.uint8))
    assert types(graph) == []
    assert graph.outputs == ["arg0_1:0"]


@pytest.mark.parametrize("fn,op_type", [(torch.floor, "Floor"), (torch.ceil, "Ceil")])
def test_floor_and_ceil_always_cast_their_result(fn: Callable[..., Any], op_type: str) -> None:
    graph = lower(fn, torch.randn(3, 4) * 5)
    assert types(graph) == [op_type, "Cast"]


def test_integer_reciprocal_and_sqrt_compute_in_float() -> None:
    assert types(lower(torch.reciprocal, torch.randint(1, 9, (5,)))) == ["Cast", "Reciprocal"]
    assert types(lower(torch.sqrt, torch.randint(0, 50, (5,)))) == ["Cast", "Sqrt"]


def test_round_is_half_to_even_like_eager() -> None:
    graph = lower(torch.round, torch.tensor([0.5, 1.5, 2.5, -0.5, -2.5]))
    assert types(graph) == ["Round"]
