"""fxlab.stack: a call made with stack room behaves as the plain call, and recursion under
it maps no new stack chunks (CPython 3.11+ on Linux, where chunks exist and page faults
are counted)."""
from __future__ import annotations

import sys

import pytest

from fxlab.stack import with_stack_room

resource = pytest.importorskip("resource")


def test_returns_the_result_and_passes_arguments() -> None:
    assert with_stack_room(lambda a, b=0: (a, b), 1, b=2) == (1, 2)


def test_exceptions_propagate() -> None:
    def fail() -> None:
        raise KeyError("x")

    with pytest.raises(KeyError):
        with_stack_room(fail)


def test_deep_recursion_still_works() -> None:
    def depth(n: int) -> int:
        return 0 if n == 0 else 1 + depth(n - 1)

    assert with_stack_room(depth, 800) == 800


def _oscillate(rounds: int, depth: int) -> None:
    """Go ``depth`` frames deep and back, ``rounds`` times: far more than one 16 KB chunk
    of frames, so the plain stack maps and unmaps a chunk on every round."""

    def down(n: int, pad0: int = 0, pad1: int = 0, pad2: int = 0, pad3: int = 0) -> int:
        return n if n == 0 else down(n - 1, pad0, pad1, pad2, pad3)

    for _ in range(rounds):
        down(depth)


def _faults(fn, *args) -> int:  # type: ignore[no-untyped-def]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    fn(*args)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


@pytest.mark.skipif(sys.implementation.name != "cpython" or sys.version_info < (3, 11) or not sys.platform.startswith("linux"), reason="frame chunks: CPython 3.11+; fault counts: Linux")
def test_recursion_under_stack_room_maps_no_chunks() -> None:
    rounds, depth = 400, 300
    _oscillate(5, depth)  # warm up: caches, the code's specialization
    plain = _faults(_oscillate, rounds, depth)
    roomy = _faults(with_stack_room, _oscillate, rounds, depth)
    assert plain >= rounds  # a chunk mapped and faulted in on every round
    assert roomy < rounds // 10, (plain, roomy)

