"""fxlab's minimal stand-in for ``torch_npu`` (active only inside fxlab runs, when the real
one is missing): the ``npu`` custom ops (fxlab's seed ops and any a plugin defines) run
on CPU, and ``torch_npu.<op>`` calls them as torch_npu exposes its OpPlugin ops."""

from __future__ import annotations

from typing import Any

import torch

import fxlab.ops  # noqa: F401 - defines the npu seed ops
from fxlab.ir.npu_dtypes import TORCH_NPU_DTYPES

from . import meta, npu  # noqa: F401

# torch_npu's own operators (torch.ops.npu.*), defined from a torch_npu copy's schemas and
# Meta functions while fxlab runs, as importing the real torch_npu defines them.
from fxlab.compat.layer import define_torch_npu_operators

define_torch_npu_operators()

# torch_npu's own dtypes (torch_npu.hifloat8, torch_npu.float4_e2m1fn_x2, ...).
globals().update(TORCH_NPU_DTYPES)

__version__ = "0.0+fxlab.standin"


def __getattr__(name: str) -> Any:
    if not name.startswith("_"):
        try:
            return getattr(torch.ops.npu, name)
        except (AttributeError, RuntimeError):
            pass
    raise AttributeError(f"module 'torch_npu' (fxlab stand-in) has no attribute {name!r}")
