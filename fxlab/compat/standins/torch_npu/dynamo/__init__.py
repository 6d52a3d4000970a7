"""Stand-in ``torch_npu.dynamo``: ``torchair`` and ``npugraph_ex``, where the torch_npu
wheel ships them (``from torch_npu.dynamo import torchair``), are the packages fxlab uses
under their own names (the stand-ins, or TorchAir's own when it is loaded)."""

from __future__ import annotations

import importlib
from typing import Any

NESTED_PACKAGES = ("torchair", "npugraph_ex")


def __getattr__(name: str) -> Any:
    if name in NESTED_PACKAGES:
        return importlib.import_module(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
