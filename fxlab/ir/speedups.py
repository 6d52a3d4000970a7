"""The dump writers' per-op loops in C (``fxlab/ir/_speedups.c``), when they are built.

``pip install`` compiles them where a C compiler and Python's headers are present; where
they are not, the install goes on without them and every writer takes its Python path,
which gives the same bytes (the tests compare the two). Each C function returns ``None``
for input it does not handle, and the caller then takes the Python path too.

``native`` is the C module or ``None``; read it at call time (``speedups.native``), so
that tests can switch it off. ``FXLAB_NO_SPEEDUPS=1`` switches it off for a process.
"""
from __future__ import annotations

import os
from types import ModuleType

from fxlab.ir.model import IrOp


VERSION = 1  # the _speedups.c this code calls (its SPEEDUPS_VERSION)


def _load() -> tuple[ModuleType | None, str]:
    """The C module, or None and why not."""
    if os.environ.get("FXLAB_NO_SPEEDUPS"):
        return None, "FXLAB_NO_SPEEDUPS is set"
    try:
        from fxlab.ir import _speedups  # type: ignore[attr-defined]
    except ImportError:  # no compiler at install, or a source checkout
        return None, "fxlab.ir._speedups not built"
    if getattr(_speedups, "VERSION", None) != VERSION:
        return None, "fxlab.ir._speedups built from other sources: reinstall fxlab to rebuild it"
    _speedups.bind(IrOp)
    return _speedups, ""


native, _why_not = _load()


def describe() -> str:
    """One line for reports: which loops run, and why not the C ones."""
    return "C loops (fxlab.ir._speedups)" if native is not None else f"Python loops ({_why_not})"
