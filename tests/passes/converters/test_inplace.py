"""In-place conversion: auto_functionalized_v2 (whole base, slice and strided views),
copy_ -> Assign, and the scatter ops; op sequences as TorchAir builds them and numbers
(graph outputs and graph-input mutations) against eager."""
from __future__ import annotations

from typing import Any, Callable

import pytest
import torch

from tests.functional_graphs import functional_graph
from fxlab.ir.execute import execute
from fxlab.ir.model import DataType, IrGraph, IrOp
from fxlab.passes.conversion_result import UNSUPPORTED_OP_TYPE, ConversionResult, Status
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from tests.passes.converters.custom_ops import define_test_op as _define


def _my_inplace(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x.add_(y)
    return x * 2 + y


def _scale(x: torch.Tensor, s: float) -> None:
    x.mul_(s)


def _add_scalar(x: torch.Tensor, s: Any) -> None:
    x.add_(s)


def _nothing(*args: Any) -> None:
    return None


MY_INPLACE = _define("my_inplace(Tensor(a!) x, Tensor y) -> Tensor z", _my_inplace, lambda x, y: torch.empty_like(y))
SCALE = _define("inplace_scale(Tensor(a!) x, float s) -> ()", _scale, _nothing)
SCALAR_ARG = _define("scalar_arg(Tensor(a!) x, Scalar s) -> ()", _add_scalar, _nothing)


def _convert(fn: Callable[..., Any], *inputs: torch.Tensor) -> ConversionResult:
    return convert_to_ascend_ir(functional_graph(fn, *inputs), name="g")


def _check_against_eager(fn: Callable[..., Any], graph: IrGraph, *inputs: torch.Tensor) -> None:
    eager_inputs = [t.clone() for t in inputs]
    expected = fn(*eager_inputs)
    expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    ir_inputs = [t.clone() for t in inputs]
    actual = execute(graph, ir_inputs)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        torch.testing.assert_close(got, want)
    for got, want in zip(ir_inputs, eager_inputs):
        torch.testing.assert_close(got, want)  # graph-input mutations too


def _op(graph: IrGraph, name: str) -> IrOp:
    return graph.op_by_name()[name]


def _const_value(graph: IrGraph, tensor: str) -> list[int] | int:
    return _op(graph, tensor.split(":")[0]).attr_value("value").to_torch().tolist()


def whole_base(state: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.ops.fxlabtest.my_inplace(state, y) + 1


def test_whole_base_is_tensormove_then_inplace_op_and_ref_output() -> None:
    result = _convert(whole_base, torch.randn(4, 3), torch.randn(4, 3))
    graph = result.graph
    assert graph.types == ["Data", "Data", "TensorMove", "MyInplace", "Const", "Add", "Assign", "NetOutput"]
    assert _op(graph, "TensorMove").inputs == ["arg0_1:0"]
    inplace = _op(graph, "MyInplace")
    assert inplace.inputs == ["TensorMove:0", "arg1_1:0"]
    assert [d.name for d in inplace.input_desc] == ["x", "y"]
    assert [d.name for d in inplace.output_desc] == ["x", "z"]
    assert _op(graph, "Add").inputs[0] == "MyInplace:1"  # the op's own output z
    assert _op(graph, "Assign").inputs == ["arg0_1:0", "MyInplace:0"]  # the ref output x
    statuses = {r.node: r.status for r in result.nodes}
    assert statuses["auto_functionalized_v2"] is Status.CONVERTED
    _check_against_eager(whole_base, graph, torch.randn(4, 3), torch.randn(4, 3))


def sliced_base(state: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    z = torch.ops.fxlabtest.my_inplace(state[1:3], y)
    return z, state * 3


def test_mutated_slice_is_as_strided_then_view_copy_after_the_op() -> None:
    graph = _convert(sliced_base, torch.randn(4, 3), torch.randn(2, 3)).graph
    core = [t for t in graph.types if t != "Const"]
    assert core[:6] == ["Data", "Data", "TensorMove", "AsStrided", "MyInplace", "ViewCopy"]
    assert core[-2:] == ["Assign", "NetOutput"]
    as_strided = _op(graph, "AsStrided")
    assert as_strided.inputs[0] == "TensorMove:0"
    assert [_const_value(graph, t) for t in as_strided.inputs[1:]] == [[2, 3], [3, 1], 3]
    assert _op(graph, "MyInplace").inputs[0] == "AsStrided:0"
    view_copy = _op(graph, "ViewCopy")
    assert view_copy.control_inputs == ["MyInplace:-1"]
    data = view_copy.data_inputs
    assert data[0] == "TensorMove:0" and data[4] == "AsStrided:0"
    assert data[3] == as_strided.inputs[3]  # TorchAir reuses the storage-offset Const
    assert [_const_value(graph, t) for t in data[1:3] + data[5:]] == [[2, 3], [3, 1], [2, 3], [3, 1], 0]
    assert _op(graph, "Assign").inputs == ["arg0_1:0", "ViewCopy:0"]
    _check_against_eager(sliced_base, graph, torch.randn(4, 3), torch.randn(2, 3))


def test_moved_base_and_its_view_keep_the_bases_dtype_other_helpers_are_unset() -> None:
    # TorchAir sets the meta of the moved bases and of the AsStrided views itself, and the
    # node's results (z and the updated base, the ViewCopy) get theirs; the op's ref output
    # (not a result: the ViewCopy is) is left unset, DT_FLOAT once normalized.
    state, y = torch.arange(12, dtype=torch.int64).reshape(4, 3), torch.ones(2, 3, dtype=torch.int64)
    graph = _convert(sliced_base, state, y).graph
    assert _op(graph, "TensorMove").output_desc[0].dtype is DataType.DT_INT64
    assert _op(graph, "AsStrided").output_desc[0].dtype is DataType.DT_INT64
    assert _op(graph, "MyInplace").input_desc[0].dtype is DataType.DT_INT64
    assert [d.dtype for d in _op(graph, "MyInplace").output_desc] == [DataType.DT_FLOAT, DataType.DT_INT64]
    assert _op(graph, "ViewCopy").output_desc[0].dtype is DataType.DT_INT64
    _check_against_eager(sliced_base, graph, state, y)


def strided_view(state: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    torch.ops.fxlabtest.my_inplace(state[:, 1], y)
    return state + 0


def test_mutated_strided_view_converts_and_matches_eager() -> None:
    graph = _convert(strided_view, torch.randn(4, 3), torch.randn(4)).graph
    as_strided = _op(graph, "AsStrided")
    assert [_const_value(graph, t) for t in as_strided.inputs[1:]] == [[4], [3], 1]
    assert "ViewCopy" in graph.types
    _check_against_eager(strided_view, graph, torch.randn(4, 3), torch.randn(4))


def full_slice(state: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.ops.fxlabtest.my_inplace(state[0:4], y)


def test_slice_covering_the_base_needs_no_view_copy() -> None:
    graph = _convert(full_slice, torch.randn(4, 3), torch.randn(4, 3)).graph
    assert "AsStrided" not in graph.types and "ViewCopy" not in graph.types
    _check_against_eager(full_slice, graph, torch.randn(4, 3), torch.randn(4, 3))


def no_returns(state: torch.Tensor) -> torch.Tensor:
    torch.ops.fxlabtest.inplace_scale(state, 2.5)
    return state + 1


def test_op_without_returns_keeps_float_argument_as_attr() -> None:
    graph = _convert(no_returns, torch.randn(3, 2)).graph
    (scale,) = graph.ops_of_type("InplaceScale")
    assert scale.attr_value("s") == 2.5
    assert [d.name for d in scale.output_desc] == ["x"]
    assert _op(graph, "Add").inputs[0] == "InplaceScale:0"
    _check_against_eager(no_returns, graph, torch.randn(3, 2))


def no_returns_on_a_column(state: torch.Tensor) -> torch.Tensor:
    torch.ops.fxlabtest.inplace_scale(state[:, 1], 2.5)
    return state + 1


def test_op_without_returns_on_a_strided_view_is_as_strided_then_view_copy() -> None:
    # The node's outputs are (None, updated base): the base's value is its second.
    graph = _convert(no_returns_on_a_column, torch.randn(4, 3)).graph
    core = [t for t in graph.types if t != "Const"]
    assert core[:5] == ["Data", "TensorMove", "AsStrided", "InplaceScale", "ViewCopy"]
    as_strided = _op(graph, "AsStrided")
    assert [_const_value(graph, t) for t in as_strided.inputs[1:]] == [[4], [3], 1]
    assert _op(graph, "InplaceScale").inputs[0] == "AsStrided:0"
    _check_against_eager(no_returns_on_a_column, graph, torch.randn(4, 3))


def scalar_argument(state: torch.Tensor) -> torch.Tensor:
    torch.ops.fxlabtest.scalar_arg(state, 2)
    return state + 1


def test_wrapped_op_that_auto_conversion_refuses_becomes_a_placeholder_with_the_reason() -> None:
    result = _convert(scalar_argument, torch.randn(3))
    (placeholder,) = result.graph.ops_of_type(UNSUPPORTED_OP_TYPE)
    assert "Scalar argument 's'" in placeholder.attr_value("_fxlab_reason")
    assert result.partial


def input_copy(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x.add_(y)
    x[1].copy_(y[0])
    return x * 2


def test_copy_into_graph_input_is_assign_and_mutates_it() -> None:
    graph = _convert(input_copy, torch.randn(4, 3), torch.randn(4, 3)).graph
    (assign,) = graph.ops_of_type("Assign")
    assert assign.inputs[0] == "arg0_1:0"
    assert [d.name for d in assign.input_desc] == ["ref", "value"]
    assert assign.attr_value("validate_shape") is True and assign.attr_value("use_locking") is False
    assert "ScatterElements" in graph.types  # the select_scatter of x[1].copy_
    _check_against_eager(input_copy, graph, torch.randn(4, 3), torch.randn(4, 3))


def sliced_write(cache: torch.Tensor, new: torch.Tensor) -> torch.Tensor:
    cache[:, 2:4] = new
    return cache * 1


def test_slice_scatter_with_step_one_is_two_slices_and_a_concat() -> None:
    graph = _convert(sliced_write, torch.zeros(2, 6), torch.randn(2, 2)).graph
    core = [t for t in graph.types if t != "Const"]
    # The first StridedSliceV2 is the slice that copy() writes into (its value is unused).
    assert core[:6] == ["Data", "Data", "StridedSliceV2", "StridedSliceV2", "StridedSliceV2", "ConcatV2"]
    concat = graph.ops_of_type("ConcatV2")[0]
    assert concat.inputs[:3] == ["StridedSliceV2_1:0", "arg1_1:0", "StridedSliceV2_2:0"]
    begin_end = [[_const_value(graph, t) for t in _op(graph, name).inputs[1:5]] for name in ("StridedSliceV2_1", "StridedSliceV2_2")]
    assert begin_end == [[0, 2, 1, 1], [4, 2147483647, 1, 1]]
    assert concat.attr_value("N") == 3
    _check_against_eager(sliced_write, graph, torch.zeros(2, 6), torch.randn(2, 2))


def strided_write(cache: torch.Tensor, new: torch.Tensor) -> torch.Tensor:
    cache[0:6:2] = new
    return cache * 1


def test_slice_scatter_with_a_step_scatters_at_a_range_of_indices() -> None:
    graph = _convert(strided_write, torch.zeros(6, 2), torch.randn(3, 2)).graph
    core = [t for t in graph.types if t != "Const"]
    # As TorchAir: the fresh Shape is cast to int32 with the bounds before Gather and Minimum.
    assert core[3:12] == ["Shape", "Cast", "Gather", "Minimum", "Range", "Unsqueeze", "Shape", "Expand", "ScatterElements"]
    scatter = graph.ops_of_type("ScatterElements")[0]
    assert scatter.inputs == ["arg0_1:0", "Expand:0", "arg1_1:0"]
    assert (scatter.attr_value("axis"), scatter.attr_value("reduction")) == (0, "none")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_copy_casts_and_broadcasts_like_torchair(dtype: torch.dtype) -> None:
    def fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.ops.aten.copy.default(x, y)

    graph = _convert(fn, torch.zeros(2, 3), torch.randn(3, dtype=dtype)).graph
    expected = ["Cast"] if dtype != torch.float32 else []
    assert [t for t in graph.types if t not in ("Data", "NetOutput")] == expected + ["Shape", "BroadcastTo"]
    _check_against_eager(fn, graph, torch.zeros(2, 3), torch.randn(3, dtype=dtype))


def _rotate_pair(q: torch.Tensor, k: torch.Tensor, angle: torch.Tensor) -> None:
    for half in (q, k):
        half.mul_(angle.cos())


ROTATE_PAIR = _define("rotate_pair(Tensor(a!) q, Tensor(b!) k, Tensor angle) -> ()", _rotate_pair, _nothing)


def rotate_two_views_of_one_projection(x: torch.Tensor, angle: torch.Tensor) -> torch.Tensor:
    qkv = x * 2
    query, key, value = qkv.split(4, dim=-1)
    torch.ops.fxlabtest.rotate_pair(query, key, angle)
    return query + key + value


def rotate_copies(x: torch.Tensor, angle: torch.Tensor) -> torch.Tensor:
    query, key, value = (x * 2).split(4, dim=-1)
    query, key = query.clone(), key.clone()
    torch.ops.fxlabtest.rotate_pair(query, key, angle)
    return query + key + value


def test_two_mutated_views_of_one_base_are_refused_with_the_cause_and_the_fix() -> None:
    result = _convert(rotate_two_views_of_one_projection, torch.randn(3, 12), torch.randn(3, 1))
    (record,) = [r for r in result.nodes if r.node == "auto_functionalized_v2"]
    assert record.status is Status.REFUSED
    assert record.message.startswith(
        "TorchAir fails on fxlabtest.rotate_pair.default here: its mutated arguments q and k are views of one tensor. "
        "TorchAir's auto_functionalized_v2 converter (_ge_concrete_graph/auto_functionalized_v2.py:242) copies each "
        "mutated argument back into its base and returns one value per mutated argument, where the graph has one per base"
    )
    assert record.message.endswith(
        "Fix: pass the op the tensor they are views of and let it write both parts, or pass the op copies "
        "(q = q.clone(); k = k.clone()) and read the results from them"
    )
    assert result.graph.types.count(UNSUPPORTED_OP_TYPE) == 1 and "TensorMove" not in result.graph.types


def test_the_fix_with_copies_converts_and_matches_eager() -> None:
    result = _convert(rotate_copies, torch.randn(3, 12), torch.randn(3, 1))
    assert [r.status for r in result.nodes if r.node == "auto_functionalized_v2"] == [Status.CONVERTED]
    _check_against_eager(rotate_copies, result.graph, torch.randn(3, 12), torch.randn(3, 1))
