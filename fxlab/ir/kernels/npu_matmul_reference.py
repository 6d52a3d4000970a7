"""CPU reference math of torch_npu's (quantised) matmuls, shared by their eager CPU kernels
(registered here) and the kernels of the GE ops TorchAir makes for them
(:mod:`fxlab.ir.kernels.npu_matmul`).

Integer matmuls accumulate exactly (int64 here, int32 on the device, which holds for the
sizes models use), add an int32 bias before dequantising and a float bias after, and
dequantise by the per-channel ``scale`` times the per-row (per-token) scale. A scale
given as int64/uint64 is a quant parameter from ``npu_trans_quant_param``: its low 32
bits hold the float32 scale's top 19 bits. int8 outputs are requantised: rounded half
away from zero and saturated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from fxlab.ir.kernels.npu_quant_reference import round_half_away
from fxlab.ir.kernels.npu_reference import SCALAR_TYPES, cpu_kernel

# torch's ScalarType codes, which torch_npu's ``int? output_dtype`` arguments use.


def dequant_scale(scale: torch.Tensor) -> torch.Tensor:
    """A float64 scale: float scales as they are, int64 quant parameters decoded."""
    if scale.dtype in (torch.int64, torch.uint64):
        bits = (scale.to(torch.int64) & 0xFFFFE000).to(torch.int32)
        return bits.view(torch.float32).double()
    return scale.double()


def int_matmul(x1: torch.Tensor, x2: torch.Tensor) -> torch.Tensor:
    """The exact integer product (float64, exact below 2**53)."""
    return torch.matmul(x1.double(), x2.double())


def dequantised(
    acc: torch.Tensor, scale: torch.Tensor | None, row_scale: torch.Tensor | None, bias: torch.Tensor | None, out: torch.dtype
) -> torch.Tensor:
    """``(acc + int bias) * scale * row_scale (+ float bias)`` as ``out`` (int8: requantised)."""
    if bias is not None and bias.dtype == torch.int32:
        acc = acc + bias.double()
    if scale is not None:
        acc = acc * dequant_scale(scale)
    if row_scale is not None:
        acc = acc * row_scale.double().unsqueeze(-1)
    if bias is not None and bias.dtype != torch.int32:
        acc = acc + bias.double()
    if out == torch.int8:
        return round_half_away(acc).clamp(-128, 127).to(torch.int8)
    return acc.to(out)


@cpu_kernel("npu_quant_matmul")
def quant_matmul(
    x1: torch.Tensor,
    x2: torch.Tensor,
    scale: torch.Tensor,
    *,
    offset: torch.Tensor | None = None,
    pertoken_scale: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    output_dtype: int | None = None,
    **options: Any,
) -> torch.Tensor:
    """int8 x int8 dequantised by ``scale`` (per channel) and ``pertoken_scale`` (per row);
    int8 output (requantised, ``+ offset``) when no output dtype is given."""
    extra = [k for k, v in options.items() if v is not None]
    if extra or x1.dtype != torch.int8:
        raise NotImplementedError(f"npu_quant_matmul: {', '.join(extra) or 'int4 inputs'} have no CPU reference kernel")
    out_type = SCALAR_TYPES.get(1 if output_dtype is None else output_dtype, torch.float16)
    result = dequantised(int_matmul(x1, x2), scale, pertoken_scale, bias, torch.float64)
    if out_type == torch.int8:
        shifted = result + (offset.double() if offset is not None else 0.0)
        return round_half_away(shifted).clamp(-128, 127).to(torch.int8)
    return result.to(out_type)


@cpu_kernel("npu_weight_quant_batchmatmul")
def weight_quant_batchmatmul(
    x: torch.Tensor,
    weight: torch.Tensor,
    antiquant_scale: torch.Tensor,
    antiquant_offset: torch.Tensor | None = None,
    quant_scale: torch.Tensor | None = None,
    quant_offset: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    antiquant_group_size: int = 0,
    inner_precise: int = 0,
    weight_dtype: int | None = None,
) -> torch.Tensor:
    """``x @ ((weight + antiquant_offset) * antiquant_scale) (+ bias)``; the scales are
    per output channel, or per group of ``antiquant_group_size`` input rows."""
    if quant_scale is not None or weight_dtype is not None or weight.dtype != torch.int8:
        raise NotImplementedError("npu_weight_quant_batchmatmul: int8 outputs (quant_scale) and int4 weights have no CPU reference kernel")
    w = weight.double()
    offset, scale = (antiquant_offset.double() if antiquant_offset is not None else None), antiquant_scale.double()
    if antiquant_group_size:
        scale = scale.repeat_interleave(antiquant_group_size, dim=0)[: w.shape[0]]
        offset = offset.repeat_interleave(antiquant_group_size, dim=0)[: w.shape[0]] if offset is not None else None
    w = (w + (offset if offset is not None else 0.0)) * scale
    y = torch.matmul(x.double(), w)
    return (y + bias.double() if bias is not None else y).to(x.dtype)


def quantised_rows(x: torch.Tensor, smooth: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-row symmetric int8 quantisation of ``x * smooth``: (int8 values, row scales)."""
    scaled = x.float() * (smooth.float() if smooth is not None else 1.0)
    row_scale = scaled.abs().amax(-1) / 127.0
    safe = torch.where(row_scale == 0, torch.ones_like(row_scale), row_scale)
    return torch.round(scaled / safe.unsqueeze(-1)).clamp(-128, 127).to(torch.int8), row_scale


