"""The garbage collector's settings for one fxlab command: set once, at the command line's
entry, and undone when the command ends.

An fxlab command builds a large heap and keeps it to the end: capturing a large model
leaves about a million long-lived objects (graphs, fake tensors, Dynamo's caches), and the
trace, its records and its IR live until the command exits. With the collector's default
settings that heap is walked over and over and nothing is found: the young generation is
collected every 700 allocations (Dynamo and aot_autograd make millions), which promotes
everything and makes full collections frequent, and each full collection walks the whole
heap (most of a second at 32 layers).

:func:`long_lived_heap` collects the young generation less often (cycles are still found,
a little later) and, after each full collection, freezes what survived (``gc.freeze``):
a later full collection walks only what was made since. The library itself never touches
the collector, so a program that calls :func:`fxlab.capture_trace` keeps its own settings.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from typing import Any

# Young-generation threshold during a command: memory held by unreachable cycles stays
# bounded (a collection still runs every LONG_LIVED_GEN0_THRESHOLD net allocations).
LONG_LIVED_GEN0_THRESHOLD = 20_000
OLDEST_GENERATION = 2


def _freeze_survivors(phase: str, info: dict[str, Any]) -> None:
    """After a full collection, everything left is alive and stays alive: out of the
    collector's sight from now on (``gc.freeze`` moves it to the permanent generation)."""
    if phase == "stop" and info.get("generation") == OLDEST_GENERATION:
        gc.freeze()


@contextlib.contextmanager
def long_lived_heap() -> Iterator[None]:
    """The collector's settings for a process that keeps what it builds (see the module
    docstring); the thresholds, the frozen objects and the callbacks are as before after."""
    thresholds = gc.get_threshold()
    frozen_before = gc.get_freeze_count()
    gc.set_threshold(max(thresholds[0], LONG_LIVED_GEN0_THRESHOLD), *thresholds[1:])
    gc.freeze()  # what is alive at the start (imported modules) is not garbage either
    gc.callbacks.append(_freeze_survivors)
    try:
        yield
    finally:
        gc.callbacks.remove(_freeze_survivors)
        if frozen_before == 0:  # a caller that froze objects itself keeps them frozen
            gc.unfreeze()
        gc.set_threshold(*thresholds)
