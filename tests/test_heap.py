"""fxlab.heap: the heap is frozen inside the block and only there."""
from __future__ import annotations

import gc

import pytest

from fxlab.heap import frozen_heap


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