@cpu_kernel("npu_quant_matmul_dequant")
def quant_matmul_dequant(
    x: torch.Tensor,
    quantized_weight: torch.Tensor,
    weight_scale: torch.Tensor,
    *,
    bias: torch.Tensor | None = None,
    x_scale: torch.Tensor | None = None,
    x_offset: torch.Tensor | None = None,
    smooth_scale: torch.Tensor | None = None,
    quant_mode: str | None = "pertoken",
) -> torch.Tensor:
    """``x`` quantised per token (after ``smooth_scale``), times the transposed int8
    weight, dequantised by both scales, in x's type."""
    if x_scale is not None or x_offset is not None or bias is not None or quant_mode != "pertoken":
        raise NotImplementedError("npu_quant_matmul_dequant: given x scales, bias and static modes have no CPU reference kernel")
    q, row_scale = quantised_rows(x, smooth_scale)
    return dequantised(int_matmul(q, quantized_weight.t()), weight_scale, row_scale, None, x.dtype)


@cpu_kernel("npu_quant_matmul_reduce_sum")
def quant_matmul_reduce_sum(
    x1: torch.Tensor, x2: torch.Tensor, *, x1_scale: torch.Tensor | None = None, x2_scale: torch.Tensor | None = None
) -> torch.Tensor:
    """``sum_b (x1[b] @ x2[b]) * x1_scale[b] (per row) * x2_scale`` in bfloat16."""
    acc = int_matmul(x1, x2)
    if x1_scale is not None:
        acc = acc * x1_scale.double().unsqueeze(-1)
    if x2_scale is not None:
        acc = acc * x2_scale.double()
    return acc.sum(0).to(torch.bfloat16)


@cpu_kernel("npu_quant_conv2d")
def quant_conv2d(
    input: torch.Tensor,
    weight: torch.Tensor,
    scale: torch.Tensor,
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    groups: int = 1,
    offset_x: int = 0,
    round_mode: str = "rint",
    output_dtype: int = 0,
    bias: torch.Tensor | None = None,
    offset: torch.Tensor | None = None,
    x_dtype: int | None = None,
    weight_dtype: int | None = None,
) -> torch.Tensor:
    """int8 conv2d (exact), ``+ int bias``, times the per-channel scale."""
    if offset_x or x_dtype is not None or weight_dtype is not None or output_dtype not in SCALAR_TYPES:
        raise NotImplementedError("npu_quant_conv2d: offset_x, float8 inputs and hifloat8 outputs have no CPU reference kernel")
    acc = F.conv2d(input.double(), weight.double(), None, list(strides), list(pads), list(dilations), groups)
    if bias is not None:
        acc = acc + bias.double().reshape(1, -1, 1, 1)
    return (acc * dequant_scale(scale).reshape(1, -1, 1, 1)).to(SCALAR_TYPES[output_dtype])


