"""Kernels of ``FFT`` and ``FFT2D`` (unnormalised forward transforms over the last one or
two dims) and ``Permute``."""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.registry import register_kernel
from fxlab.ir.model import IrOp


@register_kernel("FFT")
def fft(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [torch.fft.fft(inputs[0], dim=-1)]


@register_kernel("FFT2D")
def fft_2d(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [torch.fft.fft2(inputs[0], dim=(-2, -1))]


@register_kernel("Permute")
def permute(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """An ``order`` shorter than the rank moves the leading dims and keeps the trailing
    ones: TorchAir permutes the float ``[..., 2]`` view of a complex tensor with the
    complex tensor's order."""
    x = inputs[0]
    order = list(attrs.get("order", [0]))
    order += list(range(len(order), x.dim()))
    return [x.permute(order).contiguous()]
