"""CPU reference math of torch_npu's quantisation operators, shared by their eager CPU
kernels (registered here) and the kernels of the GE ops TorchAir makes for them
(:mod:`fxlab.ir.kernels.npu_quant`).

Integer quantisation follows torch_npu's formulas exactly: symmetric ``scale =
max|x| / DST_MAX``, ``y = round(x / scale)``; asymmetric ``scale = (max - min) / (DST_MAX
- DST_MIN)``, ``offset = DST_MAX - max / scale``, ``y = round(x / scale + offset)``; round
half to even, as the device rounds. int4 results are packed eight to an int32, the first
in the lowest bits. float8 (e4m3fn, e5m2) results are torch's float8 casts (round to
nearest even, saturated to the type's largest value). hifloat8 and float4 have no torch
CPU type: those options raise ``NotImplementedError`` naming the type.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from fxlab.ir.kernels.npu_reference import cpu_kernel
from fxlab.ir.npu_dtypes import FLOAT8_TYPES, INT4, QUINT4X2

INT8_CODE, INT4_CODES = 1, (QUINT4X2, INT4)
_RANGES = {"int8": (-128.0, 127.0), "int4": (-8.0, 7.0)}


def target_of(code: int | None) -> str | torch.dtype:
    """``"int8"``, ``"int4"`` or a float8 torch dtype for a torch_npu dtype code."""
    if code is None or code == INT8_CODE:
        return "int8"
    if code in INT4_CODES:
        return "int4"
    if code in FLOAT8_TYPES:
        return FLOAT8_TYPES[code]
    raise NotImplementedError(
        f"quantisation to dtype code {code} (hifloat8, float4) has no CPU reference kernel: torch has no such CPU type"
    )


def type_max(target: str | torch.dtype, override: float = 0.0) -> float:
    if override:
        return float(override)
    return _RANGES[target][1] if isinstance(target, str) else float(torch.finfo(target).max)


def pack_int4(values: torch.Tensor) -> torch.Tensor:
    """int4 values (int8 in [-8, 7]) packed eight to an int32 along the last dim."""
    nibbles = (values.to(torch.int64) & 0xF).unflatten(-1, (-1, 8))
    shifts = torch.arange(8, dtype=torch.int64) * 4
    packed = (nibbles << shifts).sum(-1)
    return torch.where(packed >= 2**31, packed - 2**32, packed).to(torch.int32)


def cast_quantised(scaled: torch.Tensor, target: str | torch.dtype) -> torch.Tensor:
    """Scaled values as the target type: rounded and saturated integers (int4 packed),
    or float8."""
    if isinstance(target, torch.dtype):
        limit = float(torch.finfo(target).max)
        return scaled.clamp(-limit, limit).to(target)
    low, high = _RANGES[target]
    rounded = torch.round(scaled).clamp(low, high).to(torch.int8)
    return pack_int4(rounded) if target == "int4" else rounded


def smoothed(x: torch.Tensor, smooth_scales: torch.Tensor | None, group_index: torch.Tensor | None) -> torch.Tensor:
    """``x`` times its smoothing row: one row for every token, or with ``group_index``
    (cumulative row ends) row ``i`` of ``smooth_scales`` for the tokens of group ``i``."""
    x = x.float()
    if smooth_scales is None:
        return x
    if group_index is None:
        return x * smooth_scales.float()
    rows = x.reshape(-1, x.shape[-1])
    ends = group_index.to(torch.int64).tolist()
    group = torch.bucketize(torch.arange(rows.shape[0]), torch.tensor(ends), right=True).clamp(max=len(ends) - 1)
    return (rows * smooth_scales.float()[group]).reshape(x.shape)


def _reduced(x: torch.Tensor, mode: str, fn: str) -> torch.Tensor:
    """max/min over a token (pertoken: the last dim), the whole tensor, or a channel
    (perchannel: every dim but the last), kept broadcastable."""
    op = torch.amax if fn == "max" else torch.amin
    if mode == "pertoken":
        return op(x, dim=-1, keepdim=True)
    if mode == "pertensor":
        return op(x).reshape([1] * x.dim())
    if mode == "perchannel":
        return op(x, dim=tuple(range(x.dim() - 1)), keepdim=True)
    raise NotImplementedError(f"quant_mode {mode!r} has no CPU reference kernel (pertoken, pertensor, perchannel have)")


def _scale_shape(scale: torch.Tensor, x: torch.Tensor, mode: str) -> torch.Tensor:
    if mode == "pertoken":
        return scale.squeeze(-1)
    if mode == "pertensor":
        return scale.reshape(1)
    return scale.reshape(x.shape[-1])


@cpu_kernel("npu_dynamic_quant")
def dynamic_quant(
    input: torch.Tensor,
    *,
    smooth_scales: torch.Tensor | None = None,
    group_index: torch.Tensor | None = None,
    dst_type: int | None = None,
    quant_mode: str = "pertoken",
    dst_type_max: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric dynamic quantisation: (y, scale)."""
    target = target_of(dst_type)
    x = smoothed(input, smooth_scales, group_index)
    scale = _reduced(x.abs(), quant_mode, "max") / type_max(target, dst_type_max)
    safe = torch.where(scale == 0, torch.ones_like(scale), scale)
    return cast_quantised(x / safe, target), _scale_shape(scale, x, quant_mode)


