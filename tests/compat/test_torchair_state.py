"""fxlab.compat.torchair_state: a destroyed library stays destroyed when it is collected."""
from __future__ import annotations

import gc

import torch

from fxlab.compat.torchair_state import destroy_library

SCHEMA = "fxlab_state_test_op(Tensor x) -> Tensor"


def _define() -> torch.library.Library:
    library = torch.library.Library("fxlab_state_test", "FRAGMENT")
    library.define(SCHEMA)
    return library


def _redefined_packet_after_collecting(destroy) -> tuple[object, object]:
    """Define, destroy, define again; the packet before and after the first library is collected."""
    first = _define()
    torch.ops.fxlab_state_test.fxlab_state_test_op.default
    destroy(first)
    second = _define()
    before = torch.ops.fxlab_state_test.fxlab_state_test_op
    del first
    gc.collect()
    after = torch.ops.fxlab_state_test.fxlab_state_test_op
    destroy_library(second)
    return before, after


def test_torchs_own_destroy_lets_the_finalizer_drop_a_later_definitions_packet():
    # Why destroy_library exists: objects keyed by the packet's overloads go stale.
    before, after = _redefined_packet_after_collecting(lambda lib: lib._destroy())
    assert before is not after


def test_destroy_library_leaves_a_later_definitions_packet_alone():
    before, after = _redefined_packet_after_collecting(destroy_library)
    assert before is after
    assert not hasattr(torch.ops.fxlab_state_test, "fxlab_state_test_op")
