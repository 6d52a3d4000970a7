"""``torch_npu`` as TorchAir's conversion reads it on an NPU machine, while the bridge converts.

TorchAir decides whether it runs on an NPU machine by ``'torch_npu' in sys.modules``, at
conversion time: with torch_npu its pattern fusion pass registers its torch_npu patterns,
the GE graph gets ``_executor_type`` NPU, and the GE options take the device id, the
HF32 switches and the deterministic level from ``torch_npu.npu``. The bridge shows what an NPU machine
gets, so while TorchAir converts, ``sys.modules['torch_npu']`` is the module built here
(unless a real torch_npu is loaded): it answers exactly those calls, carries torch_npu's
own dtypes (``torch_npu.hifloat8``, ``float4_e2m1fn_x2`` ..., which its converters compare
against), and the torch_npu
operators TorchAir's patterns name are defined meanwhile
(:mod:`fxlab.compat.native_standins.npu_ops`). Anything else is looked up on the module
it replaced (fxlab's compat-layer stand-in, while a model runs under the CLI), then among
``torch.ops.npu`` operators, as torch_npu exposes them.

The machine stood in is explicit, since converters branch on it: a named SoC
(``torch_npu.npu.get_device_name()``, read by TorchAir's ``is_arch35()`` in its pooling,
batch-norm, group-norm, ``rsub`` and ``std`` converters; default :data:`DEFAULT_SOC`, an
Atlas A2 part) and a CANN version (``torch_npu.npu.utils._is_gte_cann_version``, which
gates TorchAir's ``recover_view_inplace_pattern``). ``torch.npu`` is there too, as
torch_npu registers it: TorchAir's RNG converters take the device's default generator
from it (``map_graph_rng_state``) and put its initial seed in the graph. The stand-in
device's generator is its own, at the seed a device generator starts with
(:data:`DEVICE_DEFAULT_SEED`): ``torch.manual_seed`` has no NPU generator to reach here,
and the host's generator, which this torch seeds at random, would make every run's
graph differ.
"""

from __future__ import annotations

import contextlib
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from fxlab import npu_streams
from fxlab.ir.npu_dtypes import TORCH_NPU_DTYPES
from fxlab.socs import DEFAULT_SOC

MODULE = "torch_npu"
# The SoC an NPU machine would report when none is named: an Atlas A2 training part.
# The seed an NPU (like a CUDA) device generator starts with until torch.manual_seed.
DEVICE_DEFAULT_SEED = 67280421310721
# The CANN release stood in: a current one, past the 8.3.RC1 that TorchAir's
# recover_view_inplace_pattern asks for.
DEFAULT_CANN = "8.5.0"
_FXLAB_DIR = Path(__file__).resolve().parents[2]


def cann_release(version: str) -> tuple[int, ...]:
    """``"8.3.RC1"`` -> (8, 3, 0, 1); ``"8.5.0"`` -> (8, 5, 1, 0): a release candidate
    sorts before the release of the same number, as CANN orders them."""
    parts = version.strip().split(".")
    numbers = [int(p) for p in parts[:2] if p.isdigit()]
    tail = parts[2] if len(parts) > 2 else "0"
    if tail.upper().startswith("RC"):
        return (*numbers, 0, int(tail[2:] or 0))
    return (*numbers, 1, int(tail) if tail.isdigit() else 0)


def current_device() -> int:
    return int(os.environ.get("ASCEND_DEVICE_ID", "0"))


def npu_namespace(soc: str, cann: str) -> types.SimpleNamespace:
    """What TorchAir's conversion reads from ``torch_npu.npu`` (and ``torch.npu``)."""

    def is_gte_cann_version(version: str, module: str = "CANN") -> bool:
        return cann_release(cann) >= cann_release(version)

    return types.SimpleNamespace(
        _get_deterministic_level=npu_streams.get_deterministic_level,
        # The stream calls TorchAir's aclgraph passes put into a graph: fxlab's CPU ones,
        # so a graph after TorchAir's passes holds the same targets as after fxlab's.
        current_stream=npu_streams.current_stream,
        # A model's own stream calls (its forward runs again in TorchAir's reference run).
        default_stream=npu_streams.default_stream,
        stream=npu_streams.stream,
        # npugraph_ex's replace_stream_event_pass compares every node's target with it.
        set_stream=npu_streams.set_stream,
        get_stream_limit=npu_streams.get_stream_limit,
        set_stream_limit=npu_streams.set_stream_limit,
        set_deterministic_level=npu_streams.set_deterministic_level,
        graph_pool_handle=npu_streams.graph_pool_handle,
        Stream=npu_streams.Stream,
        Event=npu_streams.Event,
        current_device=current_device,
        get_device_name=lambda device=None: soc,
        default_generators=(torch.Generator().manual_seed(DEVICE_DEFAULT_SEED),),
        # torch_npu's defaults: HF32 allowed for convolutions, not for matmuls.
        conv=types.SimpleNamespace(allow_hf32=True),
        matmul=types.SimpleNamespace(allow_hf32=False),
        utils=types.SimpleNamespace(_is_gte_cann_version=is_gte_cann_version),
    )


class _RuntimeModule(types.ModuleType):
    def __init__(self, replaced: types.ModuleType | None, soc: str, cann: str) -> None:
        super().__init__(MODULE, "fxlab's stand-in for torch_npu while TorchAir converts a graph")
        self.__fxlab_standin__ = __name__
        self._replaced = replaced
        self.npu = npu_namespace(soc, cann)
        for name, value in TORCH_NPU_DTYPES.items():  # what TorchAir's converters compare dtypes with
            setattr(self, name, value)

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
def torch_npu_present(soc: str = DEFAULT_SOC, cann: str = DEFAULT_CANN) -> Iterator[bool]:
    """``torch_npu`` in ``sys.modules`` (its ``npu`` submodules and ``torch.npu`` too) for
    the block, as on an NPU machine with SoC ``soc`` and CANN ``cann``; yields whether the
    stand-in was put there (False: a real torch_npu is loaded and stays)."""
    replaced = sys.modules.get(MODULE)
    if is_real(replaced):
        yield False
        return
    module = _RuntimeModule(replaced, soc, cann)
    # ``from torch_npu.npu.utils import ...`` looks the submodules up in sys.modules.
    submodules = {MODULE: module, f"{MODULE}.npu": module.npu, f"{MODULE}.npu.utils": module.npu.utils}
    saved = {name: sys.modules.get(name) for name in submodules}
    torch_module: Any = torch  # torch has no npu module of its own: the stand-in lends one
    had_torch_npu = hasattr(torch, "npu")
    saved_torch_npu = getattr(torch, "npu", None)
    sys.modules.update(submodules)
    torch_module.npu = module.npu
    try:
        yield True
    finally:
        for name, previous in saved.items():
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous
        if had_torch_npu:
            torch_module.npu = saved_torch_npu
        else:
            del torch_module.npu
