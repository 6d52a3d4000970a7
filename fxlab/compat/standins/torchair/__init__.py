"""fxlab's stand-in for ``torchair`` (active only inside fxlab runs, when the real one is
missing): converters build fxlab's Ascend IR; no Graph Engine, no NPU. Every public name
of TorchAir 2.13's package is here (``tests/compat/test_public_names.py``)."""

from __future__ import annotations

import logging
from typing import Any

import torch

from fxlab.compat.config import CompilerConfig, get_compiler, get_npu_backend, register_replacement
from fxlab.compat.converter_registration import register_fx_node_ge_converter
from fxlab.compat.npu_device_api import not_emulated

from . import ge, inference, llm_datadist, ops, scope  # noqa: F401 - TorchAir's subpackages, as it imports them

logger = logging.getLogger("torchair")

__all__ = [
    "get_compiler",
    "get_npu_backend",
    "dynamo_export",
    "CompilerConfig",
    "use_internal_format_weight",
    "logger",
    "register_fx_node_ge_converter",
    "patch_for_hcom",
    "register_replacement",
    "npu_format_cast_via_cpu",
]


def dynamo_export(*args: Any, model: torch.nn.Module, **kwargs: Any) -> None:
    """``torchair.dynamo_export``: writes an offline model, which only the Graph Engine builds."""
    raise not_emulated("torchair.dynamo_export", "CANN's Graph Engine to build and write the offline (.air) model")


def use_internal_format_weight(model: torch.nn.Module) -> None:
    """``torchair.use_internal_format_weight``: the NPU keeps Linear and Conv weights in its
    internal formats (FRACTAL_NZ / FRACTAL_Z); the values are the same, and the CPU has
    one format, so the weights stay as they are."""
    return None


def npu_format_cast_via_cpu(
    self: torch.Tensor, acl_format: int, customize_dtype: int | None = None, input_dtype: int | None = None
) -> torch.Tensor:
    """``torchair.npu_format_cast_via_cpu``: the tensor in an NPU storage format; the CPU
    has one format, and the values are the same, so the tensor itself."""
    return self


def patch_for_hcom() -> None:
    """``torchair.patch_for_hcom``: needed only before torch 2.3.1; TorchAir says so and
    patches nothing on a newer torch, as here."""
    logger.warning("For versions 2.3.1 and above of PyTorch, there is no need to call patch_for_hcom anymore.")
