"""Element-wise arithmetic converters: the GE ops TorchAir builds (types, order, Casts and
Consts) for real functional graphs, and the numbers they compute on CPU."""
from __future__ import annotations


import pytest
import torch

from fxlab.ir.builder import GraphBuilder, building
from fxlab.ir.execute import ExecutionError, execute
from fxlab.ir.model import DataType, TORCHAIR_DTYPE_NUMBER
from fxlab.ir import ge
from tests.passes.converters.lowering import lower, body, types, cast_targets






F32, F16 = TORCHAIR_DTYPE_NUMBER[DataType.DT_FLOAT], TORCHAIR_DTYPE_NUMBER[DataType.DT_FLOAT16]


def test_add_alpha_becomes_axpy_with_promoted_operands() -> None:
    x, y = torch.randn(2, 3), torch.randn(2, 3).half()
    graph = lower(lambda a, b: torch.add(a, b, alpha=2), x, y)
    assert types(graph) == ["Cast", "Const", "AxpyV2"]
    cast, alpha, axpy = body(graph)
    assert cast.inputs == ["arg1_1:0"] and cast.attr_value("dst_type") == F32
    assert alpha.attr_value("_readable_value") == "2" and alpha.output_desc[0].dtype == DataType.DT_FLOAT
    assert axpy.inputs == ["arg0_1:0", f"{cast.name}:0", f"{alpha.name}:0"]
    assert [d.name for d in axpy.input_desc] == ["x1", "x2", "alpha"]


def test_add_of_int_and_float_casts_the_int_side_only() -> None:
    graph = lower(lambda a, b: a + b, torch.randint(0, 5, (4,)), torch.randn(4))
    assert types(graph) == ["Cast", "Add"]
    assert graph.ops_of_type("Add")[0].inputs == ["Cast:0", "arg1_1:0"]


def test_scalar_operand_is_a_const_of_the_output_dtype() -> None:
    graph = lower(lambda a: a + 1.5, torch.randn(3).half())
    const = graph.ops_of_type("Const")[0]
    assert types(graph) == ["Const", "Add"]
    assert const.output_desc[0].dtype == DataType.DT_FLOAT16 and const.attr_value("_readable_value") == "1.5"


def test_mul_always_ends_in_a_cast_as_in_torchair() -> None:
    # TorchAir does not know the dtype of an op it just created, so it casts Mul's result.
    graph = lower(lambda a, b: a * b, torch.randn(2, 3), torch.randn(2, 3))
    assert types(graph) == ["Mul", "Cast"]
    assert cast_targets(graph) == [F32]


def test_mul_of_half_by_python_scalar_is_muls() -> None:
    graph = lower(lambda a: a * 0.5, torch.randn(2, 3).half())
    assert types(graph) == ["Muls", "Cast"]
    assert graph.ops_of_type("Muls")[0].attr_value("value") == 0.5
    assert cast_targets(graph) == [F16]


def test_mul_of_bools_computes_in_uint8() -> None:
    graph = lower(lambda a, b: a * b, torch.rand(5) > 0.5, torch.rand(5) > 0.5)
    assert types(graph) == ["Cast", "Cast", "Mul", "Cast"]
    assert cast_targets(graph) == [4, 4, 12]  # TorchAir numbers: uint8, uint8, bool


def test_sub_alpha_scales_other_then_casts_the_product() -> None:
    graph = lower(lambda a, b: torch.sub(a, b, alpha=3), torch.randn(4), torch.randn(4))
    assert types(graph) == ["Const", "Mul", "Cast", "Sub"]
    assert graph.ops_of_type("Sub")[0].inputs == ["arg0_1:0", "Cast:0"]


def test_python_scalar_minus_tensor_is_sxpy() -> None:
    graph = lower(lambda a: 1 - a, torch.randn(4))
    assert types(graph) == ["Const", "Const", "Sxpy"]
    sxpy = graph.ops_of_type("Sxpy")[0]
    assert sxpy.inputs == ["Const:0", "arg0_1:0", "Const_1:0"]


@pytest.mark.parametrize("mode,op_type", [("floor", "FloorDiv"), ("trunc", "TruncateDiv"), (None, "RealDiv")])
def test_div_rounding_modes(mode: str | None, op_type: str) -> None:
    graph = lower(lambda a, b: torch.div(a, b, rounding_mode=mode), torch.randn(6) * 5, torch.rand(6) + 0.5)
    assert types(graph) == [op_type]


def test_integer_true_division_casts_both_sides_to_float() -> None:
    graph = lower(lambda a, b: a / b, torch.randint(-9, 9, (5,)), torch.randint(1, 4, (5,)))
    assert types(graph) == ["Cast", "Cast", "RealDiv"]


def test_clamp_with_one_bound_fills_the_other_with_infinity() -> None:
    graph = lower(lambda a: a.clamp(min=-1), torch.randn(3, 4))
    assert types(graph) == ["Const", "Const", "ClipByValueV2"]
    low, high = graph.ops_of_type("Const")
    assert (low.attr_value("_readable_value"), high.attr_value("_readable_value")) == ("-1", "inf")


def test_integer_clamp_uses_the_integer_range() -> None:
    graph = lower(lambda a: a.clamp(max=3), torch.randint(-9, 9, (6,)))
    assert graph.ops_of_type("Const")[0].attr_value("_readable_value") == str(torch.iinfo(torch.int64).min)


def test_where_promotes_mixed_branches() -> None:
    graph = lower(lambda c, a, b: torch.where(c, a, b), torch.rand(3) > 0.5, torch.randn(3), torch.randn(3).half())
    assert types(graph) == ["Cast", "SelectV2"]
    select = graph.ops_of_type("SelectV2")[0]
    assert [d.name for d in select.input_desc] == ["condition", "then", "else"]
    assert select.output_desc[0].name == "result"


def test_minimum_of_uint8_goes_through_int32() -> None:
    a, b = (torch.randint(0, 200, (5,), dtype=torch.uint8) for _ in range(2))
    graph = lower(torch.minimum, a, b)
    assert types(graph) == ["Cast", "Cast", "Minimum", "Cast"]
    assert cast_targets(graph) == [3, 3, 4]  # int32, int32, uint8


def test_masked_fill_value_is_a_const_of_the_output_dtype() -> None:
    graph = lower(lambda a, m: a.masked_fill(m, -1e4), torch.randn(2, 3).half(), torch.rand(2, 3) > 0.5)
    assert types(graph) == ["Const", "MaskedFill"]
    assert graph.ops_of_type("Const")[0].output_desc[0].dtype == DataType.DT_FLOAT16


def test_pow_of_tensor_by_scalar() -> None:
    graph = lower(lambda a: a.pow(2), torch.randn(2, 3))
    assert types(graph) == ["Const", "Pow"]


def test_reference_kernels_refuse_mixed_dtypes_a_missing_cast_would_give() -> None:
    builder = GraphBuilder("bad")
    with building(builder):
        x = builder.add_op("Data", (), {"index": 0}, dtypes=DataType.DT_FLOAT)[0]
        y = builder.add_op("Data", (), {"index": 1}, dtypes=DataType.DT_FLOAT16)[0]
        out = ge.op1("Add", {"x1": x, "x2": y})
        builder.add_op("NetOutput", {"x0": out}, outputs=())
    with pytest.raises(ExecutionError, match="a Cast is missing"):
        execute(builder.graph, [torch.randn(2), torch.randn(2).half()])
