"""CPU reference math of torch_npu's MoE routing operators, shared by their eager CPU
kernels (registered here) and the kernels of the GE ops TorchAir makes for them
(:mod:`fxlab.ir.kernels.npu_moe`).

Each follows torch_npu's documented formula for the drop-less routing serving code uses
(drop-pad and quantised modes that produce float8/int4 raise ``NotImplementedError``
naming the option). Where the documentation leaves an order open, the choice is stated:
experts are sorted stably, tokens of one expert in the order of their flattened
(token, choice) index.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from fxlab.ir.kernels.npu_reference import cpu_kernel

_ROUTING_V2_QUANT_MODES = (-1, 0, 1)


# -- gating -------------------------------------------------------------------------------------
@cpu_kernel("npu_moe_gating_top_k_softmax")
def moe_gating_top_k_softmax(x: torch.Tensor, finished: torch.Tensor | None = None, k: int = 1) -> tuple[torch.Tensor, ...]:
    """(top-k softmax probabilities, their expert ids, row ids): the row id of the j-th
    choice of row i is ``j * rows + i`` (the order ``npu_moe_init_routing`` reads them
    in). A finished row routes every choice to expert ``num_experts``."""
    probs = torch.softmax(x.float(), dim=-1)
    values, experts = probs.topk(k, dim=-1)
    experts = experts.to(torch.int32)
    if finished is not None:
        experts = torch.where(finished.unsqueeze(-1), torch.full_like(experts, x.shape[-1]), experts)
    rows = math.prod(x.shape[:-1])
    row_idx = torch.arange(rows * k, dtype=torch.int32).reshape(k, rows).t().reshape(*x.shape[:-1], k)
    return values.to(x.dtype), experts, row_idx.contiguous()


@cpu_kernel("npu_moe_gating_top_k")
def moe_gating_top_k(
    x: torch.Tensor,
    k: int,
    *,
    bias: torch.Tensor | None = None,
    input_ids: torch.Tensor | None = None,
    tid2eid: torch.Tensor | None = None,
    k_group: int = 1,
    group_count: int = 1,
    group_select_mode: int = 0,
    renorm: int = 0,
    norm_type: int = 0,
    out_flag: bool = False,
    routed_scaling_factor: float = 1.0,
    eps: float = 1e-20,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Group-limited top-k (DeepSeek's router): scores = softmax (norm_type 0) or
    sigmoid (1) of x; the choice adds ``bias``; the experts fall in ``group_count``
    groups, a group scored by its best expert (group_select_mode 0) or its best two (1),
    and only the best ``k_group`` groups are chosen from. The weights are the chosen
    experts' scores (without bias), divided by their sum for sigmoid scores, times
    ``routed_scaling_factor``. Returns (weights, expert ids, the normalised scores)."""
    if input_ids is not None or tid2eid is not None or renorm != 0:
        raise NotImplementedError("npu_moe_gating_top_k: hash routing (input_ids, tid2eid) and renorm=1 have no CPU reference kernel")
    scores = torch.softmax(x.float(), dim=-1) if norm_type == 0 else torch.sigmoid(x.float())
    choice = scores + bias.float() if bias is not None else scores
    rows, experts = choice.shape
    if group_count > 1:
        grouped = choice.view(rows, group_count, experts // group_count)
        group_score = grouped.max(-1).values if group_select_mode == 0 else grouped.topk(2, dim=-1).values.sum(-1)
        keep = torch.zeros_like(group_score, dtype=torch.bool).scatter_(1, group_score.topk(k_group, dim=-1).indices, True)
        choice = choice.masked_fill(~keep.repeat_interleave(experts // group_count, dim=1), float("-inf"))
    chosen = choice.topk(k, dim=-1).indices
    weights = scores.gather(1, chosen)
    if norm_type == 1:
        weights = weights / (weights.sum(-1, keepdim=True) + eps)
    return (weights * routed_scaling_factor).to(x.dtype), chosen.to(torch.int32), scores if out_flag else torch.zeros_like(scores)


# -- init routing ---------------------------------------------------------------------------------
def _sorted_by_expert(expert_idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(expert ids sorted, the flattened (token, choice) index of each), stably."""
    experts, order = torch.sort(expert_idx.reshape(-1).to(torch.int64), stable=True)
    return experts.to(torch.int32), order


@cpu_kernel("npu_moe_init_routing")
def moe_init_routing(x: torch.Tensor, row_idx: torch.Tensor, expert_idx: torch.Tensor, active_num: int = 99) -> tuple[torch.Tensor, ...]:
    """(expanded_x, expanded_row_idx, expanded_expert_idx): the (token, choice) pairs
    sorted by expert; ``expanded_row_idx[row_idx]`` is where each pair went, and
    ``expanded_x`` holds the token of each sorted pair, its first ``min(rows,
    active_num) * k`` rows."""
    rows, k = expert_idx.shape
    experts, order = _sorted_by_expert(expert_idx)
    sorted_row_idx = row_idx.reshape(-1)[order].to(torch.int64)
    expanded_row_idx = torch.empty(rows * k, dtype=torch.int32)
    expanded_row_idx[sorted_row_idx] = torch.arange(rows * k, dtype=torch.int32)
    kept = min(rows, active_num) * k
    return x[sorted_row_idx[:kept] % rows], expanded_row_idx, experts


@cpu_kernel("npu_moe_init_routing_v2")
def moe_init_routing_v2(
    x: torch.Tensor,
    expert_idx: torch.Tensor,
    *,
    scale: torch.Tensor | None = None,
    offset: torch.Tensor | None = None,
    active_num: int = -1,
    expert_capacity: int = -1,
    expert_num: int = -1,
    drop_pad_mode: int = 0,
    expert_tokens_num_type: int = 0,
    expert_tokens_num_flag: bool = False,
    quant_mode: int = -1,
    active_expert_range: Sequence[int] | None = None,
    row_idx_type: int = 0,
    x_dtype: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Drop-less routing of (token, choice) pairs, flattened token by token, sorted by
    expert; pairs of experts outside ``active_expert_range`` are dropped. Returns the
    expanded rows (int8 with their per-row scales for quant_mode 0 static and 1
    dynamic), ``expanded_row_idx`` (row_idx_type 0: where each pair went, -1 when
    dropped; 1: the pair at each position), the tokens per expert (cumulative,
    counts or (expert, count) pairs, when asked), and the scales."""
    if drop_pad_mode != 0 or quant_mode not in _ROUTING_V2_QUANT_MODES or x_dtype is not None:
        raise NotImplementedError(
            "npu_moe_init_routing_v2: drop-pad mode, float8/int4 quant modes and x_dtype have no CPU reference kernel "
            f"(drop_pad_mode={drop_pad_mode}, quant_mode={quant_mode}, x_dtype={x_dtype})"
        )
    rows, k = expert_idx.shape
    first, last = (active_expert_range[0], active_expert_range[1]) if active_expert_range else (0, expert_num)
    experts, order = _sorted_by_expert(expert_idx)
    active = (experts >= first) & (experts < last)
    experts, order = experts[active], order[active]
    # The output has room for every pair (or active_num of them); rows past the routed
    # ones are left as zeros (the device leaves them undefined).
    room = rows * k if active_num <= 0 else min(active_num, rows * k)
    kept = min(room, order.numel())
    positions = torch.full((rows * k,), -1, dtype=torch.int32)
    positions[order] = torch.arange(order.numel(), dtype=torch.int32)
    row_idx = positions if row_idx_type == 0 else torch.cat([order.to(torch.int32), positions.new_full((rows * k - order.numel(),), -1)])
    source = order[:kept] // k
    counts = torch.bincount(experts.to(torch.int64) - first, minlength=last - first)
    expanded, scales = _routed_quant(x[source], experts[:kept] - first, quant_mode, scale, offset, source)
    return (
        _padded(expanded, room),
        row_idx,
        _tokens_per_expert(counts, first, expert_tokens_num_type, expert_tokens_num_flag),
        scales if quant_mode == 0 else _padded(scales, room),
    )


def _padded(t: torch.Tensor, rows: int) -> torch.Tensor:
    return torch.cat([t, t.new_zeros((rows - t.shape[0], *t.shape[1:]))]) if t.shape[0] < rows else t


def _routed_quant(
    tokens: torch.Tensor,
    experts: torch.Tensor,
    quant_mode: int,
    scale: torch.Tensor | None,
    offset: torch.Tensor | None,
    source: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The expanded rows and their scales: unquantised rows keep each token's ``scale``
    (zeros without); static int8 (mode 0) is round(x * scale + offset); dynamic int8
    (mode 1) smooths by the expert's row of ``scale`` and scales each row by max|x| / 127."""
    if quant_mode == -1:
        kept = scale.float()[source] if scale is not None else torch.zeros(tokens.shape[0])
        return tokens, kept
    if quant_mode == 0:
        if scale is None:
            raise NotImplementedError(
                "npu_moe_init_routing_v2: static quantisation (quant_mode 0) without a scale has no CPU reference kernel"
            )
        shifted = tokens.float() * scale.float() + (offset.float() if offset is not None else 0.0)
        return torch.round(shifted).clamp(-128, 127).to(torch.int8), torch.zeros(())
    smoothed = tokens.float() * (scale.float()[experts.long() if scale.shape[0] > 1 else 0] if scale is not None else 1.0)
    row_scale = smoothed.abs().amax(-1) / 127.0
    safe = torch.where(row_scale == 0, torch.ones_like(row_scale), row_scale)
    return torch.round(smoothed / safe.unsqueeze(-1)).clamp(-128, 127).to(torch.int8), row_scale


def _tokens_per_expert(counts: torch.Tensor, first: int, kind: int, wanted: bool) -> torch.Tensor:
    if not wanted:
        return torch.zeros((), dtype=torch.int64)
    if kind == 0:
        return counts.cumsum(0)
    if kind == 1:
        return counts.to(torch.int64)
    ids = torch.arange(first, first + counts.numel())
    return torch.stack([ids, counts], dim=-1).to(torch.int64)


@cpu_kernel("npu_moe_compute_expert_tokens")
def moe_compute_expert_tokens(sorted_experts: torch.Tensor, num_experts: int = 1) -> torch.Tensor:
    """For each expert, the position just past its last row in ``sorted_experts``."""
    bounds = torch.arange(num_experts, dtype=sorted_experts.dtype)
    return torch.searchsorted(sorted_experts.contiguous(), bounds, right=True).to(torch.int32)


# -- finalize routing -----------------------------------------------------------------------------
@cpu_kernel("npu_moe_finalize_routing")
def moe_finalize_routing(
    expanded_permuted_rows: torch.Tensor,
    skip1: torch.Tensor | None,
    skip2: torch.Tensor | None,
    bias: torch.Tensor | None,
    scales: torch.Tensor | None,
    expanded_src_to_dst_row: torch.Tensor,
    expert_for_source_row: torch.Tensor | None,
    drop_pad_mode: int | None = 0,
    k: int | None = 1,
) -> torch.Tensor:
    """``out[i] = skip1[i] + skip2[i] + sum_j scales[i, j] * (expanded[dst(i, j)] +
    bias[expert(i, j)])`` where ``dst(i, j)`` is ``expanded_src_to_dst_row`` at
    ``i + j * rows`` (drop_pad_mode 0, 1) or ``i * k + j`` (2, 3); in drop-pad modes
    (1, 3) the expanded rows are (experts, capacity, H) and a -1 destination adds
    nothing."""
    drop_pad_mode = drop_pad_mode or 0
    choices = scales.shape[1] if scales is not None else (k or 1)
    rows = expanded_src_to_dst_row.numel() // choices
    expanded = expanded_permuted_rows.float().reshape(-1, expanded_permuted_rows.shape[-1])
    dst = expanded_src_to_dst_row.to(torch.int64)
    dst = dst.reshape(choices, rows).t() if drop_pad_mode in (0, 1) else dst.reshape(rows, choices)
    gathered = torch.where((dst >= 0).unsqueeze(-1), expanded[dst.clamp(min=0)], torch.zeros(()))
    if bias is not None and expert_for_source_row is not None:
        gathered = gathered + bias.float()[expert_for_source_row.to(torch.int64)]
    weights = scales.float() if scales is not None else torch.ones(rows, choices)
    out = (gathered * weights.unsqueeze(-1)).sum(1)
    for skip in (skip1, skip2):
        if skip is not None:
            out = out + skip.float()
    return out.to(expanded_permuted_rows.dtype)


# -- expert-parallel re-routing -------------------------------------------------------------------
@cpu_kernel("npu_moe_re_routing")
def moe_re_routing(
    tokens: torch.Tensor,
    expert_token_num_per_rank: torch.Tensor,
    *,
    per_token_scales: torch.Tensor | None = None,
    expert_token_num_type: int = 1,
    idx_type: int = 0,
    tokens_dtype: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Tokens received rank by rank (each rank's tokens expert by expert) reordered
    expert by expert (each expert's tokens rank by rank). Returns the tokens, their
    scales, the source index of each (idx_type 0: gather index) and the tokens per
    expert (counts)."""
    if tokens_dtype is not None or expert_token_num_type != 1 or idx_type != 0:
        raise NotImplementedError("npu_moe_re_routing: tokens_dtype, cumsum counts and scatter indices have no CPU reference kernel")
    counts = expert_token_num_per_rank.to(torch.int64)
    starts = counts.flatten().cumsum(0).reshape(counts.shape) - counts
    order = torch.cat(
        [torch.arange(int(starts[r, e]), int(starts[r, e] + counts[r, e])) for e in range(counts.shape[1]) for r in range(counts.shape[0])]
    )
    scales = per_token_scales[order] if per_token_scales is not None else torch.zeros(tokens.shape[0])
    return tokens[order], scales, order.to(torch.int32), counts.sum(0).to(expert_token_num_per_rank.dtype)


# -- expert load balancing ------------------------------------------------------------------------
@cpu_kernel("npu_moe_update_expert")
def moe_update_expert(
    expert_ids: torch.Tensor,
    eplb_table: torch.Tensor,
    *,
    expert_scales: torch.Tensor | None = None,
    pruning_threshold: torch.Tensor | None = None,
    active_mask: torch.Tensor | None = None,
    local_rank_id: int = -1,
    world_size: int = -1,
    balance_mode: int = 0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Each logical expert id mapped to one of its physical instances, as torch_npu's
    formula for balance_mode 0: row ``e`` of ``eplb_table`` is (count, instance ids...);
    an expert with one instance takes it, else instance ``local_rank_id //
    ceil(world_size / count)``. The mask keeps every choice (no pruning)."""
    if balance_mode != 0 or expert_scales is not None or active_mask is not None:
        raise NotImplementedError(
            "npu_moe_update_expert: balance_mode 1 and pruning (expert_scales, active_mask) have no CPU reference kernel "
            "(their instance choice and mask are not specified exactly enough to reproduce)"
        )
    rows = eplb_table.to(torch.int64)[expert_ids.to(torch.int64)]
    counts = rows[..., 0]
    place = torch.where(counts == 1, torch.ones_like(counts), local_rank_id // torch.ceil(world_size / counts.double()).to(torch.int64) + 1)
    chosen = rows.gather(-1, place.unsqueeze(-1)).squeeze(-1)
    return chosen.to(expert_ids.dtype), torch.ones_like(expert_ids, dtype=torch.bool)
