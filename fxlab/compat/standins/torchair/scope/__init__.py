"""Stand-in ``torchair.scope``: fxlab's scope markers (the same ``air::scope_enter`` /
``air::scope_exit`` ops TorchAir uses), looked up on first use."""

from __future__ import annotations

from typing import Any

_NAMES = ("super_kernel", "limit_core_num", "op_never_timeout", "npu_stream_switch")
__all__ = list(_NAMES)


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        import fxlab.scope

        return getattr(fxlab.scope, name)
    raise AttributeError(f"module 'torchair.scope' (fxlab stand-in) has no attribute {name!r}")
