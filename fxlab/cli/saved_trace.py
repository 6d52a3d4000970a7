"""A saved trace folder loaded for a command (``fxlab diff``, ``fxlab dumps --trace``), with
one clear error when the folder is not a trace."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from fxlab.errors import FxlabError, UsageError
from fxlab.saved_layout import MANIFEST


def load_saved_trace(path: Path) -> Any:
    """The :class:`~fxlab.capture.trace.Trace` saved by ``fxlab trace --out`` in ``path``."""
    from fxlab.capture.serialize import load_trace  # lazy: imports torch; this module loads with the command line

    if not path.is_dir():
        what = "does not exist" if not path.exists() else "is not a directory"
        raise UsageError(f"{path} {what}: a saved trace is the directory `fxlab trace MODEL.py --out DIR` writes.")
    try:
        return load_trace(path)
    except FxlabError:
        raise
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(
            f"{path} is not a readable saved trace ({type(exc).__name__}: {exc}). Write it again with `fxlab trace MODEL.py --out {shlex.quote(str(path))}`."
        ) from exc


def is_saved_trace(path: Path) -> bool:
    return path.is_dir() and (path / MANIFEST).is_file()
