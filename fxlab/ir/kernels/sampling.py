"""Kernels of ``GridSampler2D``/``3D`` (+ ``GridSampler2DGrad``), ``LinSpace`` and
``SearchSorted``."""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.registry import register_kernel
from fxlab.ir.model import DataType, IrOp, torch_dtype

aten = torch.ops.aten
INTERPOLATION = {"bilinear": 0, "nearest": 1, "bicubic": 2}
PADDING = {"zeros": 0, "border": 1, "reflection": 2}


def _modes(attrs: dict[str, Any]) -> tuple[int, int, bool]:
    return (
        INTERPOLATION[attrs.get("interpolation_mode", "bilinear")],
        PADDING[attrs.get("padding_mode", "zeros")],
        attrs.get("align_corners", False),
    )


@register_kernel("GridSampler2D")
def grid_sampler_2d(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, grid = inputs
    return [aten.grid_sampler_2d(x, grid, *_modes(attrs))]


@register_kernel("GridSampler3D")
def grid_sampler_3d(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, grid = inputs
    return [aten.grid_sampler_3d(x, grid, *_modes(attrs))]


@register_kernel("GridSampler2DGrad")
def grid_sampler_2d_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    grad, x, grid = inputs
    return list(aten.grid_sampler_2d_backward(grad, x, grid, *_modes(attrs), [True, True]))


@register_kernel("LinSpace")
def lin_space(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    start, stop, num = inputs
    return [torch.linspace(float(start), float(stop), int(num), dtype=start.dtype if start.is_floating_point() else torch.float32)]


@register_kernel("SearchSorted")
def search_sorted(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    sequence, values, sorter = inputs
    out_int32 = torch_dtype(attrs.get("dtype", DataType.DT_INT64)) == torch.int32
    return [torch.searchsorted(sequence, values, out_int32=out_int32, right=attrs.get("right", False), sorter=sorter)]
