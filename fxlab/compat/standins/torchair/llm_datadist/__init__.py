"""Stand-in ``torchair.llm_datadist``: tensors over device addresses need an NPU."""

from __future__ import annotations

from typing import Any

from fxlab.compat.npu_device_api import not_emulated

__all__ = ["create_npu_tensors"]


def create_npu_tensors(shape: list[int], dtype: Any, addresses: list[int]) -> Any:
    raise not_emulated("torchair.llm_datadist.create_npu_tensors", "NPU memory at the given device addresses")
