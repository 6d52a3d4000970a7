"""Stand-in ``npugraph_ex.inference``: ``cache_compile`` compiles the method with
npugraph_ex's backend for its config (fxlab keeps no compile cache on disk);
``readable_cache`` reads a cache file only npugraph_ex writes."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import torch

from fxlab.compat.config import NpugraphExConfig, get_npu_backend
from fxlab.compat.npu_device_api import not_emulated

__all__ = ["cache_compile", "readable_cache"]


def cache_compile(
    func: Callable[..., Any], *, config: NpugraphExConfig | None = None, dynamic: bool = True, **kwargs: Any
) -> Callable[..., Any]:
    if not isinstance(func, types.MethodType) or not isinstance(func.__self__, torch.nn.Module):
        raise ValueError(f"Only torch.nn.Module method can be cached now, got {func}")
    return torch.compile(
        func, backend=get_npu_backend(compiler_config=config if config is not None else NpugraphExConfig()), dynamic=dynamic
    )


def readable_cache(cache_bin: str, print_output: bool = True, file: Any = None) -> Any:
    raise not_emulated("npugraph_ex.inference.readable_cache", "a compile cache written by npugraph_ex on an NPU machine")
