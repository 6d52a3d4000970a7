"""Keeping Python's cyclic garbage collector off the heap a capture leaves behind.

Capturing a large model leaves about a million long-lived objects (graphs, fake tensors,
Dynamo's caches). Every full collection walks all of them — most of a second each — and
finds nothing, because they are all still in use. Freezing the heap before a phase that
only adds to it keeps full collections to the new objects; the heap is unfrozen after,
so in a long-lived process it is collected normally again.
"""
from __future__ import annotations

import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """Exclude every object alive now from collections until the block ends."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
