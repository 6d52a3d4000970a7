"""Stand-in for TorchAir's device-side native modules (``_npu_graph_executor``,
``_npu_utils``, ``_abi_compat_ge_apis``): every attribute is a function that raises,
since they read NPU memory or call GE, which never happens before compilation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fxlab.compat.native_standins import NativePartStoodIn


def __getattr__(name: str) -> Callable[..., Any]:
    if name.startswith("__"):
        raise AttributeError(name)

    def unavailable(*args: Any, **kwargs: Any) -> Any:
        raise NativePartStoodIn(f"TorchAir's native {name} needs an NPU; fxlab stands it in and stops before GE runs")

    unavailable.__name__ = name
    return unavailable
