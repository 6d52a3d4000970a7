"""Stand-in ``torchair.ops``: ``wait`` and ``record``, which order a user stream against
another (``air::wait`` / ``air::record``; on the aclgraph path each waited tensor's producer
records an event the waiting stream waits for)."""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["record", "wait"]


def wait(tensors: list[torch.Tensor]) -> Any:
    import fxlab.npu_streams  # noqa: F401 - defines air::wait where TorchAir has not

    if not tensors or not all(isinstance(t, torch.Tensor) for t in tensors):
        raise ValueError("torchair.ops.wait() takes a non-empty list of tensors")
    return torch.ops.air.wait(tensors)


def record() -> Any:
    import fxlab.npu_streams  # noqa: F401 - defines air::record where TorchAir has not

    return torch.ops.air.record()
