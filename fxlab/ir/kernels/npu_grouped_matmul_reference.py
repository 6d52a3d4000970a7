"""CPU reference math of torch_npu's grouped matmuls (the experts of an MoE layer), shared
by their eager CPU kernels (registered here) and the kernels of the GE ops TorchAir makes
for them (:mod:`fxlab.ir.kernels.npu_matmul`).

A group list gives the rows of each group as cumulative ends (``group_list_type`` 0) or as
counts (1); rows past the last group are not computed (zeros). Integer products are
exact and dequantised as :mod:`fxlab.ir.kernels.npu_matmul_reference` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from fxlab.ir.kernels.npu_matmul_reference import dequantised, int_matmul, quantised_rows
from fxlab.ir.kernels.npu_reference import SCALAR_TYPES
from fxlab.ir.kernels.npu_quant_reference import rows_by_group
from fxlab.ir.kernels.npu_reference import cpu_kernel


def group_rows(group_list: torch.Tensor | Sequence[int], counts: bool) -> list[int]:
    values = group_list.tolist() if isinstance(group_list, torch.Tensor) else list(group_list)
    return rows_by_group(values, counts)


def _per_group(tensors: Sequence[torch.Tensor] | None, groups: int) -> list[torch.Tensor | None]:
    """One tensor per group from a list holding one per group, or one stacked tensor."""
    if not tensors:
        return [None] * groups
    if len(tensors) == 1 and groups > 1:
        return list(tensors[0].unbind(0))
    return list(tensors)


def _group_product(x: torch.Tensor, w: torch.Tensor, parts: dict[str, Any], out: torch.dtype) -> torch.Tensor:
    """One group's product: float, A16W8 (weight dequantised first) or A8W8 (dequantised after)."""
    if parts.get("antiquant_scale") is not None:
        offset = parts.get("antiquant_offset")
        w = (w.double() + (offset.double() if offset is not None else 0.0)) * parts["antiquant_scale"].double()
        y = torch.matmul(x.double(), w)
        bias = parts.get("bias")
        return (y + bias.double() if bias is not None else y).to(out)
    if x.dtype == torch.int8:
        return dequantised(int_matmul(x, w), parts.get("scale"), parts.get("per_token_scale"), parts.get("bias"), out)
    y = torch.matmul(x.float(), w.float())
    bias = parts.get("bias")
    return (y + bias.float() if bias is not None else y).to(out)


def grouped_products(
    x: list[torch.Tensor], weight: list[torch.Tensor], group_list: Any, group_list_type: int, lists: dict[str, Any], out: torch.dtype
) -> list[torch.Tensor]:
    """Each group's ``x_g @ w_g`` with its own scales and bias."""
    weights = list(weight[0].unbind(0)) if len(weight) == 1 and weight[0].dim() == 3 else list(weight)
    groups = len(weights)
    per_group = {name: _per_group(tensors, groups) for name, tensors in lists.items() if name != "per_token_scale"}
    if len(x) == 1 and group_list is not None:
        sizes = group_rows(group_list, group_list_type == 1)
        xs = list(x[0][: sum(sizes)].split(sizes))
        token_scale = lists.get("per_token_scale")
        token_scales = list(token_scale[0][: sum(sizes)].split(sizes)) if token_scale else [None] * len(sizes)
    else:
        xs, token_scales = list(x), [None] * len(x)
    results = []
    for g, (xg, wg) in enumerate(zip(xs, weights)):
        parts = {name: values[g] for name, values in per_group.items()}
        parts["per_token_scale"] = token_scales[g]
        results.append(_group_product(xg, wg, parts, out))
    return results


@cpu_kernel("npu_grouped_matmul", "npu_grouped_matmul.List")
def grouped_matmul(
    x: list[torch.Tensor],
    weight: list[torch.Tensor],
    *,
    bias: list[torch.Tensor] | None = None,
    scale: list[torch.Tensor] | None = None,
    offset: list[torch.Tensor] | None = None,
    antiquant_scale: list[torch.Tensor] | None = None,
    antiquant_offset: list[torch.Tensor] | None = None,
    per_token_scale: list[torch.Tensor] | None = None,
    group_list: Any = None,
    split_item: int | None = 0,
    group_type: int | None = None,
    group_list_type: int | None = 0,
    act_type: int | None = 0,
    output_dtype: int | None = None,
    **options: Any,
) -> list[torch.Tensor]:
    """``y_g = x_g @ w_g (+ b_g)``: with one ``x`` and a group list (group_type 0) the rows
    of ``x`` are split into groups; else ``x`` and ``weight`` are paired. split_item
    0/1 returns one tensor per group, 2/3 them concatenated (rows past the groups zero)."""
    extra = [k for k, v in options.items() if v not in (None, [], 0)]
    if extra or offset or (act_type or 0) != 0 or group_type == 2:
        raise NotImplementedError(
            f"npu_grouped_matmul: {', '.join(extra) or 'offset, act_type or group_type 2'} have no CPU reference kernel"
        )
    out = SCALAR_TYPES[output_dtype] if output_dtype is not None else (torch.int8 if x[0].dtype == torch.int8 else x[0].dtype)
    lists = {
        "bias": bias,
        "scale": scale,
        "antiquant_scale": antiquant_scale,
        "antiquant_offset": antiquant_offset,
        "per_token_scale": per_token_scale,
    }
    results = grouped_products(list(x), list(weight), group_list, group_list_type or 0, lists, out)
    if (split_item or 0) in (2, 3):
        stacked = torch.cat(results) if results else x[0].new_zeros((0, weight[0].shape[-1]), dtype=out)
        rows = sum(t.shape[0] for t in x)
        return [torch.cat([stacked, stacked.new_zeros((rows - stacked.shape[0], stacked.shape[1]))])]
    return results


