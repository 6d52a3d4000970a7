"""fxlab: see every stage of a PyTorch model's way into TorchAir's Ascend IR (GE graph).

Public API: trace a model (a model file, or a model object and its inputs) exactly as
``fxlab trace`` does, and save or load the trace::

    import fxlab
    trace = fxlab.trace("model.py", mode="reduce-overhead")
    trace = fxlab.trace(my_module, (x, y))
    fxlab.save_trace(trace, "trace_dir")
    same = fxlab.load_trace("trace_dir")

The command line (``fxlab trace MODEL.py``) is built on these.
"""

from __future__ import annotations

import importlib
from typing import Any

from fxlab.version import __version__

__all__ = ["CaptureSession", "TraceRequest", "__version__", "load_trace", "save_trace", "trace"]

# Each name from the module that defines it; imported on first use, so `import fxlab`
# (and `fxlab --help`) stays light: the capture imports torch's compiler stack.
_HOMES = {
    "trace": "fxlab.session",
    "CaptureSession": "fxlab.session",
    "TraceRequest": "fxlab.session",
    "load_trace": "fxlab.capture.serialize",
    "save_trace": "fxlab.cli.files",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'fxlab' has no attribute {name!r}")

    return getattr(importlib.import_module(home), name)
