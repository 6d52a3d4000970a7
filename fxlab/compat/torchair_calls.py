"""What the stand-in ``torchair.ops`` functions do.

They live in a module of fxlab's own, not in the stand-in files: Dynamo inlines them into
the graphs it traces and refers to the module that defines an inlined function by name,
through an alias it keeps in the compiled frame's globals (``__import_torchair_dot_ops``),
which for ``torch.nn.Module`` calls are torch's own and outlive the run. A stand-in module
named ``torchair.ops`` would then stand where TorchAir's own module of that name is loaded
by a later run in the same process.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab import npu_streams

# The tagged events made in the open block, by tag (TorchAir keeps one such table too).
TAGGED_EVENTS: dict[str, npu_streams.Event] = {}


def wait(tensors: list[torch.Tensor]) -> Any:
    """``torchair.ops.wait``: the stream waits for the producers of ``tensors``."""
    if not tensors or not all(isinstance(t, torch.Tensor) for t in tensors):
        raise ValueError("torchair.ops.wait() takes a non-empty list of tensors")
    return torch.ops.air.wait(tensors)


def record() -> Any:
    """``torchair.ops.record``: an event other streams can wait for."""
    return torch.ops.air.record()


def npu_create_tagged_event(tag: str) -> npu_streams.Event:
    """``torchair.ops.npu_create_tagged_event``: a new event under ``tag`` (a tag names one event)."""
    if tag in TAGGED_EVENTS:
        raise ValueError(f"tagged event tag {tag} is already in use")
    TAGGED_EVENTS[tag] = npu_streams.Event()
    return TAGGED_EVENTS[tag]


def _tag_of(event: npu_streams.Event) -> str:
    for tag, known in TAGGED_EVENTS.items():
        if known is event:
            return tag
    raise ValueError(f"tagged event {event} is not in use: make it with torchair.ops.npu_create_tagged_event(tag)")


def npu_tagged_event_record(event: npu_streams.Event) -> Any:
    return torch.ops.air.tagged_event_record(_tag_of(event))


def npu_tagged_event_wait(event: npu_streams.Event) -> Any:
    return torch.ops.air.tagged_event_wait(_tag_of(event))
