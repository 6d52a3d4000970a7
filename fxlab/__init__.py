"""fxlab: see every stage of a PyTorch model's way into TorchAir's Ascend IR (GE graph).

Public API: load a model file and capture its trace, then look at the stages, the
Ascend IR and the checks. The command line (``fxlab trace MODEL.py``) is built on these.
"""

from __future__ import annotations

from fxlab.version import __version__

__all__ = ["__version__", "capture_trace", "load_model"]


def __getattr__(name: str):  # lazy: keep `import fxlab` (and `fxlab --help`) light
    if name in ("capture_trace", "load_model"):
        from fxlab import capture

        return getattr(capture, name)
    raise AttributeError(f"module 'fxlab' has no attribute {name!r}")
