"""CPU reference math of torch_npu's block and MX quantisation operators, shared by their
eager CPU kernels (registered here) and the kernels of the GE ops TorchAir makes for them
(:mod:`fxlab.ir.kernels.npu_block_quant`).

Block quantisation: each (row block x column block) of the last two dims gets the scale
``max|x| / DST_MAX`` (at least ``min_scale``) and its values ``x / scale`` as float8.
MX quantisation and its inverse follow :mod:`fxlab.ir.kernels.npu_mx_reference` along
any axis. The operators whose scale layouts torch_npu does not document precisely
enough to reproduce (grouped block and MX quantisation, the two-level and dual-axis MX
forms, Kronecker and rotation quantisation) have a kernel that says so.
"""

from __future__ import annotations

import math

import torch

from fxlab.ir.kernels.npu_mx_reference import BLOCK, FLOAT8_TYPES, mx_quantize
from fxlab.ir.kernels.npu_reference import cpu_kernel, no_cpu_kernel

_UNSPECIFIED = "its scale layout is not specified exactly enough to reproduce"
_UNSPECIFIED_MATH = "its transform, clipping and rounding are not specified exactly enough to reproduce"


@cpu_kernel("npu_dynamic_block_quant")
def dynamic_block_quant(
    x: torch.Tensor,
    *,
    min_scale: float = 0.0,
    round_mode: str = "rint",
    dst_type: int = 1,
    row_block_size: int = 1,
    col_block_size: int = 128,
    dst_type_max: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(float8 values, float32 scales of shape (..., ceil(rows / r), ceil(cols / c)))."""
    if dst_type not in FLOAT8_TYPES or round_mode != "rint":
        raise NotImplementedError("npu_dynamic_block_quant: only float8 results with round_mode 'rint' have a CPU reference kernel")
    target = FLOAT8_TYPES[dst_type]
    limit = float(dst_type_max) or float(torch.finfo(target).max)
    rows, cols = x.shape[-2:]
    padded = torch.nn.functional.pad(x.float(), (0, -cols % col_block_size, 0, -rows % row_block_size))
    blocks = padded.unflatten(-1, (-1, col_block_size)).unflatten(-3, (-1, row_block_size))
    scale = (blocks.abs().amax(dim=(-3, -1)) / limit).clamp(min=min_scale)
    safe = torch.where(scale == 0, torch.ones_like(scale), scale)
    scaled = blocks / safe.unsqueeze(-2).unsqueeze(-1)
    values = scaled.flatten(-4, -3).flatten(-2)[..., :rows, :cols]
    return values.clamp(-limit, limit).to(target), scale


@cpu_kernel("npu_dynamic_mx_quant")
def dynamic_mx_quant(
    input: torch.Tensor,
    *,
    axis: int = -1,
    round_mode: str = "rint",
    dst_type: int = 296,
    block_size: int = 32,
    scale_alg: int | None = 0,
    dst_type_max: float = 0.0,
    max_low_bound: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """MX quantisation along ``axis`` in blocks of 32; the scale pairs sit where the
    axis was (``(..., ceil(n / 64), ..., 2)``)."""
    if block_size != BLOCK or round_mode != "rint" or max_low_bound:
        raise NotImplementedError(
            "npu_dynamic_mx_quant: block sizes other than 32, round modes other than rint and max_low_bound have no CPU reference kernel"
        )
    axis = axis % input.dim()
    if axis != input.dim() - 1 and dst_type not in FLOAT8_TYPES:
        raise NotImplementedError("npu_dynamic_mx_quant: float4 results along another axis than the last have no CPU reference kernel")
    values, scales = mx_quantize(input.movedim(axis, -1), dst_type, scale_alg or 0, dst_type_max)
    return values.movedim(-1, axis), scales.movedim(-2, axis)


@cpu_kernel("npu_anti_mx_quant")
def anti_mx_quant(
    x: torch.Tensor, mxscale: torch.Tensor, *, axis: int | None = -1, dst_type: int | None = 15, src_type: int | None = 292
) -> torch.Tensor:
    """float8 values times ``2 ** (scale - 127)`` of their block of 32 along ``axis``."""
    if x.dtype == torch.uint8:
        raise NotImplementedError("npu_anti_mx_quant of float4 values has no CPU reference kernel (float8 has)")
    axis = (axis if axis is not None else -1) % x.dim()
    moved = x.float().movedim(axis, -1)
    exponents = mxscale.movedim(axis, -2).flatten(-2).float()[..., : math.ceil(moved.shape[-1] / BLOCK)] - 127
    factors = torch.exp2(exponents).repeat_interleave(BLOCK, dim=-1)[..., : moved.shape[-1]]
    out = {5: torch.float16, 6: torch.float32, 15: torch.bfloat16}[dst_type if dst_type is not None else 15]
    return (moved * factors).movedim(-1, axis).to(out)


# The operators whose kernel public documentation does not specify exactly enough:
# grouped block quantisation (restarting at each group, its scale rows padded as the
# device pads them), grouped MX quantisation (down the rows of each group), MX
# quantisation per 32 x 32 block, along both axes (both results), two-level MX (a float
# scale per 512, an e8m0 one per 32, to float4), FlatQuant's Kronecker transform and the
# block-diagonal rotation before a per-token quantisation.
for _name, _why in (
    ("npu_grouped_dynamic_block_quant", _UNSPECIFIED),
    ("npu_grouped_dynamic_mx_quant", _UNSPECIFIED),
    ("npu_dynamic_block_mx_quant", _UNSPECIFIED),
    ("npu_dynamic_mx_quant_with_dual_axis", _UNSPECIFIED),
    ("npu_dynamic_dual_level_mx_quant", _UNSPECIFIED),
    ("npu_kronecker_quant", _UNSPECIFIED_MATH),
    ("npu_rotate_quant", _UNSPECIFIED_MATH),
):
    cpu_kernel(_name)(no_cpu_kernel(_name, _why))
