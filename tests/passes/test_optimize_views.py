from __future__ import annotations

import pytest
import torch

from fxlab import scope
from fxlab.capture.stages import functional_graph
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.optimize_views import GE_OWNER_KEY, optimize_views, rebuild_steps
from fxlab.passes.view_to_reshape import view_to_reshape


def _calls(gm):
    return [(n.name, str(n.target), n.args[1] if n.target in _REBUILT else None) for n in gm.graph.nodes if n.op == "call_function"]


_REBUILT = (torch.ops.aten.reshape.default, torch.ops.aten.permute.default)


def _prepared(fn, *inputs):
    gm = functional_graph(fn, *inputs)
    view_to_reshape(gm)  # as in the pre_ge stage: view_to_reshape runs first
    return gm


@pytest.mark.parametrize(
    "shape, stride, base, steps",
    [
        ([6, 2], [2, 1], [3, 4], [("reshape", [6, 2])]),  # contiguous view: one Reshape
        ([3, 4], [4, 1], [3, 4], []),  # back to the base: nothing to build
        ([4, 3], [1, 4], [3, 4], [("permute", [1, 0])]),  # t(): a Transpose of the base
        ([4, 2, 3], [1, 12, 4], [2, 3, 4], [("permute", [2, 0, 1])]),
        ([4, 6], [1, 4], [2, 3, 4], [("reshape", [6, 4]), ("permute", [1, 0])]),  # reshape, then transpose
        ([4, 1, 3], [1, 3, 4], [3, 4], [("permute", [1, 0]), ("reshape", [4, 1, 3])]),  # size-1 dims come back by Reshape
    ],
)
def test_rebuild_steps_follow_torchairs_derivation(shape, stride, base, steps):
    assert rebuild_steps(shape, stride, base) == steps


def _transpose_read_twice(x, w):
    wt = w.t()
    return (x @ wt, wt + 1)


def test_a_view_is_rebuilt_once_before_its_first_reader_and_shared():
    x, w = torch.randn(2, 4), torch.randn(3, 4)
    gm = _prepared(_transpose_read_twice, x, w)
    assert optimize_views(gm).changed is True
    calls = _calls(gm)
    assert [c[1] for c in calls] == ["aten.permute.default", "aten.mm.default", "aten.add.Tensor"]
    permute = next(n for n in gm.graph.nodes if n.target is torch.ops.aten.permute.default)
    assert permute.args == (gm.graph.find_nodes(op="placeholder")[1], [1, 0])
    assert permute.meta[GE_OWNER_KEY] == "mm" and len(permute.users) == 2
    for got, want in zip(gm(x, w), _transpose_read_twice(x, w)):
        torch.testing.assert_close(got, want)


def test_rebuilt_ops_belong_to_their_reader_in_the_ascend_ir():
    gm = _prepared(_transpose_read_twice, torch.randn(2, 4), torch.randn(3, 4))
    optimize_views(gm)
    ir = convert_to_ascend_ir(gm).graph
    assert [(op.type, op.fx_node) for op in ir.ops if op.type not in ("Data", "NetOutput")] == [
        ("Const", "mm"),
        ("Transpose", "mm"),
        ("MatMul", "mm"),
        ("Const", "add"),
        ("Add", "add"),
    ]


def _round_trip(x):
    y = x * 2
    return (y.view(6, 2).view(3, 4) + 1,)


def test_a_chain_back_to_its_bases_shape_is_not_built():
    x = torch.randn(3, 4)
    gm = _prepared(_round_trip, x)
    assert optimize_views(gm).changed is True
    assert [c[1] for c in _calls(gm)] == ["aten.mul.Tensor", "aten.add.Tensor"]
    add = next(n for n in gm.graph.nodes if n.target is torch.ops.aten.add.Tensor)
    assert add.args[0].name == "mul"
    torch.testing.assert_close(gm(x)[0], _round_trip(x)[0])


def _scoped(x):
    with scope.limit_core_num(2, 4):
        a = x.t() + 1
    with scope.super_kernel("sk"):
        b = x.t() * 2
    return (a, b)


def test_views_in_a_core_limit_scope_stay_and_in_a_super_kernel_scope_are_rebuilt():
    gm = _prepared(_scoped, torch.randn(3, 4))
    optimize_views(gm)
    targets = [c[1] for c in _calls(gm)]
    assert targets == [
        "air.scope_enter.default", "aten.t.default", "aten.add.Tensor", "air.scope_exit.default",
        "air.scope_enter.default", "aten.permute.default", "aten.mul.Tensor", "air.scope_exit.default",
    ]  # fmt: skip


def test_a_graph_without_views_is_left_alone():
    gm = _prepared(lambda x: (x.relu() + 1,), torch.randn(3))
    assert optimize_views(gm).changed is False
