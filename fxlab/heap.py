"""Keeping Python's cyclic garbage collector off the heap a capture builds.

Capturing a large model leaves about a million long-lived objects (graphs, fake tensors,
Dynamo's caches). Every full collection walks all of them — most of a second each — and
finds nothing, because they are all still in use. Freezing the heap before a phase that
only adds to it keeps full collections to the new objects; the heap is unfrozen after,
so in a long-lived process it is collected normally again.

While Dynamo and aot_autograd trace, they allocate millions of objects that live for the
whole capture; with the default threshold (a young collection every 700 allocations)
the collector runs thousands of times and promotes them all, which makes full
collections frequent and long. :func:`capture_heap` also collects the young generation
less often during a capture — cycles are still found, a little later.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

# Young-generation threshold while capturing: memory held by unreachable cycles stays
# bounded (a collection still runs every CAPTURE_GEN0_THRESHOLD net allocations).
CAPTURE_GEN0_THRESHOLD = 20_000

_freeze_depth = 0


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """Exclude every object alive now from collections until the block ends. Blocks
    nest: the heap is unfrozen when the outermost one ends."""
    global _freeze_depth
    gc.freeze()
    _freeze_depth += 1
    try:
        yield
    finally:
        _freeze_depth -= 1
        if _freeze_depth == 0:
            gc.unfreeze()


def frozen() -> bool:
    """Inside a :func:`frozen_heap` block (cheaper to ask than ``gc.get_freeze_count``,
    which walks every frozen object)."""
    return _freeze_depth > 0


@contextlib.contextmanager
def capture_heap() -> Iterator[None]:
    """:func:`frozen_heap`, with the young generation collected less often; the
    collector's thresholds are restored after."""
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], CAPTURE_GEN0_THRESHOLD), *thresholds[1:])
    try:
        with frozen_heap():
            yield
    finally:
        gc.set_threshold(*thresholds)


def promote_to_old_generation() -> None:
    """Move every tracked object to the oldest generation without scanning it.

    For a phase that made many objects that will live on (the conversion's IR): the
    young collection their number triggers would only find them alive. ``freeze`` then
    ``unfreeze`` moves them as they are. Skipped when objects are frozen already, which
    ``unfreeze`` would thaw (fxlab's own blocks are asked first: counting frozen objects
    walks them)."""
    if not frozen() and gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection inside the block; the collector is as it was after.

    For work that makes many short-lived containers and no cycles (writing dumps):
    reference counting frees them all, and the young collections their number triggers
    would only walk them."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