@cpu_kernel("npu_dynamic_quant_asymmetric")
def dynamic_quant_asymmetric(
    input: torch.Tensor,
    *,
    smooth_scales: torch.Tensor | None = None,
    group_index: torch.Tensor | None = None,
    dst_type: int | None = None,
    quant_mode: str = "pertoken",
    dst_type_max: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Asymmetric dynamic quantisation: (y, scale, offset)."""
    target = target_of(dst_type)
    if not isinstance(target, str):
        raise NotImplementedError("npu_dynamic_quant_asymmetric: float8 results have no CPU reference kernel (integer types have)")
    low, high = _RANGES[target]
    x = smoothed(input, smooth_scales, group_index)
    top, bottom = _reduced(x, quant_mode, "max"), _reduced(x, quant_mode, "min")
    scale = (top - bottom) / (high - low)
    safe = torch.where(scale == 0, torch.ones_like(scale), scale)
    offset = high - top / safe
    return cast_quantised(x / safe + offset, target), _scale_shape(scale, x, quant_mode), _scale_shape(offset, x, quant_mode)


def rows_by_group(group_list: Sequence[int], counts: bool) -> list[int]:
    """Rows per group from a group list of cumulative ends (or of counts)."""
    values = [int(v) for v in group_list]
    if counts:
        return values
    return [end - start for start, end in zip([0, *values[:-1]], values)]


def round_half_away(x: torch.Tensor) -> torch.Tensor:
    """Rounding half away from zero (the device's ``round`` mode; ``rint`` is half to even)."""
    return torch.sign(x) * torch.floor(x.abs() + 0.5)


_QUANTIZED_RANGES = {12: (-128, 127, torch.int8), 1: (-128, 127, torch.int8), 13: (0, 255, torch.uint8), 0: (0, 255, torch.uint8)}


@cpu_kernel("npu_quantize")
def quantize(
    self: torch.Tensor, scales: torch.Tensor, zero_points: torch.Tensor | None, dtype: int, axis: int = 1, div_mode: bool = True
) -> torch.Tensor:
    """``div_mode``: ``round(x / scale + zero_point)`` with the scales along ``axis``
    (half to even); else ``round(x * scale + offset)`` along the last dim (half away from
    zero, the device's ``round`` mode). int8, uint8 or int4 (packed) results."""
    if div_mode:
        axis = axis + self.dim() if axis < 0 else axis
        shape = [-1 if i == axis else 1 for i in range(self.dim())]
        shifted = self.float() / scales.float().reshape(shape) + (zero_points.float().reshape(shape) if zero_points is not None else 0.0)
        low, high, out = _quantized_range(dtype)
        return torch.round(shifted).clamp(low, high).to(out)
    scaled = self.float() * scales.float() + (zero_points.float() if zero_points is not None else 0.0)
    if dtype in INT4_CODES:
        return pack_int4(round_half_away(scaled).clamp(-8, 7))
    low, high, out = _quantized_range(dtype)
    return round_half_away(scaled).clamp(low, high).to(out)


def _quantized_range(code: int) -> tuple[int, int, torch.dtype]:
    if code in _QUANTIZED_RANGES:
        return _QUANTIZED_RANGES[code]
    if code in (14, 3):
        return -(2**31), 2**31 - 1, torch.int32
    raise NotImplementedError(f"npu_quantize to dtype code {code} (float8, hifloat8) has no CPU reference kernel")


def unpack_int4(packed: torch.Tensor) -> torch.Tensor:
    """int32 words of eight int4 values (the first in the lowest bits) as int8 values."""
    shifts = torch.arange(8, dtype=torch.int64) * 4
    nibbles = (packed.to(torch.int64).unsqueeze(-1) >> shifts) & 0xF
    return torch.where(nibbles >= 8, nibbles - 16, nibbles).flatten(-2).to(torch.int8)


@cpu_kernel("npu_anti_quant")
def anti_quant(
    x: torch.Tensor, scale: torch.Tensor, *, offset: torch.Tensor | None = None, dst_dtype: int | None = None, src_dtype: int | None = None
) -> torch.Tensor:
    """``(x + offset) * scale`` as float16 (or ``dst_dtype``); int32 input holds int4s."""
    if x.dtype == torch.uint8:
        raise NotImplementedError("npu_anti_quant of hifloat8 input has no CPU reference kernel: torch has no hifloat8 type")
    values = unpack_int4(x) if x.dtype == torch.int32 else x
    return dequantised(values, scale, offset, torch.float16 if dst_dtype is None else _FLOAT_CODES[dst_dtype])


def dequantised(values: torch.Tensor, scale: torch.Tensor, offset: torch.Tensor | None, out: torch.dtype) -> torch.Tensor:
    """``(values + offset) * scale`` in float32, as ``out``: the anti-quantisation of
    ``npu_anti_quant`` and of its GE op ``AscendAntiQuantV2`` (offset first, then scale)."""
    shifted = values.float() + (offset.float() if offset is not None else 0.0)
    return (shifted * scale.float()).to(out)


_FLOAT_CODES = {5: torch.float16, 6: torch.float32, 15: torch.bfloat16}


@cpu_kernel("npu_group_quant")
def group_quant(
    x: torch.Tensor,
    scale: torch.Tensor,
    group_index: torch.Tensor,
    *,
    offset: torch.Tensor | None = None,
    dst_dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """``round(x * scale[group] + offset)`` (half to even), rows grouped by the
    cumulative ends in ``group_index``; int8 (qint8, the default) or int4 (packed)."""
    scaled = smoothed(x, scale, group_index) + (offset.float() if offset is not None else 0.0)
    if dst_dtype == torch.quint4x2:
        return pack_int4(torch.round(scaled).clamp(-8, 7))
    if dst_dtype == torch.quint8:
        raise NotImplementedError("npu_group_quant to quint8 has no CPU reference kernel (qint8 and quint4x2 have)")
    return torch.round(scaled).clamp(-128, 127).to(torch.int8)


@cpu_kernel("npu_quant_max")
def quant_max(
    x: torch.Tensor, scale: torch.Tensor, *, round_mode: str = "rint", dst_dtype: int = 291, group_list: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(x * scale)`` as float8 (round to nearest even) and max|x| in x's dtype."""
    if dst_dtype not in FLOAT8_TYPES or round_mode != "rint" or group_list is not None:
        raise NotImplementedError("npu_quant_max: only float8 results, round_mode 'rint' and no group_list have a CPU reference kernel")
    return cast_quantised(x.float() * scale.float(), FLOAT8_TYPES[dst_dtype]), x.abs().amax().reshape(1)


@cpu_kernel("npu_trans_quant_param")
def trans_quant_param(scale: torch.Tensor, offset: torch.Tensor | None = None, round_mode: int | None = 0) -> torch.Tensor:
    """float32 scales as the int64 quant parameters the matmul hardware reads: the
    scale's top 19 bits (rounded to them when round_mode is 1), bit 46 set, and a 9-bit
    offset in bits 37-45."""
    bits = scale.float().contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    if round_mode == 1:
        bits = (bits + 0x1000) & 0xFFFFFFFF
    out = (bits & 0xFFFFE000) | (1 << 46)
    if offset is not None:
        rounded = torch.round(offset.float()).clamp(-256, 255).to(torch.int64)
        out = torch.broadcast_tensors(out, rounded)[0]
        out = (out & 0x4000FFFFFFFF) | ((rounded & 0x1FF) << 37)
    return out


@cpu_kernel("npu_dequant_bias")
def dequant_bias(
    x: torch.Tensor,
    weight_scale: torch.Tensor,
    activation_scale: torch.Tensor | None,
    bias: torch.Tensor | None,
    *,
    output_dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """int32 matmul results dequantised: ``(x + int bias) * weight_scale *
    activation_scale (per row) (+ float bias)``."""
    out = x.double()
    if bias is not None and bias.dtype == torch.int32:
        out = out + bias.double()
    out = out * weight_scale.double()
    if activation_scale is not None:
        out = out * activation_scale.double().unsqueeze(-1)
    if bias is not None and bias.dtype != torch.int32:
        out = out + bias.double()
    return out.to(output_dtype or torch.float16)
