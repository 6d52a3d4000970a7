"""fxlab's minimal stand-in for ``torch_npu`` (active only inside fxlab runs, when the real
one is missing): the ``npu`` custom ops (fxlab's seed ops and any a plugin defines) run
on CPU, and ``torch_npu.<op>`` calls them as torch_npu exposes its OpPlugin ops;
``torch_npu.npu`` is ``torch.npu`` as fxlab runs the npu device on the CPU."""

from __future__ import annotations

from typing import Any

import torch

import fxlab.ops  # noqa: F401 - defines the npu seed ops
from fxlab.compat.npu_device_api import not_emulated
from fxlab.compat.public_names import standin_gap
from fxlab.ir.npu_dtypes import TORCH_NPU_DTYPES

from . import meta, npu, utils  # noqa: F401

# torch_npu's own operators (torch.ops.npu.*), defined from a torch_npu copy's schemas and
# Meta functions while fxlab runs, as importing the real torch_npu defines them.
from fxlab.compat.layer import define_torch_npu_operators

define_torch_npu_operators()

# torch_npu's own dtypes (torch_npu.hifloat8, torch_npu.float4_e2m1fn_x2, ...).
globals().update(TORCH_NPU_DTYPES)

__version__ = "0.0+fxlab.standin"
__all__ = ["HiFloat8Tensor", "erase_stream", "matmul_checksum"]


class HiFloat8Tensor(torch.Tensor):
    """torch_npu's HiFloat8 tensor subclass: not in fxlab's stand-in yet."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        raise standin_gap("torch_npu.HiFloat8Tensor")


def erase_stream(tensor: torch.Tensor, stream: Any) -> None:
    """Forget a stream recorded on ``tensor``: the CPU records none."""
    return None


def matmul_checksum(*args: Any, **kwargs: Any) -> Any:
    raise not_emulated("torch_npu.matmul_checksum", "the NPU's silent-fault checks of its matmul units")


def __getattr__(name: str) -> Any:
    if not name.startswith("_"):
        try:
            return getattr(torch.ops.npu, name)
        except (AttributeError, RuntimeError):
            pass
    raise AttributeError(f"module 'torch_npu' (fxlab stand-in) has no attribute {name!r}")
