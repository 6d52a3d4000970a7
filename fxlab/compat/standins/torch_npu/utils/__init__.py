"""Stand-in ``torch_npu.utils``: none of torch_npu's utilities is in fxlab's stand-in yet;
each name asked for says so."""

from __future__ import annotations

from typing import Any

from fxlab.compat.public_names import standin_gap


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise standin_gap(f"torch_npu.utils.{name}")
