"""Shape/view and join/split converters: exact GE op sequences and attrs as TorchAir emits
them, and numbers against eager through the reference executor."""
from __future__ import annotations

from typing import Any, Callable

import torch

from tests.functional_graphs import functional_graph
from tests.ir.executing import execute_converted
from fxlab.ir.model import DataType, IrGraph
from fxlab.passes.conversion_result import UNSUPPORTED_OP_TYPE
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir


def convert(fn: Callable[..., Any], *inputs: torch.Tensor) -> IrGraph:
    graph = convert_to_ascend_ir(functional_graph(fn, *inputs), name="t").graph
    assert not graph.ops_of_type(UNSUPPORTED_OP_TYPE)
    outputs = execute_converted(graph, [x.clone() for x in inputs])
    expected = fn(*inputs)
    expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    for got, want in zip(outputs, expected, strict=True):
        torch.testing.assert_close(got, want)
    return graph


def body_types(graph: IrGraph) -> list[str]:
    return [t for t in graph.types if t not in ("Data", "NetOutput")]


def const_values(graph: IrGraph) -> list[Any]:
    return [op.attr_value("_readable_value") for op in graph.ops_of_type("Const")]


def test_view_is_reshape_with_int64_const_shape() -> None:
    graph = convert(lambda x: x.view(6, 4), torch.randn(2, 3, 4))
    assert body_types(graph) == ["Const", "Reshape"]
    (const,) = graph.ops_of_type("Const")
    assert const.output_desc[0].dtype is DataType.DT_INT64 and const.attr_value("_readable_value") == "[6, 4]"
    reshape = graph.ops_of_type("Reshape")[0]
    assert reshape.inputs == ["arg0_1:0", "Const:0"]
    assert {k: v.value for k, v in reshape.attrs.items()} == {"axis": 0, "num_axes": -1}


def test_transpose_and_t_become_transpose_with_perm_const() -> None:
    graph = convert(lambda x, w: (x.transpose(0, 2), w.t()), torch.randn(2, 3, 4), torch.randn(3, 5))
    assert body_types(graph) == ["Const", "Transpose", "Const", "Transpose"]
    assert const_values(graph) == ["[2, 1, 0]", "[1, 0]"]


def test_permute_moving_only_unit_axes_is_squeeze_unsqueeze() -> None:
    graph = convert(lambda x: x.permute(1, 0, 2), torch.randn(1, 3, 4))
    assert body_types(graph) == ["Squeeze", "Unsqueeze"]
    assert graph.ops_of_type("Squeeze")[0].attr_value("axis") == ()
    assert graph.ops_of_type("Unsqueeze")[0].attr_value("axes") == (1,)
    graph = convert(lambda x: x.permute(2, 0, 1), torch.randn(2, 3, 4))
    assert body_types(graph) == ["Const", "Transpose"]


def test_expand_squeeze_unsqueeze() -> None:
    graph = convert(lambda x: x.expand(2, 3, 4).unsqueeze(0).squeeze(0).squeeze(), torch.randn(3, 1))
    types = body_types(graph)
    assert types[:2] == ["Const", "BroadcastTo"] and "Unsqueeze" in types and "Squeeze" in types


def test_chunk_is_splitv_with_packed_sizes_and_int32_axis() -> None:
    graph = convert(lambda x: x.chunk(2, -1), torch.randn(3, 8))
    assert body_types(graph) == ["Const", "Const", "Const", "Pack", "Cast", "SplitV"]
    split_dim, *sizes = graph.ops_of_type("Const")
    assert split_dim.output_desc[0].dtype is DataType.DT_INT32 and split_dim.attr_value("_readable_value") == "-1"
    assert [c.attr_value("_readable_value") for c in sizes] == ["4", "-1"]
    split = graph.ops_of_type("SplitV")[0]
    assert split.attr_value("num_split") == 2 and [d.name for d in split.output_desc] == ["y0", "y1"]
    assert [d.name for d in split.input_desc] == ["x", "size_splits", "split_dim"]


def test_cat_stack_unbind() -> None:
    graph = convert(lambda a, b: (torch.cat([a, b], 1), torch.stack([a, a]), a.unbind(0)[1]), torch.randn(2, 3), torch.randn(2, 5))
    assert body_types(graph) == ["Const", "ConcatV2", "Pack", "Unpack"]
    concat = graph.ops_of_type("ConcatV2")[0]
    assert [d.name for d in concat.input_desc] == ["x0", "x1", "concat_dim"] and concat.attr_value("N") == 2
    assert graph.ops_of_type("Unpack")[0].attr_value("num") == 2


def test_cat_casts_to_the_promoted_type() -> None:
    graph = convert(lambda a, b: torch.cat([a, b]), torch.randn(2, 3), torch.randn(1, 3).half())
    assert body_types(graph) == ["Cast", "Const", "ConcatV2"]


def test_as_strided_with_large_innermost_stride_reads_sorted_then_transposes() -> None:
    graph = convert(lambda x: torch.as_strided(x, [2, 2], [1, 256], 3), torch.randn(600))
    assert body_types(graph) == ["Const", "Const", "Const", "AsStrided", "Const", "Transpose"]
    assert const_values(graph) == ["3", "[2, 2]", "[256, 1]", "[1, 0]"]
    graph = convert(lambda x: torch.as_strided(x, [2, 2], [4, 1], 1), torch.randn(16))
    assert body_types(graph) == ["Const", "Const", "Const", "AsStrided"]


def test_dynamic_sizes_become_shape_gather_and_pack() -> None:
    from torch.fx.experimental.proxy_tensor import make_fx

    def fn(x: torch.Tensor) -> torch.Tensor:
        return x.view(x.shape[0], -1)

    gm = make_fx(fn, tracing_mode="symbolic")(torch.randn(4, 3, 2))
    graph = convert_to_ascend_ir(gm, name="dyn").graph
    assert body_types(graph) == ["Shape", "Const", "Gather", "Const", "Pack", "Reshape"]
    pack = graph.ops_of_type("Pack")[0]
    assert pack.attr_value("_force_unknown_shape") is True and pack.attr_value("N") == 2
    assert graph.ops_of_type("Shape")[0].attr_value("dtype") == 9  # int64 in TorchAir's numbering
    x = torch.randn(5, 3, 2)
    (out,) = execute_converted(graph, [x])
    torch.testing.assert_close(out, x.view(5, -1))
