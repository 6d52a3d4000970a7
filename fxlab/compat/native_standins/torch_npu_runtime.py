"""``torch_npu`` as TorchAir's conversion reads it on an NPU machine, while the bridge converts.

TorchAir decides whether it runs on an NPU machine by ``'torch_npu' in sys.modules``, at
conversion time: with torch_npu its pattern fusion pass registers its torch_npu patterns,
the GE graph gets ``_executor_type`` NPU, and the GE options take the device id, the
HF32 switches and the deterministic level from ``torch_npu.npu``. The bridge shows what an NPU machine
gets, so while TorchAir converts, ``sys.modules['torch_npu']`` is the module built here
(unless a real torch_npu is loaded): it answers exactly those calls, and the torch_npu
operators TorchAir's patterns name are defined meanwhile
(:mod:`fxlab.compat.native_standins.npu_ops`). Anything else is looked up on the module
it replaced (fxlab's compat-layer stand-in, while a model runs under the CLI), then among
``torch.ops.npu`` operators, as torch_npu exposes them.
"""
from __future__ import annotations

import contextlib
import os
import sys
import types
from pathlib import Path
from typing import Any, Iterator

import torch

MODULE = "torch_npu"
DEVICE_NAME = "Ascend910B1"
_FXLAB_DIR = Path(__file__).resolve().parents[2]


def deterministic_level() -> int:
    """torch_npu keeps its level in step with ``torch.use_deterministic_algorithms``: with
    the level left at its default, that is 1 when deterministic algorithms are on, else 0."""
    return 1 if torch.are_deterministic_algorithms_enabled() else 0


class _RuntimeModule(types.ModuleType):
    def __init__(self, replaced: types.ModuleType | None) -> None:
        super().__init__(MODULE, "fxlab's stand-in for torch_npu while TorchAir converts a graph")
        self.__fxlab_standin__ = __name__
        self._replaced = replaced
        self.npu = types.SimpleNamespace(
            _get_deterministic_level=deterministic_level,
            current_device=lambda: int(os.environ.get("ASCEND_DEVICE_ID", "0")),
            # TorchAir asks for the SoC name to pick forms for the newest SoCs (Ascend950);
            # fxlab shows the Atlas A2 forms, as its own converters do.
            get_device_name=lambda *device: DEVICE_NAME,
            # torch_npu's defaults: HF32 allowed for convolutions, not for matmuls.
            conv=types.SimpleNamespace(allow_hf32=True),
            matmul=types.SimpleNamespace(allow_hf32=False),
        )

    def __getattr__(self, name: str) -> Any:
        replaced = self.__dict__.get("_replaced")
        if replaced is not None and hasattr(replaced, name):
            return getattr(replaced, name)
        if not name.startswith("__"):
            with contextlib.suppress(AttributeError, RuntimeError):
                return getattr(torch.ops.npu, name)
        raise AttributeError(f"module 'torch_npu' (fxlab's stand-in while TorchAir converts) has no attribute {name!r}")


def is_real(module: types.ModuleType | None) -> bool:
    """A torch_npu that is neither this stand-in nor one of fxlab's other stand-ins."""
    if module is None or getattr(module, "__fxlab_standin__", None):
        return False
    origin = getattr(getattr(module, "__spec__", None), "origin", None) or ""
    return not origin.startswith(str(_FXLAB_DIR))


@contextlib.contextmanager
def torch_npu_present() -> Iterator[bool]:
    """``torch_npu`` in ``sys.modules`` for the block, as on an NPU machine; yields whether
    the stand-in was put there (False: a real torch_npu is loaded and stays)."""
    replaced = sys.modules.get(MODULE)
    if is_real(replaced):
        yield False
        return
    sys.modules[MODULE] = _RuntimeModule(replaced)
    try:
        yield True
    finally:
        if replaced is None:
            sys.modules.pop(MODULE, None)
        else:
            sys.modules[MODULE] = replaced
