"""Comparison and logical converters: each of TorchAir's operand typing rules, on CPU."""
from __future__ import annotations


import pytest
import torch

from tests.functional_graphs import functional_graph
from fxlab.ir.model import DataType, TORCHAIR_DTYPE_NUMBER
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from tests.passes.converters.lowering import lower, types, cast_targets






from fxlab.passes.conversion_result import UNSUPPORTED_OP_TYPE  # noqa: E402

F32 = TORCHAIR_DTYPE_NUMBER[DataType.DT_FLOAT]
F16 = TORCHAIR_DTYPE_NUMBER[DataType.DT_FLOAT16]


def test_comparison_outputs_are_bool() -> None:
    graph = lower(lambda a, b: a < b, torch.randn(4), torch.randn(4))
    assert types(graph) == ["Less"]
    assert graph.ops_of_type("Less")[0].output_desc[0].dtype == DataType.DT_BOOL


def test_eq_tensor_of_mixed_dtypes_is_refused_as_torchair_does() -> None:
    gm = functional_graph(lambda a, b: a == b, torch.randn(4), torch.randn(4).half())
    result = convert_to_ascend_ir(gm, "g")
    placeholder = result.graph.ops_of_type(UNSUPPORTED_OP_TYPE)[0]
    assert result.partial and "different dtypes" in placeholder.attr_value("_fxlab_reason")


def test_gt_of_bools_compares_as_floats() -> None:
    graph = lower(lambda a, b: a > b, torch.rand(5) > 0.5, torch.rand(5) > 0.5)
    assert types(graph) == ["Cast", "Cast", "Greater"]
    assert cast_targets(graph) == [F32, F32]


def test_ne_scalar_promotes_to_the_result_type() -> None:
    graph = lower(lambda a: a != 1.5, torch.randint(0, 3, (5,)))
    assert types(graph) == ["Cast", "Const", "NotEqual"]
    assert graph.ops_of_type("Const")[0].output_desc[0].dtype == DataType.DT_FLOAT


def test_lt_scalar_casts_a_default_typed_const_to_self() -> None:
    graph = lower(lambda a: a < 1, torch.randn(5))
    assert types(graph) == ["Const", "Cast", "Less"]
    assert graph.ops_of_type("Const")[0].output_desc[0].dtype == DataType.DT_INT64
    assert cast_targets(graph) == [F32]


def test_le_scalar_on_half_compares_in_float32() -> None:
    graph = lower(lambda a: a <= 0.5, torch.randn(5).half())
    assert types(graph) == ["Cast", "Const", "LessEqual"]
    assert cast_targets(graph) == [F32]


def test_ge_scalar_types_the_scalar_like_self() -> None:
    graph = lower(lambda a: a >= 0.5, torch.randn(5).half())
    assert types(graph) == ["Const", "GreaterEqual"]
    assert graph.ops_of_type("Const")[0].output_desc[0].dtype == DataType.DT_FLOAT16


def test_logical_not_of_floats_goes_through_bool() -> None:
    graph = lower(torch.logical_not, torch.randn(4))
    assert types(graph) == ["Cast", "LogicalNot"]


@pytest.mark.parametrize("x,op_type", [(torch.rand(4) > 0.5, "LogicalNot"), (torch.randint(-9, 9, (4,)), "Invert")])
def test_bitwise_not(x: torch.Tensor, op_type: str) -> None:
    assert types(lower(torch.bitwise_not, x)) == [op_type]


def test_logical_and_of_mixed_inputs_casts_both_to_bool() -> None:
    graph = lower(torch.logical_and, torch.randint(0, 2, (4,)), torch.randn(4))
    assert types(graph) == ["Cast", "Cast", "LogicalAnd"]
