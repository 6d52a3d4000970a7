"""Stand-in ``npugraph_ex.configs.compiler_config``."""

from __future__ import annotations

from typing import Any

from fxlab.compat.config import NpugraphExConfig as CompilerConfig

__all__ = ["CompilerConfig", "_process_kwargs_options"]


def _process_kwargs_options(config: Any, kwargs: dict[str, Any]) -> None:
    """npugraph_ex's ``options={...}``: each option set on the flat config by name."""
    for option, value in dict(kwargs.get("options", {})).items():
        if option not in config._values:
            raise ValueError(f"Invalid option '{option}'. Supported options: {sorted(config._values)}")
        setattr(config, option, value)
