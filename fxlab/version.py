"""fxlab's version: one place, which the public API re-exports and traces record."""

from __future__ import annotations

__version__ = "0.1.0"
