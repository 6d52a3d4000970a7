"""The cross-rank check: every rank's collectives compared before any of them runs.

When a rank's functional graph is compiled, before it first runs, the rank writes each
of its collectives into the process group's store, at its position on its channel (the
group; for a send or a receive, the pair of ranks), then reads the other members' calls at
the same positions and compares them (:func:`fxlab.distributed.collective_calls.disagreement`). A
rank whose compiled run has ended writes how many calls it made on each channel, so a
peer still waiting at a later position learns that none will come. Reads never block:
the store is polled (``check``) until the call, the peer's end, or the timeout, so a
mismatch is an error within moments on every rank, naming both ranks, the collective and
their source lines, and a rank that never gets there is reported by the timeout.

A rank also writes how many calls it has placed on each channel once a graph's calls are
all placed. A peer waiting for a later position, whose own graph holds unrun calls at
positions the rank has placed, learns that the rank cannot get there before its current
graph runs (its next graph comes only after that, and the current one waits for the
peer's): the peer leaves that position to the rank, which compares it when it places it
(a rank whose graph broke where its peers' did not: a later graph of its own holds the
call), and runs its graph. A rank whose compiled run ends with fewer calls on a channel
than a peer placed there says so: the peer calls one collective more than it does (the
classic hang on a device).

The same store exchange decides which graphs' Ascend IR runs on CPU (those every rank
can run: their collectives meet), and, under ``torchrun``, gathers each rank's result on
rank 0.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import torch.distributed as dist
import torch.fx as fx

from fxlab.capture.ranks import RankHooks
from fxlab.distributed.collective_calls import CollectiveCall, collective_calls, disagreement
from fxlab.errors import FxlabError

PREFIX = "fxlab/"
STUCK = "stuck"  # a probe's answer: the peer cannot reach the position
POLL_SECONDS = 0.02


class RankMismatchError(FxlabError):
    """Two ranks would call different collectives at the same point: on a device the job
    would hang there."""

    exit_code = 1


class RankTimeoutError(FxlabError):
    """A rank did not reach a point its peers wait at within the timeout."""

    exit_code = 1


def default_store() -> Any:
    return dist.distributed_c10d._get_default_store()


class RankAgreement:
    """One rank's side of the exchange (see the module docstring)."""

    def __init__(
        self, store: Callable[[], Any], rank: int, world_size: int, timeout: float, phase: Callable[[str], None] | None = None
    ) -> None:
        self.phase = phase or (lambda what: None)
        self._store_of = store  # the store, asked for when first needed (the model file may make the group)
        self._store: Any = None
        self.rank = rank
        self.world_size = world_size
        self.timeout = timeout
        self.positions: dict[str, int] = {}  # channel key -> calls written so far
        self.calls: list[CollectiveCall] = []

    @property
    def store(self) -> Any:
        if self._store is None:
            self._store = self._store_of()
        return self._store

    def hooks(self) -> RankHooks:
        return RankHooks(self.before_graph_runs, self.after_compiled_run, self.runnable_everywhere)

    # -- collectives ------------------------------------------------------------------
    def before_graph_runs(self, graph_index: int, gm: fx.GraphModule) -> None:
        calls = collective_calls(gm, graph_index, self.rank)
        first = dict(self.positions)  # each channel's first position in this graph
        placed = [(call, self._place(call)) for call in calls]
        self.calls.extend(calls)
        for channel in {call.channel_key for call in calls}:
            self.store.set(f"{PREFIX}placed/{channel}/{self.rank}", str(self.positions[channel]))
        for call, position in placed:
            for peer in call.members:
                if peer != self.rank:
                    self._compare(call, position, peer, first.get(call.channel_key, 0))
        if placed:
            self.phase(f"running graph {graph_index} under torch.compile (its collectives agree with the other ranks')")

    def _place(self, call: CollectiveCall) -> int:
        position = self.positions.get(call.channel_key, 0)
        self.positions[call.channel_key] = position + 1
        self.store.set(f"{PREFIX}call/{call.channel_key}/{position}/{self.rank}", json.dumps(call.to_json()))
        return position

    def _compare(self, call: CollectiveCall, position: int, peer: int, first: int) -> None:
        key = f"{PREFIX}call/{call.channel_key}/{position}/{peer}"
        done_key = f"{PREFIX}done/{peer}"
        what = f"collective #{position + 1} on {_channel_words(call)}"
        self.phase(f"waiting for rank {peer} to reach {what} ({call.describe()} at {call.source or call.node})")

        def probe() -> str | None:
            if self.store.check([key]):
                return key
            if self.store.check([done_key]):
                return done_key
            return STUCK if first < self._placed_by(call.channel_key, peer) <= position else None

        found = self._poll(probe)
        if found == STUCK:  # the peer compares it when it places it; if it never does, its run's end says so
            return
        if found is None:
            raise RankTimeoutError(
                f"rank {peer} did not reach {what} within {self.timeout:g} s, where rank {self.rank} calls {call.describe()} "
                f"at {call.where()}. Rank {peer} is slow or stuck before it (see its log); raise --timeout if it is only slow."
            )
        if found == done_key:
            made = json.loads(self.store.get(done_key)).get(call.channel_key, 0)
            raise RankMismatchError(
                f"ranks {self.rank} and {peer} disagree on {what}: rank {self.rank} calls {call.describe()} at {call.where()}; "
                f"rank {peer} ended its compiled run after {made} collective(s) there and never calls it. "
                "On the device this collective would hang. Make every rank of the group call the same collectives in the same order."
            )
        theirs = CollectiveCall.from_json(json.loads(self.store.get(key)))
        # Both ranks know both calls: judged and said in rank order, so the message is the
        # same whichever rank gets here first.
        (low, low_call), (high, high_call) = sorted([(self.rank, call), (peer, theirs)], key=lambda side: side[0])
        why = disagreement(low_call, high_call)
        if why is not None:
            raise RankMismatchError(
                f"ranks {low} and {high} disagree on {what}: {why}. Rank {low} calls {low_call.describe()} at {low_call.where()}; "
                f"rank {high} calls {high_call.describe()} at {high_call.where()}. On the device this collective would hang or compute "
                "garbage. Make every rank of the group call the same collectives, with the same shapes, in the same order."
            )

    def _placed_by(self, channel: str, peer: int) -> int:
        """How many calls ``peer`` has placed on ``channel`` in the graphs it has compiled
        (0 before its first). A peer that has placed calls up to one this rank's current
        graph has not run yet cannot place more: its next graph comes only after the
        current one runs, which waits for this rank's."""
        placed_key = f"{PREFIX}placed/{channel}/{peer}"
        if not self.store.check([placed_key]):
            return 0
        value = self.store.get(placed_key)
        return int(value.decode() if isinstance(value, bytes) else value)

    def after_compiled_run(self) -> None:
        self.store.set(f"{PREFIX}done/{self.rank}", json.dumps(self.positions))
        last_on_channel = {call.channel_key: call for call in self.calls}  # one check per channel and peer
        for call in last_on_channel.values():
            for peer in call.members:
                if peer != self.rank:
                    self._check_none_left(call, peer)

    def _check_none_left(self, call: CollectiveCall, peer: int) -> None:
        """At the end of this rank's compiled run: ``peer`` placed no call on ``call``'s
        channel that this rank never makes."""
        made = self.positions.get(call.channel_key, 0)
        if self._placed_by(call.channel_key, peer) <= made:
            return
        theirs = CollectiveCall.from_json(json.loads(self.store.get(f"{PREFIX}call/{call.channel_key}/{made}/{peer}")))
        raise RankMismatchError(
            f"ranks {self.rank} and {peer} disagree on collective #{made + 1} on {_channel_words(call)}: rank {peer} calls "
            f"{theirs.describe()} at {theirs.where()}; rank {self.rank} ended its compiled run after {made} collective(s) there "
            "and never calls it. On the device this collective would hang. Make every rank of the group call the same "
            "collectives in the same order."
        )

    # -- which graphs' IR runs ----------------------------------------------------------
    def runnable_everywhere(self, indexes: list[int], round_name: str = "") -> list[int]:
        """The graphs among ``indexes`` every rank can run (each rank gives its own);
        ``round_name`` keeps one exchange apart from the next (a program's compiles)."""
        # A graph runs on CPU where every rank has it with the same collectives: a graph of
        # one index may hold other calls on another rank (its graph broke elsewhere), and
        # its run would wait there for ever.
        mine = {str(index): self._channels_of(index) for index in indexes}
        self.store.set(f"{PREFIX}ir/{round_name}{self.rank}", json.dumps(mine))
        everywhere = set(mine)
        for peer in range(self.world_size):
            if peer != self.rank:
                self.phase(f"waiting for rank {peer} to finish its capture")
                theirs = json.loads(self.wait_for(f"{PREFIX}ir/{round_name}{peer}", f"rank {peer} to finish its capture"))
                everywhere = {index for index in everywhere if index in theirs and theirs[index] == mine[index]}
        return sorted(int(index) for index in everywhere)

    def _channels_of(self, index: int) -> list[str]:
        """The channels graph ``index`` calls collectives on, in order (one entry per call)."""
        return [call.channel_key for call in self.calls if call.graph == index]

    def program_hooks(self) -> RankHooks:
        """The hooks for a program that compiles again and again (``fxlab run``): each
        compile's exchange of runnable graphs is a round of its own."""
        rounds = [0]

        def runnable_everywhere(indexes: list[int]) -> list[int]:
            rounds[0] += 1
            return self.runnable_everywhere(indexes, f"{rounds[0]}/")

        return RankHooks(self.before_graph_runs, self.after_compiled_run, runnable_everywhere)

    # -- plain exchange ------------------------------------------------------------------
    def wait_for(self, key: str, what: str) -> str:
        if self._poll(lambda: key if self.store.check([key]) else None) is None:
            raise RankTimeoutError(
                f"waited {self.timeout:g} s for {what} in vain. See that rank's log; raise --timeout if it is only slow."
            )
        value = self.store.get(key)
        return value.decode() if isinstance(value, bytes) else str(value)

    def _poll(self, probe: Callable[[], str | None]) -> str | None:
        deadline = time.monotonic() + self.timeout
        while True:
            found = probe()
            if found is not None or time.monotonic() >= deadline:
                return found
            time.sleep(POLL_SECONDS)


def _channel_words(call: CollectiveCall) -> str:
    if call.op in ("_send", "_recv"):
        group, pair = call.channel.rsplit(" ", 1)
        return f"the messages {pair.replace('->', ' to ')} of group {group}"
    return f"group {call.channel}"
