"""Cast, copy and creation converters: GE ops as TorchAir builds them, numbers on CPU."""
from __future__ import annotations


import torch

from fxlab.ir.model import DataType, TORCHAIR_DTYPE_NUMBER
from tests.passes.converters.lowering import lower, types, cast_targets






F16 = TORCHAIR_DTYPE_NUMBER[DataType.DT_FLOAT16]
I32 = TORCHAIR_DTYPE_NUMBER[DataType.DT_INT32]


def test_to_dtype_is_a_cast_with_torchair_dtype_number() -> None:
    graph = lower(lambda a: a.to(torch.float16), torch.randn(2, 3))
    assert types(graph) == ["Cast"]
    assert cast_targets(graph) == [F16]


def test_copy_without_dtype_change_is_tensor_move() -> None:
    graph = lower(lambda a: a.to(torch.float32, copy=True), torch.randn(2, 3))
    assert types(graph) == ["TensorMove"]


def test_clone_is_identity() -> None:
    assert types(lower(lambda a: a.clone() + 1, torch.randn(3))) == ["Identity", "Const", "Add"]


def test_zeros_with_dtype_casts_a_float_zero() -> None:
    graph = lower(lambda a: a + torch.zeros(3, dtype=torch.float16), torch.randn(3).half())
    assert types(graph)[:4] == ["Const", "Cast", "Const", "Fill"]
    fill = graph.ops_of_type("Fill")[0]
    assert fill.inputs == ["Const_1:0", "Cast:0"]
    assert graph.op_by_name()["Const_1"].attr_value("_readable_value") == "[3]"


def test_ones_fills_a_const_one() -> None:
    graph = lower(lambda a: a * torch.ones(2, 3), torch.randn(2, 3))
    assert types(graph)[:3] == ["Const", "Const", "Fill"]
    assert graph.op_by_name()["Const"].attr_value("_readable_value") == "1"


def test_arange_is_range_then_cast() -> None:
    graph = lower(lambda a: a + torch.arange(4), torch.randn(4))
    assert types(graph)[:5] == ["Const", "Const", "Const", "Range", "Cast"]
    rng = graph.ops_of_type("Range")[0]
    assert rng.inputs == ["Const:0", "Const_2:0", "Const_1:0"]  # start, limit, delta


def test_full_like_with_dtype_keeps_torchairs_unused_cast() -> None:
    graph = lower(lambda a: torch.full_like(a, 7, dtype=torch.int32), torch.randn(2, 3))
    assert types(graph) == ["Shape", "Cast", "Const", "Cast", "Fill"]
    assert cast_targets(graph) == [I32, I32]
    fill = graph.ops_of_type("Fill")[0]
    assert fill.inputs == ["Shape:0", "Cast_1:0"]


def test_full_of_a_scalar_shape_is_the_const_itself() -> None:
    graph = lower(lambda a: a + torch.full((), 2.0), torch.randn(3))
    assert types(graph) == ["Const", "Add"]


def test_zeros_like_and_ones_like() -> None:
    assert types(lower(torch.zeros_like, torch.randn(3))) == ["ZerosLike"]
    assert types(lower(lambda a: torch.ones_like(a, dtype=torch.int32), torch.randn(3))) == ["Cast", "OnesLike"]
