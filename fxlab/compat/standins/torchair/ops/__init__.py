"""Stand-in ``torchair.ops``: ``wait`` and ``record``, which order a user stream against
another (``air::wait`` / ``air::record``; on the aclgraph path each waited tensor's producer
records an event the waiting stream waits for), and tagged events (an event made under a
tag, recorded and waited in the graph with ``air::tagged_event_record`` / ``_wait``), from
:mod:`fxlab.compat.torchair_calls`. Run eagerly on the CPU, none has anything to order.
TorchAir's own fused attention operators and ``npu_print`` are not in fxlab's layer yet."""

from __future__ import annotations

from typing import Any

import torch

import fxlab.npu_streams  # noqa: F401 - defines the air:: operators these call where TorchAir has not
from fxlab.compat.public_names import standin_gap
from fxlab.compat.torchair_calls import npu_create_tagged_event, npu_tagged_event_record, npu_tagged_event_wait, record, wait

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


def npu_record_tagged_stream(input: torch.Tensor, tagged_stream: str) -> Any:  # noqa: A002 - TorchAir's name
    raise standin_gap("torchair.ops.npu_record_tagged_stream")


def npu_fused_infer_attention_score(*args: Any, **kwargs: Any) -> Any:
    raise standin_gap("torchair.ops.npu_fused_infer_attention_score")


def npu_fused_infer_attention_score_v2(*args: Any, **kwargs: Any) -> Any:
    raise standin_gap("torchair.ops.npu_fused_infer_attention_score_v2")


def npu_print(*args: Any, summarize_size: int = 3, tensor_detail: bool = False) -> Any:
    raise standin_gap("torchair.ops.npu_print")