@cpu_kernel("npu_grouped_matmul_finalize_routing")
def grouped_matmul_finalize_routing(
    x: torch.Tensor,
    w: torch.Tensor,
    group_list: torch.Tensor,
    *,
    scale: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    offset: torch.Tensor | None = None,
    pertoken_scale: torch.Tensor | None = None,
    shared_input: torch.Tensor | None = None,
    logit: torch.Tensor | None = None,
    row_index: torch.Tensor | None = None,
    dtype: torch.dtype | None = None,
    shared_input_weight: float = 1.0,
    shared_input_offset: int = 0,
    output_bs: int = 0,
    group_list_type: int = 1,
    **options: Any,
) -> torch.Tensor:
    """The experts' int8 products (dequantised, times each row's ``logit``) summed into
    the rows ``row_index`` names; ``shared_input * shared_input_weight`` added from row
    ``shared_input_offset`` on. float32 (output_bs, N)."""
    if offset is not None or bias is not None or any(v is not None for v in options.values() if not isinstance(v, list)):
        raise NotImplementedError("npu_grouped_matmul_finalize_routing: bias, offset and float8/float4 modes have no CPU reference kernel")
    sizes = group_rows(group_list, group_list_type == 1)
    products = []
    for g, (xg, ts) in enumerate(
        zip(x[: sum(sizes)].split(sizes), pertoken_scale[: sum(sizes)].split(sizes) if pertoken_scale is not None else [None] * len(sizes))
    ):
        products.append(dequantised(int_matmul(xg, w[g]), scale[g] if scale is not None else None, ts, None, torch.float64))
    rows = torch.cat(products) if products else torch.zeros(0, w.shape[-1], dtype=torch.float64)
    if logit is not None:
        rows = rows * logit.double()[: rows.shape[0]].unsqueeze(-1)
    out = torch.zeros(output_bs or x.shape[0], w.shape[-1], dtype=torch.float64)
    targets = row_index.long()[: rows.shape[0]] if row_index is not None else torch.arange(rows.shape[0])
    out.index_add_(0, targets, rows)
    if shared_input is not None:
        out[shared_input_offset : shared_input_offset + shared_input.shape[0]] += shared_input.double() * shared_input_weight
    return out.float()


@cpu_kernel("npu_grouped_matmul_swiglu_quant_v2")
def grouped_matmul_swiglu_quant_v2(
    x: torch.Tensor,
    weight: list[torch.Tensor],
    weight_scale: list[torch.Tensor],
    x_scale: torch.Tensor,
    group_list: torch.Tensor,
    *,
    smooth_scale: torch.Tensor | None = None,
    group_list_type: int | None = 0,
    quant_mode: int | None = 0,
    quant_dtype: int | None = 1,
    **options: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per group: ``x_g @ w_g`` dequantised by ``weight_scale`` and ``x_scale`` (float32),
    SwiGLU of its halves, then per-row int8 quantisation (after the group's
    ``smooth_scale``): (int8 values, row scales). Rows past the groups are zeros."""
    extra = [k for k, v in options.items() if v not in (None, 0, [])]
    if extra or (quant_mode or 0) != 0 or (quant_dtype or 1) != 1:
        raise NotImplementedError(
            f"npu_grouped_matmul_swiglu_quant_v2: {', '.join(extra) or 'float8/float4 quantisation'} have no CPU reference kernel"
        )
    sizes = group_rows(group_list, group_list_type == 1)
    weights = list(weight[0].unbind(0)) if len(weight) == 1 else list(weight)
    scales = list(weight_scale[0].unbind(0)) if len(weight_scale) == 1 else list(weight_scale)
    out_y = torch.zeros(x.shape[0], weights[0].shape[-1] // 2, dtype=torch.int8)
    out_scale = torch.zeros(x.shape[0])
    start = 0
    for g, size in enumerate(sizes):
        rows = slice(start, start + size)
        acc = dequantised(int_matmul(x[rows], weights[g]), scales[g], x_scale[rows], None, torch.float64).float()
        first, second = acc.chunk(2, dim=-1)
        smooth = smooth_scale[g] if smooth_scale is not None else None
        out_y[rows], out_scale[rows] = quantised_rows(F.silu(first) * second, smooth)
        start += size
    return out_y, out_scale


@cpu_kernel("npu_quant_grouped_matmul_dequant")
def quant_grouped_matmul_dequant(
    x: torch.Tensor,
    quantized_weight: torch.Tensor,
    weight_scale: torch.Tensor,
    group_list: torch.Tensor,
    *,
    bias: torch.Tensor | None = None,
    x_scale: torch.Tensor | None = None,
    x_offset: torch.Tensor | None = None,
    smooth_scale: torch.Tensor | None = None,
    quant_mode: str | None = "pertoken",
) -> torch.Tensor:
    """Rows quantised per token (after ``smooth_scale``), each group times its transposed
    int8 weight, dequantised; the group list holds cumulative row ends."""
    if x_scale is not None or x_offset is not None or bias is not None or quant_mode != "pertoken":
        raise NotImplementedError("npu_quant_grouped_matmul_dequant: given x scales, bias and static modes have no CPU reference kernel")
    q, row_scale = quantised_rows(x, smooth_scale)
    out = torch.zeros(x.shape[0], quantized_weight.shape[1], dtype=x.dtype)
    start = 0
    for g, size in enumerate(group_rows(group_list, False)):
        rows = slice(start, start + size)
        out[rows] = dequantised(int_matmul(q[rows], quantized_weight[g].t()), weight_scale[g], row_scale[rows], None, x.dtype)
        start += size
    return out
