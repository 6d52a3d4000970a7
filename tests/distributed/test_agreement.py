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
    assert str(raised[1]) == message  # whichever rank says it first (the launcher keeps the first), it reads the same


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


def _reduce_twice(x):
    return _reduce(_reduce(x) * 3)


def _at_once(*checks) -> None:
    """Each (agreement, graph index, graph) checked in a thread of its own, as ranks do; raises what one raised."""
    raised: list[BaseException] = []

    def check(agreement, index, graph) -> None:
        try:
            agreement.before_graph_runs(index, graph)
        except Exception as exc:  # noqa: BLE001 - re-raised below
            raised.append(exc)

    threads = [threading.Thread(target=check, args=c) for c in checks]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    if raised:
        raise raised[0]


def test_a_rank_calling_one_collective_more_is_a_mismatch_not_a_wait_for_the_timeout():
    """Rank 0's graph has one all_reduce; rank 1's has two. Rank 0 cannot place a second
    before its graph runs, so rank 1 leaves #2 to it and runs; rank 0's run ends without
    it, and rank 0 says so at once instead of either rank waiting for the timeout."""
    store = dist.HashStore()
    start = time.monotonic()
    with process_group("fake", world_size=2):
        one, two = (make_fx(fn, tracing_mode="fake")(torch.randn(4, 8)) for fn in (_reduce, _reduce_twice))
        ranks = [RankAgreement(lambda: store, rank, 2, timeout=30) for rank in (0, 1)]
        _at_once((ranks[0], 0, one), (ranks[1], 0, two))  # #1 agrees; #2 is rank 0's to compare, when it places one
        with pytest.raises(RankMismatchError) as info:
            ranks[0].after_compiled_run()
    assert time.monotonic() - start < 10
    message = str(info.value)
    assert message.startswith("ranks 0 and 1 disagree on collective #2 on group tag=ptd:0;rank_list=0,1: rank 1 calls all_reduce (sum)")
    assert "rank 0 ended its compiled run after 1 collective(s) there and never calls it. On the device this collective would hang" in message


def test_a_rank_whose_graph_broke_where_its_peers_did_not_agrees_on_its_next_graph():
    """Rank 1's graph holds both all_reduces; rank 0's graph broke between them (a print
    on one rank only): its second graph, compiled after its first runs, holds the second."""
    store = dist.HashStore()
    with process_group("fake", world_size=2):
        one, two = (make_fx(fn, tracing_mode="fake")(torch.randn(4, 8)) for fn in (_reduce, _reduce_twice))
        ranks = [RankAgreement(lambda: store, rank, 2, timeout=30) for rank in (0, 1)]
        _at_once((ranks[0], 0, one), (ranks[1], 0, two))
        ranks[0].before_graph_runs(1, one)  # after its first graph ran: the second all_reduce, compared now
        for rank in ranks:
            rank.after_compiled_run()
    assert ranks[0].positions == ranks[1].positions == {ranks[0].calls[0].channel_key: 2}


def test_a_peer_still_to_compile_its_next_graph_is_waited_for():
    """Both ranks ran a graph with one all_reduce; rank 1 reaches its next graph first and
    waits for rank 0's, whose calls so far have all run: no mismatch, rank 0 comes."""
    store = dist.HashStore()
    with process_group("fake", world_size=2):
        graph = make_fx(_reduce, tracing_mode="fake")(torch.randn(4, 8))
        ranks = [RankAgreement(lambda: store, rank, 2, timeout=30) for rank in (0, 1)]
        first = [threading.Thread(target=ranks[r].before_graph_runs, args=(0, graph)) for r in (0, 1)]
        for t in first:
            t.start()
        for t in first:
            t.join(30)
        raised = []
        late = threading.Timer(0.5, ranks[0].before_graph_runs, args=(1, graph))
        late.start()
        try:
            ranks[1].before_graph_runs(1, graph)
        except Exception as exc:  # noqa: BLE001 - asserted below
            raised.append(exc)
        late.join(30)
    assert raised == [] and ranks[1].positions == ranks[0].positions == {ranks[0].calls[0].channel_key: 2}
