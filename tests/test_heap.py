"""fxlab.heap: the heap is frozen inside the block and only there; the capture settings
are undone after."""
from __future__ import annotations

import gc

import pytest

from fxlab.heap import CAPTURE_GEN0_THRESHOLD, capture_heap, collector_paused, frozen, frozen_heap, promote_to_old_generation


def test_objects_alive_at_entry_are_frozen_inside_and_released_after():
    keep = [object() for _ in range(1000)]
    assert gc.get_freeze_count() == 0
    with frozen_heap():
        assert gc.get_freeze_count() >= len(keep)
    assert gc.get_freeze_count() == 0


def test_an_error_inside_still_unfreezes():
    with pytest.raises(RuntimeError), frozen_heap():
        raise RuntimeError("boom")
    assert gc.get_freeze_count() == 0


def test_nested_blocks_unfreeze_only_when_the_outermost_ends():
    keep = [object() for _ in range(1000)]
    with frozen_heap():
        outer = gc.get_freeze_count()
        with frozen_heap():
            more = [object() for _ in range(1000)]
        assert gc.get_freeze_count() >= outer  # the inner end did not unfreeze
        assert gc.get_freeze_count() >= len(keep)
    assert gc.get_freeze_count() == 0
    del more


def test_capture_heap_collects_the_young_generation_less_often_then_restores():
    before = gc.get_threshold()
    with capture_heap():
        assert gc.get_threshold()[0] == max(before[0], CAPTURE_GEN0_THRESHOLD)
        assert gc.get_threshold()[1:] == before[1:]
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_capture_heap_restores_the_thresholds_after_an_error():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), capture_heap():
        raise RuntimeError("boom")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_capture_heap_still_collects_cycles_on_its_own():
    class Node:
        pass

    with capture_heap():
        for _ in range(5 * CAPTURE_GEN0_THRESHOLD):
            node = Node()
            node.self = node  # an unreachable cycle once the loop moves on
        del node
        pending = sum(type(o) is Node for o in gc.get_objects())
    # No explicit collection: the young generation ran as allocations passed the threshold.
    assert pending <= 2 * CAPTURE_GEN0_THRESHOLD


def test_frozen_says_whether_a_block_is_open():
    assert not frozen()
    with frozen_heap():
        assert frozen()
        with frozen_heap():
            assert frozen()
        assert frozen()
    assert not frozen()


def test_promote_moves_young_objects_to_the_oldest_generation():
    gc.collect()  # the young generation starts empty: no collection runs while these are made
    young = [[] for _ in range(100)]
    assert any(o is young[0] for o in gc.get_objects(generation=0))
    promote_to_old_generation()
    assert any(o is young[0] for o in gc.get_objects(generation=2))
    assert gc.get_freeze_count() == 0


def test_promote_leaves_a_frozen_heap_frozen():
    with frozen_heap():
        before = gc.get_freeze_count()
        promote_to_old_generation()
        assert gc.get_freeze_count() >= before



def test_collector_paused_turns_collection_off_inside_and_back_on_after():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        with collector_paused():
            raise RuntimeError("inside")
    assert gc.isenabled()


def test_collector_paused_leaves_a_disabled_collector_disabled():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
