"""Stand-in ``torch_npu.npu``: there is no NPU here."""

from __future__ import annotations


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def synchronize(device: object = None) -> None:
    """Nothing to wait for: everything runs on CPU."""
