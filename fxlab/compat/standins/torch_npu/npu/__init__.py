"""Stand-in ``torch_npu.npu``: ``torch.npu`` as fxlab emulates the NPU on the CPU
(:mod:`fxlab.compat.npu_device_api`). Every name is looked up there when first used, which
starts the emulation of the npu device (:mod:`fxlab.compat.npu_device`) for the block."""

from __future__ import annotations

from typing import Any

from fxlab.compat.layer import npu_device_module


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(npu_device_module(), name)