# -- other matmuls ---------------------------------------------------------------------------------
@cpu_kernel("npu_batch_gather_matmul")
def batch_gather_matmul(
    self: torch.Tensor,
    x: torch.Tensor,
    weight_b: torch.Tensor,
    indices: torch.Tensor,
    weight_a: torch.Tensor | None = None,
    layer_idx: int = 0,
    scale: float = 1e-3,
    y_offset: int = 0,
    y_slice_size: int = -1,
) -> torch.Tensor:
    """LoRA: row ``i`` of ``self`` gets ``scale * B (A x_i)`` added to its slice, with
    adapter ``indices[i]``'s matrices of layer ``layer_idx``."""
    rows = indices.long()
    hidden = x.float()
    if weight_a is not None:
        hidden = torch.einsum("bk,brk->br", hidden, weight_a[rows, layer_idx].float())
    update = torch.einsum("br,bhr->bh", hidden, weight_b[rows, layer_idx].float()) * scale
    width = update.shape[-1] if y_slice_size == -1 else y_slice_size
    out = self.clone()
    out[:, y_offset : y_offset + width] = (self[:, y_offset : y_offset + width].float() + update[:, :width]).to(self.dtype)
    return out


def _inverse(perm: Sequence[int]) -> list[int]:
    return sorted(range(len(perm)), key=lambda i: perm[i])


def permuted_bmm(x1: torch.Tensor, x2: torch.Tensor, perm_x1: Sequence[int], perm_x2: Sequence[int]) -> torch.Tensor:
    """The batched product of ``x1`` and ``x2`` read through their permutations."""
    return torch.matmul(x1.permute(_inverse(perm_x1)).double(), x2.permute(_inverse(perm_x2)).double())


@cpu_kernel("npu_transpose_batchmatmul")
def transpose_batchmatmul(
    input: torch.Tensor,
    weight: torch.Tensor,
    *,
    bias: torch.Tensor | None = None,
    scale: torch.Tensor | None = None,
    perm_x1: Sequence[int] | None = None,
    perm_x2: Sequence[int] | None = None,
    perm_y: Sequence[int] | None = None,
    batch_split_factor: int | None = 1,
) -> torch.Tensor:
    """``(x1 @ x2)`` of the permuted inputs, the result permuted by ``perm_y``."""
    if scale is not None or bias is not None or (batch_split_factor or 1) != 1:
        raise NotImplementedError(
            "npu_transpose_batchmatmul: scale (int8 output), bias and batch_split_factor have no CPU reference kernel"
        )
    y = permuted_bmm(input, weight, perm_x1 or [0, 1, 2], perm_x2 or [0, 1, 2])
    return y.permute(list(perm_y or [1, 0, 2])).to(input.dtype).contiguous()


@cpu_kernel("npu_transpose_quant_batchmatmul")
def transpose_quant_batchmatmul(
    x1: torch.Tensor,
    x2: torch.Tensor,
    dtype: int,
    *,
    bias: torch.Tensor | None = None,
    x1_scale: torch.Tensor | None = None,
    x2_scale: torch.Tensor | None = None,
    group_sizes: Sequence[int] | None = None,
    perm_x1: Sequence[int] | None = None,
    perm_x2: Sequence[int] | None = None,
    perm_y: Sequence[int] | None = None,
    batch_split_factor: int | None = 1,
    x1_dtype: int | None = None,
    x2_dtype: int | None = None,
) -> torch.Tensor:
    """The int8 permuted product dequantised by ``x1_scale`` (per row of the result) and
    ``x2_scale`` (per column)."""
    if bias is not None or group_sizes is not None or x1_dtype is not None or x2_dtype is not None or (batch_split_factor or 1) != 1:
        raise NotImplementedError(
            "npu_transpose_quant_batchmatmul: bias, group_sizes, float8 inputs and batch_split_factor have no CPU reference kernel"
        )
    y = permuted_bmm(x1, x2, perm_x1 or [1, 0, 2], perm_x2 or [0, 1, 2]).permute(list(perm_y or [1, 0, 2]))
    if x1_scale is not None:
        y = y * x1_scale.double().reshape(-1, 1, 1)
    if x2_scale is not None:
        y = y * x2_scale.double()
    return y.to(SCALAR_TYPES[dtype]).contiguous()


@cpu_kernel("npu_linear")
def linear(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    return F.linear(input.float(), weight.float(), bias.float() if bias is not None else None).to(input.dtype)
