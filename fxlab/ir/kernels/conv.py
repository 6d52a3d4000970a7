"""Kernels of GE convolution, pooling, resize and pad ops (NCHW / NCDHW)."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from fxlab.ir.kernels.registry import register_kernel
from fxlab.ir.model import IrOp


def _pairs(pads: list[int]) -> list[int]:
    """GE's (before, after) pads from the first spatial dim as F.pad's (last dim first)."""
    pairs = [pads[i : i + 2] for i in range(0, len(pads), 2)]
    return [v for pair in reversed(pairs) for v in pair]


@register_kernel("Conv2D", "Conv3D")
def conv(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, weight, bias = inputs[0], inputs[1], inputs[2] if len(inputs) > 2 else None
    if attrs.get("data_format", "NCHW") not in ("NCHW", "NCDHW"):
        raise NotImplementedError(f"data_format {attrs['data_format']} is not run by the reference executor")
    x = F.pad(x, _pairs(list(attrs["pads"])))
    fn = F.conv2d if op.type == "Conv2D" else F.conv3d
    return [fn(x, weight, bias, list(attrs["strides"])[2:], 0, list(attrs.get("dilations", []))[2:] or 1, attrs.get("groups", 1))]


@register_kernel("MaxPoolWithArgmaxV1")
def max_pool_with_argmax_v1(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """``argmax`` here is ATen's flat index per plane (int32), not GE's bit mask."""
    ksize, strides, pads, dilation = (list(attrs[k])[1:3] for k in ("ksize", "strides", "pads", "dilation"))
    y, indices = F.max_pool2d(inputs[0], ksize, strides, pads, dilation, attrs.get("ceil_mode", False), return_indices=True)
    return [y, indices.to(torch.int32)]


@register_kernel("AvgPoolV2")
def avg_pool_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    ksize, strides, pads = list(attrs["ksize"])[2:], list(attrs["strides"])[2:], list(attrs.get("pads", [0, 0, 0, 0]))
    divisor = attrs.get("divisor_override", 0) or None
    out = F.avg_pool2d(
        inputs[0], ksize, strides, [pads[0], pads[2]], attrs.get("ceil_mode", False), not attrs.get("exclusive", True), divisor
    )
    return [out]


@register_kernel("AdaptiveAvgPool2d")
def adaptive_avg_pool2d(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    height, width = attrs["output_size"]
    return [F.adaptive_avg_pool2d(inputs[0], (height, width))]


@register_kernel("ResizeNearestNeighborV2")
def resize_nearest_neighbor_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    if attrs.get("align_corners", False) or attrs.get("half_pixel_centers", False):
        raise NotImplementedError("only align_corners=False, half_pixel_centers=False is run by the reference executor")
    size = [int(v) for v in inputs[1].tolist()]
    return [F.interpolate(inputs[0], size=size, mode="nearest")]


@register_kernel("PadV3")
def pad_v3(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, paddings = inputs[0], [int(v) for v in inputs[1].reshape(-1).tolist()]
    value = inputs[2].item() if len(inputs) > 2 and inputs[2] is not None else 0
    mode = attrs.get("mode", "constant")
    if mode == "constant":
        return [F.pad(x, _pairs(paddings), value=value)]
    # F.pad pads only spatial dims in these modes: drop the leading (0, 0) pairs.
    pads = _pairs(paddings)[: 2 * (x.dim() - 2)]
    return [F.pad(x, pads, mode={"edge": "replicate", "reflect": "reflect"}[mode])]


@register_kernel("MirrorPad")
def mirror_pad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, paddings = inputs[0], [int(v) for v in inputs[1].reshape(-1).tolist()]
    mode = {"REFLECT": "reflect", "SYMMETRIC": "replicate"}[attrs["mode"]]
    pads = _pairs(paddings)[: 2 * (x.dim() - 2)]  # F.pad pads at most the spatial dims here
    return [F.pad(x, pads, mode=mode)]
