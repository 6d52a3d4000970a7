"""The cross-rank check through a store: two ranks simulated in threads of this process
(one in-memory store between them), each with its own graph."""
from __future__ import annotations

import threading
import time

import pytest
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
from torch.fx.experimental.proxy_tensor import make_fx

from fxlab.distributed.agreement import RankAgreement, RankMismatchError, RankTimeoutError
from tests.conftest import process_group


def _reduce(x):
    return funcol.all_reduce(x, "sum", dist.group.WORLD)


def _gather(x):
    return funcol.all_gather_tensor(x, 0, dist.group.WORLD)


def _both(store, first, second, timeout: float = 10.0):
    """Rank 0 and rank 1 each check their graph; what each raised (None: nothing)."""
    raised: dict[int, BaseException | None] = {}
    agreements = [RankAgreement(lambda: store, rank, 2, timeout) for rank in (0, 1)]
    # Traced before the threads start: tracing is not thread-safe.
    graphs = [make_fx(fn, tracing_mode="fake")(torch.randn(4, 8)) if fn else torch.fx.symbolic_trace(lambda x: x) for fn in (first, second)]

    def run(rank: int, fn) -> None:
        try:
            agreements[rank].before_graph_runs(0, graphs[rank])
            agreements[rank].after_compiled_run()
            raised[rank] = None
        except Exception as exc:  # noqa: BLE001 - what the rank would report
            raised[rank] = exc

    threads = [threading.Thread(target=run, args=(r, fn)) for r, fn in ((0, first), (1, second))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return raised, agreements


def test_ranks_that_agree_pass_and_agree_on_which_graphs_run():
    store = dist.HashStore()
    with process_group("fake", world_size=2):
        raised, agreements = _both(store, _reduce, _reduce)
    assert raised == {0: None, 1: None}
    results = {}
    threads = [threading.Thread(target=lambda r=r, mine=mine: results.update({r: agreements[r].runnable_everywhere(mine)})) for r, mine in ((0, [0, 1]), (1, [1, 2]))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results == {0: [1], 1: [1]}


def test_a_disagreement_is_an_error_on_both_ranks_within_moments():
    store = dist.HashStore()
    start = time.monotonic()
    with process_group("fake", world_size=2):
        raised, _ = _both(store, _reduce, _gather)
    assert time.monotonic() - start < 10
    assert all(isinstance(raised[r], RankMismatchError) for r in (0, 1))
    message = str(raised[0])
    assert "ranks 0 and 1 disagree on collective #1 on group tag=ptd:0;rank_list=0,1: they call different collectives" in message
    assert "Rank 0 calls all_reduce (sum) of float32[4, 8]" in message and "rank 1 calls all_gather_into_tensor of float32[4, 8]" in message


def test_a_rank_that_ended_without_the_collective_is_named():
    store = dist.HashStore()
    with process_group("fake", world_size=2):
        raised, _ = _both(store, _reduce, None)
    assert isinstance(raised[0], RankMismatchError)
    assert "rank 1 ended its compiled run after 0 collective(s) there and never calls it" in str(raised[0])


def test_a_silent_rank_is_a_timeout_not_a_hang():
    store = dist.HashStore()
    with process_group("fake", world_size=2):
        agreement = RankAgreement(lambda: store, 0, 2, timeout=0.5)
        with pytest.raises(RankTimeoutError, match="rank 1 did not reach collective #1 on group tag=ptd:0;rank_list=0,1 within 0.5 s"):
            agreement.before_graph_runs(0, make_fx(_reduce, tracing_mode="fake")(torch.randn(2)))
