from __future__ import annotations

import random

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from fxlab import scope
from tests.functional_graphs import functional_graph
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.optimize_views import FIRST_REBUILD, GE_OWNER_KEY, as_fake_views, optimize_views, rebuild_steps
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


def _two_layers(x, w1, w2):
    # Two layers viewing tensors of one layout the same way, as a model's repeated layers do.
    h = (x @ w1.t()).view(4, 2, 3).transpose(1, 2).reshape(4, 6)
    return (h @ w2.t()).view(4, 2, 3).transpose(1, 2).reshape(4, 6)


def test_views_of_one_layout_and_arguments_are_computed_once(monkeypatch: pytest.MonkeyPatch):
    from fxlab.passes import optimize_views as module

    x, w1, w2 = torch.randn(4, 6), torch.randn(6, 6), torch.randn(6, 6)
    gm = _prepared(_two_layers, x, w1, w2)
    replayed = []
    monkeypatch.setattr(module, "as_fake_views", lambda view, meta, args: replayed.append(str(view)) or as_fake_views(view, meta, args))
    assert optimize_views(gm).changed is True
    # The first layer's weight transpose and views: the second layer's are the same ones.
    assert replayed == ["aten.t.default", "aten.reshape.default", "aten.transpose.int"]
    torch.testing.assert_close(gm(x, w1, w2)[0], _two_layers(x, w1, w2))


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


