"""fxlab's stand-in for torch_npu's standalone ``npugraph_ex`` backend (active only inside
fxlab runs, when the real one is missing): its flat ``CompilerConfig``, ``get_npu_backend``
and ``compile_fx`` (the config drives fxlab's aclgraph stage, as it drives npugraph_ex),
``register_replacement`` (patterns run in fxlab's pattern fusion pass) and
``npugraph_ex.scope`` / ``inference`` / ``ops``."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import torch.fx as fx

from fxlab.compat.config import NpugraphExConfig as CompilerConfig
from fxlab.compat.config import get_compiler
from fxlab.compat.config import get_npugraph_ex_backend as get_npu_backend
from fxlab.compat.config import register_npugraph_ex_replacement as register_replacement

from . import inference, ops, scope  # noqa: F401 - npugraph_ex's subpackages, as it imports them
from .configs.compiler_config import _process_kwargs_options

logger = logging.getLogger("npugraph_ex")

__all__ = ["CompilerConfig", "compile_fx", "get_compiler", "get_npu_backend", "logger", "register_replacement"]


def compile_fx(
    gm: fx.GraphModule, example_inputs: Sequence[Any] | None = None, options: dict[str, Any] | None = None
) -> Callable[..., Any]:
    """npugraph_ex's compiler for one FX graph, with a default config and ``options``."""
    config: Any = CompilerConfig()
    _process_kwargs_options(config, {"options": {} if options is None else options})
    return get_compiler(config)(gm, list(example_inputs or []))
