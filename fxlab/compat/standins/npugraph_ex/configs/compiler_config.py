"""Stand-in ``npugraph_ex.configs.compiler_config``."""

from __future__ import annotations

from typing import Any

from fxlab.compat.config import NpugraphExConfig as CompilerConfig
from fxlab.compat.config import apply_compile_options

__all__ = ["CompilerConfig", "_process_kwargs_options"]


def _process_kwargs_options(config: Any, kwargs: dict[str, Any]) -> None:
    """npugraph_ex's ``options={...}``: each option set on the flat config by name."""
    apply_compile_options(config, kwargs.get("options"))
