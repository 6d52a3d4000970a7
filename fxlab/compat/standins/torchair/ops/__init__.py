"""Stand-in ``torchair.ops``: ``wait`` and ``record``, which order a user stream against
another (``air::wait`` / ``air::record``; on the aclgraph path each waited tensor's producer
records an event the waiting stream waits for), and tagged events (an event made under a
tag, recorded and waited in the graph with ``air::tagged_event_record`` / ``_wait``).
Run eagerly on the CPU, none has anything to order. The fused attention operators and
``npu_print`` of TorchAir's own are not in fxlab's layer yet."""

from __future__ import annotations

from typing import Any

import torch

from fxlab.compat.public_names import standin_gap
from fxlab.npu_streams import Event

__all__ = [
    "npu_fused_infer_attention_score",
    "npu_fused_infer_attention_score_v2",
    "npu_print",
    "npu_create_tagged_event",
    "npu_tagged_event_record",
    "npu_tagged_event_wait",
    "npu_record_tagged_stream",
    "wait",
    "record",
]

# The tagged events made in this block, by tag (TorchAir keeps one such table too).
_EVENTS: dict[str, Event] = {}


def wait(tensors: list[torch.Tensor]) -> Any:
    import fxlab.npu_streams  # noqa: F401 - defines air::wait where TorchAir has not

    if not tensors or not all(isinstance(t, torch.Tensor) for t in tensors):
        raise ValueError("torchair.ops.wait() takes a non-empty list of tensors")
    return torch.ops.air.wait(tensors)


def record() -> Any:
    import fxlab.npu_streams  # noqa: F401 - defines air::record where TorchAir has not

    return torch.ops.air.record()


def npu_create_tagged_event(tag: str) -> Event:
    """A new event under ``tag`` (a tag names one event)."""
    if tag in _EVENTS:
        raise ValueError(f"tagged event tag {tag} is already in use")
    _EVENTS[tag] = Event()
    return _EVENTS[tag]


def _tag_of(event: Event) -> str:
    for tag, known in _EVENTS.items():
        if known is event:
            return tag
    raise ValueError(f"tagged event {event} is not in use: make it with torchair.ops.npu_create_tagged_event(tag)")


def npu_tagged_event_record(event: Event) -> Any:
    return torch.ops.air.tagged_event_record(_tag_of(event))


def npu_tagged_event_wait(event: Event) -> Any:
    return torch.ops.air.tagged_event_wait(_tag_of(event))


def npu_record_tagged_stream(input: torch.Tensor, tagged_stream: str) -> Any:  # noqa: A002 - TorchAir's name
    raise standin_gap("torchair.ops.npu_record_tagged_stream")


def npu_fused_infer_attention_score(*args: Any, **kwargs: Any) -> Any:
    raise standin_gap("torchair.ops.npu_fused_infer_attention_score")


def npu_fused_infer_attention_score_v2(*args: Any, **kwargs: Any) -> Any:
    raise standin_gap("torchair.ops.npu_fused_infer_attention_score_v2")


def npu_print(*args: Any, summarize_size: int = 3, tensor_detail: bool = False) -> Any:
    raise standin_gap("torchair.ops.npu_print")
