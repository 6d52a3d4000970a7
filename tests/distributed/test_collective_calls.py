"""The collectives of a graph as ranks compare them, and what makes two ranks' calls disagree."""
from __future__ import annotations

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
from torch.fx.experimental.proxy_tensor import make_fx

from fxlab.distributed.collective_calls import CollectiveCall, collective_calls, disagreement, user_source
from tests.conftest import process_group


def _graph(fn, *inputs):
    return make_fx(fn, tracing_mode="fake")(*inputs)


def test_calls_in_graph_order_with_group_dtype_shape_and_reduction():
    def f(x):
        y = funcol.all_reduce(x, "max", dist.group.WORLD)
        return funcol.all_gather_tensor(y.half(), 0, dist.group.WORLD)

    with process_group("fake", world_size=4):
        calls = collective_calls(_graph(f, torch.randn(2, 3)), graph_index=0, rank=2)
    assert [(c.op, c.channel, c.members, c.dtype, c.shape, c.reduction) for c in calls] == [
        ("all_reduce", "tag=ptd:0;rank_list=0,1,2,3", [0, 1, 2, 3], "float32", [2, 3], "max"),
        ("all_gather_into_tensor", "tag=ptd:0;rank_list=0,1,2,3", [0, 1, 2, 3], "float16", [2, 3], None),
    ]
    assert calls[0].describe() == "all_reduce (max) of float32[2, 3]"


def _call(**changes) -> CollectiveCall:
    fields = dict(op="all_reduce", channel="g", members=[0, 1], dtype="float32", shape=[4, 8], reduction="sum", rank=0)
    fields.update(changes)
    return CollectiveCall(**fields)


def test_what_makes_two_calls_disagree():
    assert disagreement(_call(), _call(rank=1)) is None
    assert disagreement(_call(), _call(rank=1, reduction="max")) == "the reduction differs"
    assert disagreement(_call(), _call(rank=1, op="reduce_scatter_tensor")) == "they call different collectives"
    assert disagreement(_call(), _call(rank=1, shape=[4, 7])) == "the shapes differ"
    assert disagreement(_call(), _call(rank=1, dtype="bfloat16")) == "the dtype differs"


def test_an_all_to_all_may_send_other_row_counts_but_what_one_sends_the_other_receives():
    a2a = dict(op="all_to_all_single_npu", reduction=None)
    mine = _call(**a2a, shape=[6, 8], counts={"send_counts": [16, 32], "recv_counts": [16, 8]})
    agreeing = _call(**a2a, rank=1, shape=[3, 8], counts={"send_counts": [8, 16], "recv_counts": [32, 16]})
    assert disagreement(mine, agreeing) is None
    short = _call(**a2a, rank=1, shape=[3, 8], counts={"send_counts": [8, 16], "recv_counts": [24, 16]})
    assert disagreement(mine, short) == "rank 0 sends 32 elements to rank 1, which expects 24"
    assert disagreement(mine, _call(**a2a, rank=1, shape=[3, 4])) == "the row shapes differ"


def test_a_send_meets_a_receive():
    send = _call(op="_send", reduction="tag 0", channel="g 0->1")
    assert disagreement(send, _call(op="_recv", reduction="tag 0", channel="g 0->1", rank=1)) is None
    assert disagreement(send, _call(op="_send", reduction="tag 0", channel="g 0->1", rank=1)) == "both ranks send, or both receive, on the same pair"


def test_the_source_line_is_the_users_not_torchs():
    node = torch.fx.Graph().placeholder("x")
    node.meta["stack_trace"] = (
        '  File "project/model.py", line 12, in forward\n    y = f(x)\n'
        f'  File "{torch.__file__.rsplit("/", 1)[0]}/distributed/_functional_collectives.py", line 179, in all_reduce\n    ...\n'
    )
    assert user_source(node) == "project/model.py:12"


def test_another_operator_that_communicates_is_a_collective_once_named(monkeypatch):
    from fxlab.capture import ranks

    lib = torch.library.Library("fxlab_test_comm", "FRAGMENT")  # noqa: TOR901 - destroyed below
    lib.define("dispatch(Tensor x, str group_ep, int ep_world_size) -> Tensor")
    lib.impl("dispatch", lambda x, group_ep, ep_world_size: x.clone(), "CompositeExplicitAutograd")
    try:
        target = torch.ops.fxlab_test_comm.dispatch.default
        with process_group("fake", world_size=2):
            gm = _graph(lambda x: target(x, "tag=ptd:0;rank_list=0,1", 2), torch.randn(3))
            assert collective_calls(gm, 0, 0) == []
            monkeypatch.setattr(ranks, "COLLECTIVE_OPERATORS", {"fxlab_test_comm.dispatch.default"})
            calls = collective_calls(gm, 0, 0)
        assert [(c.op, c.channel, c.members) for c in calls] == [("dispatch", "tag=ptd:0;rank_list=0,1", [0, 1])]
    finally:
        lib._destroy()