# -- symbolic sizes ----------------------------------------------------------------------------
def _heads(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Split the last dim into heads and move them first, as attention does."""
    seq = x.shape[0]
    q = (x @ w).view(seq, 2, 4).transpose(0, 1)
    return q * 2


def _dynamic_pre_views(fn, *inputs):
    from tests.passes.dynamic_functional import dynamic_functional

    gm = dynamic_functional(fn, *inputs)
    view_to_reshape(gm)
    return gm


def test_a_view_naming_a_symbolic_size_is_skipped_and_rebuilt_from_that_size():
    from fxlab.passes.optimize_views import view_reshape, view_sizes

    x, w = torch.randn(5, 8), torch.randn(8, 8)
    gm = _dynamic_pre_views(_heads, x, w)
    assert optimize_views(gm).changed is True
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert torch.ops.aten.reshape.default not in targets and torch.ops.aten.transpose.int not in targets
    (sizes,) = [n for n in gm.graph.nodes if n.target is view_sizes]  # the skipped view's own list
    (rebuilt,) = [n for n in gm.graph.nodes if n.target is view_reshape]
    size_node = next(item for item in sizes.args[0] if isinstance(item, torch.fx.Node))
    given, symbol, base_dim = rebuilt.args[2][0]
    # The rebuilt Reshape's symbolic size is the graph value the view named for it.
    # (the graph's first rebuilt view: its values serve it alone, see the next test)
    assert given is size_node and symbol == str(size_node.meta["val"]) + FIRST_REBUILD and base_dim == 0
    (mul,) = [n for n in gm.graph.nodes if n.target is torch.ops.aten.mul.Tensor]
    assert rebuilt.meta[GE_OWNER_KEY] == mul.name and sizes.meta[GE_OWNER_KEY] == "view"
    assert rebuilt.args[2][1:] == [2, 4] and [n.target for n in rebuilt.users] == [torch.ops.aten.permute.default]
    torch.testing.assert_close(gm(x.shape[0], x, w)[0], _heads(x, w))


def test_a_symbolic_view_converts_as_a_pack_of_its_sizes_and_a_reshape():
    from fxlab.passes.pre_ge import pre_ge_graph
    from tests.passes.dynamic_functional import dynamic_functional

    gm = dynamic_functional(_heads, torch.randn(5, 8), torch.randn(8, 8))
    graph = convert_to_ascend_ir(pre_ge_graph(gm).gm, "g").graph
    (mul,) = graph.ops_of_type("Mul")
    reader = [op for op in graph.ops if op.fx_node == mul.fx_node]
    # At the reader: the Pack of the sizes (the symbolic one read by the view's sym_size),
    # the Reshape, then the Transpose, as TorchAir rebuilds the view there.
    assert [op.type for op in reader] == ["Const", "Const", "Pack", "Reshape", "Const", "Transpose", "Const", "Mul", "Cast"]
    (gather,) = graph.ops_of_type("Gather")
    assert reader[2].inputs == [f"{gather.name}:0", f"{reader[0].name}:0", f"{reader[1].name}:0"]
    (view_pack,) = [op for op in graph.ops if op.type == "Pack" and op.fx_node == "view"]  # the skipped view's list, read by nothing
    assert view_pack.inputs[0] == f"{gather.name}:0" and not any(f"{view_pack.name}:0" in op.inputs for op in graph.ops)


def _two_chains(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    h = torch.relu(x.reshape(x.shape[0] * x.shape[1], 4) @ w).reshape(x.shape[0], x.shape[1], 4)
    return torch.sigmoid(h).reshape(x.shape[0] * x.shape[1], 4) @ w


def two_chains_graph() -> torch.fx.GraphModule:
    """Two views of different bases, each naming the symbolic size ``s0*s1`` by its own
    graph value (Dynamo computes such a size again where a model does: here by hand)."""
    import operator

    from tests.passes.dynamic_functional import dynamic_functional

    gm = dynamic_functional(_two_chains, torch.randn(2, 3, 4), torch.randn(4, 4))
    nodes = {n.name: n for n in gm.graph.nodes}
    with gm.graph.inserting_before(nodes["view_2"]):
        again = gm.graph.call_function(operator.mul, nodes["mul"].args)
    again.meta["val"] = nodes["mul"].meta["val"]
    nodes["view_2"].update_arg(1, [again, 4])
    gm.recompile()
    return gm


def test_the_first_rebuilt_views_sizes_serve_it_alone_later_ones_the_rest_of_the_graph():
    # TorchAir's graph-wide map of the values found for symbols is created as the first
    # rebuild ends, replacing the map that rebuild wrote to: the second view's reader takes
    # the value its own view named.
    from fxlab.passes.pre_ge import pre_ge_graph

    graph = convert_to_ascend_ir(pre_ge_graph(two_chains_graph()).gm, "g").graph
    first, second = graph.ops_of_type("Mul")
    packs = {op.fx_node: op for op in graph.ops if op.type == "Pack"}
    assert packs["mm"].inputs[0] == f"{first.name}:0" and packs["mm_1"].inputs[0] == f"{second.name}:0"


def _random_view_step(rng: random.Random, t: torch.Tensor) -> tuple[object, tuple] | None:
    aten = torch.ops.aten
    kind = rng.choice(["view", "reshape", "permute", "transpose"])
    if kind == "permute":
        perm = list(range(t.dim()))
        rng.shuffle(perm)
        return aten.permute.default, (perm,)
    if kind == "transpose":
        return (aten.transpose.int, tuple(rng.sample(range(t.dim()), 2))) if t.dim() >= 2 else None
    n, dims = t.numel(), []
    while n > 1 and len(dims) < 3:
        d = rng.choice([x for x in (1, 2, 3, 4, n) if n % x == 0])
        dims.append(d)
        n //= d
    dims.append(n)
    if rng.random() < 0.3:
        dims.insert(rng.randint(0, len(dims)), 1)
    return (aten.view.default if kind == "view" else aten.reshape.default), (dims,)


def test_views_replayed_on_meta_tensors_get_a_fake_tensors_strides():
    """TorchAir replays views on fake tensors, whose ``view`` gives size-1 dims other
    strides than the C++ kernel; the meta replay must agree, stride for stride."""
    rng, mode, steps = random.Random(0), FakeTensorMode(), 0
    for _ in range(1500):
        shape = [rng.choice([1, 1, 2, 3, 4]) for _ in range(rng.randint(1, 5))]
        meta = torch.empty(shape, device="meta")
        with mode:
            fake = torch.empty(shape)
        for _ in range(rng.randint(1, 5)):
            step = _random_view_step(rng, meta)
            if step is None:
                continue
            view, args = step
            try:
                with mode:
                    fake = view(fake, *args)
            except (RuntimeError, ValueError):  # not a view of this tensor: no graph holds it
                break
            meta = as_fake_views(view, meta, args)
            assert (tuple(meta.shape), meta.stride()) == (tuple(fake.shape), fake.stride()), (shape, view, args)
            steps += 1
    assert steps > 3000
    base = torch.empty(1, 2, 8, device="meta").view(2, 1, 1, 8).permute(2, 0, 3, 1)
    assert as_fake_views(torch.ops.aten.view.default, base, ([1, 2, 8],)).stride() == (8, 8, 1)  # the C++ kernel: (16, 8, 1)
