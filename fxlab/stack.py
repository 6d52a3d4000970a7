"""Room on Python's frame stack for Dynamo's deep recursion.

CPython (3.11 and later) keeps Python frames in chunks: 16 KB each, mapped when a call
finds no room left in the current one and unmapped when the call that opened it returns.
Dynamo traces a model by recursing through the model's calls, its own bytecode
interpreter and the fake-tensor dispatch, so the top of the stack goes up and down across
chunk boundaries tens of thousands of times, and every crossing maps fresh pages, faults
them in and unmaps them again. Where the boundaries fall depends only on how deep the
caller already is: the same compile of a 16-layer decoder took between 52k and 129k page
faults (0.4 to 1.5 s of system time) depending on the depth it was started from.

:func:`with_stack_room` calls a function from a frame that reserves half of a 1 MB chunk
(CPython sizes a new chunk for the frame that opens it, rounded up to a power of two):
everything the function calls fits in the other half, and no chunk is mapped or unmapped
while it runs. On interpreters without frame chunks the reserved slots are simply unused.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

# Value-stack slots (pointers) the calling frame reserves: 512 KB on a 64-bit build, so
# CPython opens a 1 MB chunk for it and leaves 512 KB for the frames above.
RESERVED_SLOTS = 64 * 1024


def _call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return fn(*args, **kwargs)


# The same function with a frame that claims RESERVED_SLOTS stack slots it never uses.
_call_in_roomy_frame = types.FunctionType(_call.__code__.replace(co_stacksize=RESERVED_SLOTS), _call.__globals__, "_call_in_roomy_frame")


def with_stack_room(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, with its calls' frames in one large stack chunk."""
    return _call_in_roomy_frame(fn, args, kwargs)
