"""Stand-in ``torchair.configs.compiler_config``."""

from __future__ import annotations

from fxlab.compat.config import CompilerConfig

__all__ = ["CompilerConfig"]
