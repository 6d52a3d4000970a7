"""fxlab.heap: the collector's settings for one command, undone after it; the library and
a program calling it keep the collector as they set it."""
from __future__ import annotations

import contextlib
import gc

import pytest

from fxlab.heap import LONG_LIVED_GEN0_THRESHOLD, long_lived_heap


class Node:
    pass


def _cycles(count: int) -> None:
    for _ in range(count):
        node = Node()
        node.self = node  # type: ignore[attr-defined]  # an unreachable cycle once the loop moves on


def test_inside_the_young_generation_is_collected_less_often_and_what_was_alive_is_frozen():
    before = gc.get_threshold()
    keep = [object() for _ in range(1000)]
    with long_lived_heap():
        assert gc.get_threshold() == (max(before[0], LONG_LIVED_GEN0_THRESHOLD), *before[1:])
        assert gc.get_freeze_count() >= len(keep)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_survivors_of_a_full_collection_are_frozen_and_cycles_still_collected():
    with long_lived_heap():
        frozen = gc.get_freeze_count()
        kept = [[] for _ in range(1000)]  # alive: frozen by the next full collection
        _cycles(100)
        gc.collect()  # a full collection, as the collector runs one when its thresholds say
        assert gc.get_freeze_count() >= frozen + len(kept)
        assert not any(type(o) is Node for o in gc.get_objects())  # the garbage was not frozen


def test_cycles_are_collected_without_being_asked():
    with long_lived_heap():
        _cycles(5 * LONG_LIVED_GEN0_THRESHOLD)
        pending = sum(type(o) is Node for o in gc.get_objects())
    # No explicit collection: the young generation ran as allocations passed the threshold.
    assert pending <= 2 * LONG_LIVED_GEN0_THRESHOLD


def test_everything_is_undone_after_an_error():
    before, callbacks = gc.get_threshold(), list(gc.callbacks)
    with pytest.raises(RuntimeError), long_lived_heap():
        raise RuntimeError("boom")
    assert (gc.get_threshold(), gc.callbacks, gc.get_freeze_count()) == (before, callbacks, 0)


def test_capturing_through_the_library_leaves_the_callers_collector_alone(write_model):
    import fxlab

    path = write_model("import torch\nmodel = torch.nn.Linear(4, 2)\nexample_inputs = (torch.randn(3, 4),)\n")
    before = gc.get_threshold()
    gc.set_threshold(123, 4, 5)
    try:
        trace = fxlab.trace(path)  # as a program calls it
        assert trace.status == "ok"
        assert gc.get_threshold() == (123, 4, 5) and gc.get_freeze_count() == 0 and gc.isenabled()
    finally:
        gc.set_threshold(*before)


def test_a_command_sets_the_collector_for_its_run_and_undoes_it(monkeypatch):
    from fxlab import heap
    from fxlab.cli.main import main

    seen = []

    @contextlib.contextmanager
    def spy():  # type: ignore[no-untyped-def]
        with long_lived_heap():
            seen.append(gc.get_threshold()[0])
            yield

    monkeypatch.setattr(heap, "long_lived_heap", spy)
    before = gc.get_threshold()
    with pytest.raises(SystemExit) as done:
        main(["ops", "list", "--json"])
    assert done.value.code in (0, None) and seen == [max(before[0], LONG_LIVED_GEN0_THRESHOLD)]
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
