"""The further element-wise converters (remainder, bitwise, log2/log10, hard activations): GE ops and numbers."""
from __future__ import annotations

from typing import Any, Callable

import pytest
import torch

from tests.passes.converters.lowering import lower, types






def test_bitwise_and_of_bools_is_logical_and() -> None:
    assert types(lower(torch.bitwise_and, torch.rand(4) > 0.5, torch.rand(4) > 0.5)) == ["LogicalAnd"]


def test_bitwise_and_of_mixed_ints_casts_then_bitwise_ands() -> None:
    graph = lower(torch.bitwise_and, torch.randint(0, 64, (4,), dtype=torch.int32), torch.randint(0, 64, (4,)))
    assert types(graph) == ["Cast", "BitwiseAnd"]


def test_remainder_of_same_dtypes_needs_no_cast() -> None:
    assert types(lower(torch.remainder, torch.randn(5) * 5, torch.rand(5) + 0.5)) == ["FloorMod"]


@pytest.mark.parametrize("fn,base", [(torch.log2, 2.0), (torch.log10, 10.0)])
def test_log2_and_log10_are_log_with_a_base(fn: Callable[..., Any], base: float) -> None:
    graph = lower(fn, torch.rand(5) + 0.1)
    assert types(graph) == ["Log"]
    assert graph.ops_of_type("Log")[0].attr_value("base") == base


def test_hardtanh_with_empty_range_fills_with_max() -> None:
    graph = lower(lambda a: torch.nn.functional.hardtanh(a, 1.0, 1.0), torch.randn(2, 3))
    assert types(graph) == ["Shape", "Const", "Cast", "Fill"]


def test_hardtanh_clips() -> None:
    graph = lower(lambda a: torch.nn.functional.hardtanh(a, -0.5, 0.5), torch.randn(2, 3))
    assert types(graph) == ["Const", "Const", "ClipByValueV2"]


def test_hardsigmoid_uses_its_prototype_names_and_defaults() -> None:
    graph = lower(torch.nn.functional.hardsigmoid, torch.randn(3, 4) * 4)
    op = graph.ops_of_type("HardSigmoid")[0]
    assert [op.input_desc[0].name, op.output_desc[0].name] == ["input_x", "output_y"]
    assert (op.attr_value("alpha"), op.attr_value("beta")) == (0.16666666, 0.5)


def test_leaky_relu_and_elu_attrs_are_floats() -> None:
    graph = lower(lambda a: torch.nn.functional.elu(torch.nn.functional.leaky_relu(a, 0.2), alpha=0.5), torch.randn(3, 4))
    assert types(graph) == ["LeakyRelu", "Elu"]
    assert graph.ops_of_type("LeakyRelu")[0].attr_value("negative_slope") == 0.2
    assert graph.ops_of_type("Elu")[0].attr_value("alpha") == 0.5
