"""Stand-in ``torchair.inference``: ``cache_compile`` compiles the method with the backend
its config gives (fxlab keeps no compile cache on disk), ``set_dim_gears`` marks the
dimensions dynamic and records their gears as TorchAir does; ``readable_cache`` reads a
cache file only TorchAir writes."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import torch

from fxlab.compat.config import CompilerConfig, get_npu_backend
from fxlab.compat.npu_device_api import not_emulated

__all__ = ["cache_compile", "readable_cache", "set_dim_gears"]


def cache_compile(
    func: Callable[..., Any],
    *,
    config: CompilerConfig | None = None,
    dynamic: bool = True,
    cache_dir: str | None = None,
    global_rank: int | None = None,
    tp_rank: int | None = None,
    pp_rank: int | None = None,
    **kwargs: Any,
) -> Callable[..., Any]:
    """The method ``func`` of a module, compiled with TorchAir's backend for ``config``."""
    if not isinstance(func, types.MethodType) or not isinstance(func.__self__, torch.nn.Module):
        raise ValueError(f"Only torch.nn.Module method can be cached now, got {func}")
    return torch.compile(func, backend=get_npu_backend(compiler_config=config), dynamic=dynamic)


def readable_cache(cache_bin: str, print_output: bool = True, file: Any = None) -> Any:
    raise not_emulated("torchair.inference.readable_cache", "a compile cache written by TorchAir on an NPU machine")


def set_dim_gears(t: torch.Tensor, dim_gears: dict[int, list[int] | tuple[int, ...]]) -> None:
    """Mark each dimension dynamic for the gears listed (2 to 100 non-zero sizes)."""
    known = getattr(t, "dim_gears", None)
    if known is not None and known != dim_gears:
        raise AssertionError(f"Tensor {t} already has set dim gears, and it is not supported to set it again.")
    for index, gears in dim_gears.items():
        if not isinstance(index, int) or not 0 <= index < t.dim():
            raise AssertionError(f"Dim index in dim_gears must be in range [0, {t.dim() - 1}], but got {index}.")
        if not isinstance(gears, (list, tuple)) or not 2 <= len(gears) <= 100 or any(not isinstance(g, int) or g == 0 for g in gears):
            raise AssertionError(f"Gears for dim index {index} must be a list or tuple of 2 to 100 non-zero integers, but got {gears}.")
        torch._dynamo.mark_dynamic(t, index)
    t.dim_gears = dim_gears  # type: ignore[attr-defined]
