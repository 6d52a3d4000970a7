"""Reduction converters: axes as int64 Consts, TorchAir's op choices, numbers on CPU."""
from __future__ import annotations

from tests.functional_graphs import functional_graph
from fxlab.ir.execute import execute
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir

from typing import Any, Callable

import pytest
import torch

from tests.functional_graphs import functional_graph
from fxlab.ir.model import DataType, IrGraph
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from tests.passes.converters.lowering import lower, types






from fxlab.passes.conversion_result import UNSUPPORTED_OP_TYPE, Status  # noqa: E402


def axes_of(graph: IrGraph, op_type: str) -> str:
    op = graph.ops_of_type(op_type)[0]
    const = graph.op_by_name()[op.inputs[1].split(":")[0]]
    assert const.type == "Const" and const.output_desc[0].dtype == DataType.DT_INT64
    return const.attr_value("_readable_value")


def test_mean_over_last_dim_keeps_dims() -> None:
    graph = lower(lambda a: a.mean(-1, keepdim=True), torch.randn(2, 3, 4))
    assert types(graph) == ["Const", "ReduceMean"]
    assert axes_of(graph, "ReduceMean") == "[-1]"
    op = graph.ops_of_type("ReduceMean")[0]
    assert op.attr_value("keep_dims") is True and op.attr_value("noop_with_empty_axes") is True


def test_mean_with_dtype_is_reduce_mean_with_cast() -> None:
    graph = lower(lambda a: a.mean(1, dtype=torch.float64), torch.randn(3, 4))
    assert types(graph) == ["Const", "ReduceMeanWithCast"]
    assert graph.ops_of_type("ReduceMeanWithCast")[0].attr_value("dtype") == DataType.DT_DOUBLE


def test_sum_of_whole_tensor_always_casts_first() -> None:
    graph = lower(torch.sum, torch.randn(3, 4))
    assert types(graph) == ["Cast", "Const", "ReduceSum"]
    assert axes_of(graph, "ReduceSum") == "[0, 1]"


def test_sum_over_dims_of_ints() -> None:
    graph = lower(lambda a: a.sum(dim=(0, 2)), torch.randint(0, 5, (2, 3, 4)))
    assert types(graph) == ["Const", "ReduceSum"]
    assert axes_of(graph, "ReduceSum") == "[0, 2]"


def test_max_dim_is_arg_max_with_value_and_an_int64_cast() -> None:
    graph = lower(lambda a: a.max(dim=1), torch.randn(3, 4))
    assert types(graph) == ["ArgMaxWithValue", "Cast"]
    op = graph.ops_of_type("ArgMaxWithValue")[0]
    assert [d.name for d in op.output_desc] == ["indice", "values"]
    assert graph.outputs == [f"{op.name}:1", "Cast:0"]


def test_argmax_of_whole_tensor_flattens_first() -> None:
    graph = lower(torch.argmax, torch.randn(3, 4))
    assert types(graph) == ["Const", "Reshape", "Const", "ArgMaxV2"]
    assert graph.ops_of_type("Const")[0].attr_value("_readable_value") == "(-1,)"


def test_argmin_keepdim_uses_the_with_value_op() -> None:
    graph = lower(lambda a: a.argmin(1, keepdim=True), torch.randn(3, 4))
    assert types(graph) == ["ArgMinWithValue", "Cast"]


def test_std_subtracts_a_broadcast_mean() -> None:
    graph = lower(lambda a: a.std(dim=1), torch.randn(3, 4, 5))
    # TorchAir first builds the output shape to check the element count (2 dims kept).
    count_check = ["Shape"] + ["Const", "Gather"] * 3 + ["Pack"]
    assert types(graph) == count_check + ["Const", "ReduceMean", "Unsqueeze", "Shape", "Expand", "ReduceStdWithMean"]
    std = graph.ops_of_type("ReduceStdWithMean")[0]
    assert (std.attr_value("dim"), std.attr_value("correction"), std.attr_value("keepdim")) == ((1,), 1, False)


def test_std_of_too_few_elements_is_a_fill_of_nan_or_inf() -> None:
    x = torch.randn(3, 1)
    nan = convert_to_ascend_ir(functional_graph(lambda a: a.std(dim=1), x), "g").graph
    torch.testing.assert_close(execute(nan, [x])[0], x.std(dim=1), equal_nan=True)
    assert types(nan)[-4:] == ["Pack", "Const", "Cast", "Fill"] and "ReduceStdWithMean" not in types(nan)
    inf = lower(lambda a: a.std(dim=1, correction=5), torch.randn(2, 3))
    assert types(inf)[-3:] == ["Const", "Cast", "Fill"] and inf.ops_of_type("Const")[-1].attr_value("_readable_value") == "inf"


def test_any_of_a_scalar_unsqueezes_it() -> None:
    graph = lower(torch.any, torch.tensor(1.0))
    assert types(graph) == ["Cast", "Unsqueeze", "Const", "ReduceAny"]


def test_cumsum_axis_is_an_int64_const() -> None:
    graph = lower(lambda a: a.cumsum(1), torch.randn(3, 4))
    assert types(graph) == ["Const", "Cumsum"]


@pytest.mark.parametrize("fn", [lambda a: a.amax(1), lambda a: a.prod(1), lambda a: a.var(1)])
def test_reductions_torchair_cannot_convert_stay_unsupported(fn: Callable[..., Any]) -> None:
    result = convert_to_ascend_ir(functional_graph(fn, torch.randn(3, 4)), "g")
    assert result.partial
    assert [r.status for r in result.nodes if r.status == Status.REFUSED] == [Status.REFUSED]
    assert len(result.graph.ops_of_type(UNSUPPORTED_OP_TYPE)) == 1


def test_topk_takes_k_as_a_const_input_and_casts_indices() -> None:
    graph = lower(lambda a: torch.topk(a, 3), torch.randn(4, 8))
    assert types(graph) == ["Const", "TopKV2", "Cast"]
    op = graph.ops_of_type("TopKV2")[0]
    assert [d.name for d in op.input_desc] == ["x", "k"] and [d.name for d in op.output_desc] == ["values", "indices"]
    assert graph.ops_of_type("Const")[0].attr_value("_readable_value") == "3"


def test_sort_along_a_middle_dim_transposes_around_sort() -> None:
    graph = lower(lambda a: torch.sort(a, dim=0, descending=True), torch.randn(3, 6))
    assert types(graph) == ["Const", "Transpose", "Sort", "Transpose", "Transpose", "Cast"]
    assert graph.ops_of_type("Sort")[0].attr_value("axis") == 1
