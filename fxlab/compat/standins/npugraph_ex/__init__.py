"""fxlab's stand-in for torch_npu's standalone ``npugraph_ex`` backend (active only inside
fxlab runs, when the real one is missing): its flat ``CompilerConfig``, ``get_npu_backend``
(the config drives fxlab's aclgraph stage, as it drives npugraph_ex), ``register_replacement``
(patterns run in fxlab's pattern fusion pass) and ``npugraph_ex.scope``."""

from __future__ import annotations

import logging

from fxlab.compat.config import NpugraphExConfig as CompilerConfig
from fxlab.compat.config import get_compiler, get_npu_backend
from fxlab.compat.config import register_npugraph_ex_replacement as register_replacement

from . import scope  # noqa: F401 - npugraph_ex.scope, as in npugraph_ex

logger = logging.getLogger("npugraph_ex")

__all__ = ["CompilerConfig", "get_compiler", "get_npu_backend", "logger", "register_replacement", "scope"]
