"""fxlab's stand-in for ``torchair`` (active only inside fxlab runs, when the real one is
missing): converters build fxlab's Ascend IR; no Graph Engine, no NPU."""

from __future__ import annotations

import logging

from fxlab.compat.config import CompilerConfig, get_compiler, get_npu_backend, register_replacement
from fxlab.compat.converters import register_fx_node_ge_converter

from . import ge, ops, scope  # noqa: F401 - torchair.ge, torchair.ops and torchair.scope, as in TorchAir

logger = logging.getLogger("torchair")

__all__ = [
    "CompilerConfig",
    "get_compiler",
    "get_npu_backend",
    "logger",
    "register_fx_node_ge_converter",
    "register_replacement",
    "ge",
    "scope",
]
