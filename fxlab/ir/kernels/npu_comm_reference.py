"""torch_npu's communication-fused operators on one rank, on CPU.

A trace runs in one process: its groups hold this rank alone, where a collective is the
identity (all-gather, all-reduce, reduce-scatter and all-to-all of one rank give back the
rank's own data). So each operator here is its computation on one rank, in float32:
``x1 @ x2 (+ bias)`` for the fused matmuls (int8 inputs scaled back by ``x1_scale *
x2_scale``), the grouped matmul of the expert-parallel forms, and the MoE dispatch and
combine pair. An operator called with a world size above one needs the other ranks'
data: its kernel raises ``NotImplementedError`` saying so (a multi-rank trace, one
process per rank on gloo, would give each rank its peers' data).

MoE dispatch and combine on one rank, in the layout this module fixes (torch_npu
documents those outputs as opaque, to be handed from dispatch to combine as they are):
``expand_x`` holds each expert's tokens in token order, experts in order, padded with
zeros; ``expand_idx`` is each (token, choice)'s place among its expert's tokens;
``ep_recv_count`` the cumulative token count per expert; ``expert_token_nums`` the count
(or, with ``expert_token_nums_type`` 0, the cumulative count). Combine sums each token's
expert rows weighted by ``expert_scales``.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.npu_norm_reference import rms_norm
from fxlab.ir.kernels.npu_reference import cpu_kernel, meta_outputs


def one_rank(op: str, world_size: int) -> None:
    if int(world_size) > 1:
        raise NotImplementedError(
            f"{op} over {world_size} ranks needs the other ranks' data: a single-process trace has one rank "
            "(tracing one process per rank, on gloo, would run it)"
        )


def mm(x1: torch.Tensor, x2: torch.Tensor, bias: Any = None, x1_scale: Any = None, x2_scale: Any = None) -> torch.Tensor:
    """``x1 @ x2 (+ bias)`` in float32; int8 inputs scaled back per token and channel."""
    out = x1.float() @ x2.float()
    if x1_scale is not None:
        out = out * x1_scale.float()
    if x2_scale is not None:
        out = out * x2_scale.float()
    return out + bias.float() if bias is not None else out


def _unsupported_quant(op: str, options: dict[str, Any], *names: str) -> None:
    given = [n for n in names if options.get(n) is not None]
    if given:
        raise NotImplementedError(f"{op}: {', '.join(given)} have no CPU reference kernel")


# -- matmuls with a collective ---------------------------------------------------------------------------
def all_gather_mm(
    x1: torch.Tensor, x2: torch.Tensor, world_size: int, options: dict[str, Any], out_dtype: torch.dtype, op: str = "npu_all_gather_base_mm"
) -> tuple[torch.Tensor, torch.Tensor]:
    """(y, the gathered x1, or an empty tensor without ``gather_output``)."""
    one_rank(op, world_size)
    _unsupported_quant(op, options, "quant_scale", "x1_dtype", "x2_dtype")
    y = mm(x1, x2, options.get("bias"), options.get("x1_scale"), options.get("x2_scale")).to(out_dtype)
    gathered = x1.clone() if options.get("gather_output", True) else x1.new_empty(0)
    return y, gathered


@cpu_kernel("npu_all_gather_base_mm")
def npu_all_gather_base_mm(
    self: torch.Tensor, x2: torch.Tensor, hcom: str, world_size: int, **options: Any
) -> tuple[torch.Tensor, torch.Tensor]:
    return all_gather_mm(self, x2, world_size, options, self.dtype)


@cpu_kernel("npu_all_gather_quant_mm")
def npu_all_gather_quant_mm(self: torch.Tensor, x2: torch.Tensor, hcom: str, world_size: int, **options: Any) -> tuple[torch.Tensor, ...]:
    meta = meta_outputs("npu_all_gather_quant_mm", (self, x2, hcom, world_size), options)
    y, gathered = all_gather_mm(self, x2, world_size, options, meta[0].dtype, "npu_all_gather_quant_mm")
    return y, gathered, torch.zeros(meta[2].shape, dtype=meta[2].dtype)


def mm_all_reduce(x1: torch.Tensor, x2: torch.Tensor, options: dict[str, Any]) -> torch.Tensor:
    """``x1 @ x2 + bias + x3``: the sum over a group of one rank is the rank's own."""
    quant = ("antiquant_scale", "dequant_scale", "pertoken_scale", "comm_quant_scale_1", "comm_quant_scale_2")
    _unsupported_quant("npu_mm_all_reduce_base", options, *quant)
    if options.get("reduce_op", "sum") != "sum":
        raise NotImplementedError(f"npu_mm_all_reduce_base: reduce_op {options['reduce_op']!r} has no CPU reference kernel (sum has)")
    y = mm(x1, x2, options.get("bias"))
    if options.get("x3") is not None:
        y = y + options["x3"].float()
    return y.to(x1.dtype)


@cpu_kernel("npu_mm_all_reduce_base")
def npu_mm_all_reduce_base(x1: torch.Tensor, x2: torch.Tensor, hcom: str, **options: Any) -> torch.Tensor:
    return mm_all_reduce(x1, x2, options)


def mm_reduce_scatter(x1: torch.Tensor, x2: torch.Tensor, world_size: int, options: dict[str, Any], out_dtype: torch.dtype) -> torch.Tensor:
    one_rank("npu_mm_reduce_scatter_base", world_size)
    _unsupported_quant("npu_mm_reduce_scatter", options, "quant_scale")
    return mm(x1, x2, options.get("bias"), options.get("x1_scale"), options.get("x2_scale")).to(out_dtype)


@cpu_kernel("npu_mm_reduce_scatter_base")
def npu_mm_reduce_scatter_base(self: torch.Tensor, x2: torch.Tensor, hcom: str, world_size: int, **options: Any) -> torch.Tensor:
    return mm_reduce_scatter(self, x2, world_size, options, self.dtype)


@cpu_kernel("npu_quant_mm_reduce_scatter")
def npu_quant_mm_reduce_scatter(
    self: torch.Tensor, x2: torch.Tensor, hcom: str, world_size: int, **options: Any
) -> tuple[torch.Tensor, torch.Tensor]:
    meta = meta_outputs("npu_quant_mm_reduce_scatter", (self, x2, hcom, world_size), options)
    return mm_reduce_scatter(self, x2, world_size, options, meta[0].dtype), torch.zeros(meta[1].shape, dtype=meta[1].dtype)


@cpu_kernel("npu_all_to_all_matmul")
def npu_all_to_all_matmul(
    x1: torch.Tensor,
    x2: torch.Tensor,
    hcom: str,
    world_size: int,
    bias: Any = None,
    all2all_axes: Any = None,
    all2all_out_flag: bool = True,
    comm_mode: Any = None,
) -> tuple[torch.Tensor, Any]:
    """(x1 @ x2 + bias, x1 after the all-to-all when asked)."""
    one_rank("npu_all_to_all_matmul", world_size)
    return mm(x1, x2, bias).to(x1.dtype), (x1.clone() if all2all_out_flag else None)


@cpu_kernel("npu_matmul_all_to_all")
def npu_matmul_all_to_all(
    x1: torch.Tensor, x2: torch.Tensor, hcom: str, world_size: int, bias: Any = None, all2all_axes: Any = None, comm_mode: Any = None
) -> torch.Tensor:
    one_rank("npu_matmul_all_to_all", world_size)
    return mm(x1, x2, bias).to(x1.dtype)


# -- all-to-all-v around a grouped matmul -----------------------------------------------------------------
def grouped_mm(x: torch.Tensor, weight: torch.Tensor, counts: list[int], transpose: bool) -> torch.Tensor:
    """Rows of ``x`` in groups of ``counts``, group ``e`` times ``weight[e]``."""
    parts = x.split([int(c) for c in counts])
    outs = [p.float() @ (w.t() if transpose else w).float() for p, w in zip(parts, weight)]
    return torch.cat(outs).to(x.dtype)


def alltoallv_gmm(gmm_x: torch.Tensor, gmm_weight: torch.Tensor, args: tuple[Any, ...], options: dict[str, Any]) -> tuple[Any, ...]:
    """(gmm_y, mm_y, permute_out): on one rank the all-to-all-v keeps the rows, grouped
    by ``recv_counts`` (expert-major for several local experts)."""
    hcom, ep_world_size, send_counts, recv_counts = args
    one_rank("npu_alltoallv_gmm", ep_world_size)
    gmm_y = grouped_mm(gmm_x, gmm_weight, list(recv_counts), bool(options.get("trans_gmm_weight", False)))
    mm_x, mm_w = options.get("mm_x"), options.get("mm_weight")
    mm_y = None
    if mm_x is not None and mm_w is not None:
        mm_y = mm(mm_x, mm_w.t() if options.get("trans_mm_weight") else mm_w).to(mm_x.dtype)
    permute_out = gmm_x.clone() if options.get("permute_out_flag", False) else None
    return gmm_y, mm_y, permute_out


@cpu_kernel("npu_alltoallv_gmm")
def npu_alltoallv_gmm(gmm_x: torch.Tensor, gmm_weight: torch.Tensor, *args: Any, **options: Any) -> tuple[Any, ...]:
    return alltoallv_gmm(gmm_x, gmm_weight, args, options)


@cpu_kernel("npu_gmm_alltoallv")
def npu_gmm_alltoallv(gmm_x: torch.Tensor, gmm_weight: torch.Tensor, *args: Any, **options: Any) -> tuple[Any, ...]:
    """(y, mm_y): the grouped matmul by ``send_counts``, then the all-to-all-v (one rank)."""
    hcom, ep_world_size, send_counts, recv_counts = args
    one_rank("npu_gmm_alltoallv", ep_world_size)
    gmm_y, mm_y, _ = alltoallv_gmm(gmm_x, gmm_weight, (hcom, ep_world_size, recv_counts, send_counts), options)
    return gmm_y, mm_y


# -- MoE dispatch and combine on one rank -------------------------------------------------------------------
def check_one_rank_moe(op: str, ep_world_size: int, options: dict[str, Any]) -> None:
    one_rank(op, ep_world_size)
    if int(options.get("tp_world_size", 0)) > 1 or int(options.get("shared_expert_rank_num", 0)) > 0:
        raise NotImplementedError(f"{op}: tensor parallelism and shared-expert ranks need several ranks")
    _unsupported_quant(op, options, "scales", "x_active_mask", "tp_send_counts", "activation_scale", "weight_scale", "shared_expert_x")
    if int(options.get("quant_mode", 0)) or int(options.get("comm_quant_mode", 0)):
        raise NotImplementedError(f"{op}: quantised dispatch and combine have no CPU reference kernel")


def moe_dispatch(
    x: torch.Tensor, expert_ids: torch.Tensor, experts: int, options: dict[str, Any], shapes: tuple[tuple[int, ...], ...]
) -> list[torch.Tensor]:
    """The seven outputs (see the module doc); ``shapes`` are the outputs' shapes."""
    flat = expert_ids.reshape(-1).long()
    tokens = torch.arange(expert_ids.shape[0]).repeat_interleave(expert_ids.shape[1])
    order = torch.argsort(flat, stable=True)  # expert-major, token order within an expert
    counts = torch.bincount(flat, minlength=experts)
    starts = torch.cumsum(counts, 0) - counts
    place = torch.empty_like(flat)
    place[order] = torch.arange(flat.numel()) - starts[flat[order]]
    expand_x = x.new_zeros(shapes[0])
    expand_x[: flat.numel()] = x[tokens[order]]
    expand_scales = torch.zeros(shapes[6], dtype=torch.float32)
    if options.get("expert_scales") is not None and expand_scales.numel():
        expand_scales[: flat.numel()] = options["expert_scales"].reshape(-1)[order].float()
    token_nums = counts if int(options.get("expert_token_nums_type", 1)) == 1 else torch.cumsum(counts, 0)
    recv = torch.zeros(shapes[4], dtype=torch.int32)
    recv[:experts] = torch.cumsum(counts, 0)
    return [
        expand_x,
        torch.zeros(shapes[1], dtype=torch.float32),
        place.to(torch.int32),
        token_nums.to(torch.int64),
        recv,
        torch.zeros(shapes[5], dtype=torch.int32),
        expand_scales,
    ]


@cpu_kernel("npu_moe_distribute_dispatch")
def npu_moe_distribute_dispatch(
    x: torch.Tensor, expert_ids: torch.Tensor, group_ep: str, ep_world_size: int, ep_rank_id: int, moe_expert_num: int, **options: Any
) -> tuple[torch.Tensor, ...]:
    check_one_rank_moe("npu_moe_distribute_dispatch", ep_world_size, options)
    meta = meta_outputs("npu_moe_distribute_dispatch", (x, expert_ids, group_ep, ep_world_size, ep_rank_id, moe_expert_num), options)
    return tuple(moe_dispatch(x, expert_ids, moe_expert_num, options, tuple(tuple(m.shape) for m in meta)))


@cpu_kernel("npu_moe_distribute_dispatch_v2")
def npu_moe_distribute_dispatch_v2(
    x: torch.Tensor, expert_ids: torch.Tensor, group_ep: str, ep_world_size: int, ep_rank_id: int, moe_expert_num: int, **options: Any
) -> tuple[torch.Tensor, ...]:
    check_one_rank_moe("npu_moe_distribute_dispatch_v2", ep_world_size, options)
    _unsupported_quant("npu_moe_distribute_dispatch_v2", options, "elastic_info", "performance_info", "y_dtype", "x_dtype", "scales_dtype")
    meta = meta_outputs("npu_moe_distribute_dispatch_v2", (x, expert_ids, group_ep, ep_world_size, ep_rank_id, moe_expert_num), options)
    return tuple(moe_dispatch(x, expert_ids, moe_expert_num, options, tuple(tuple(m.shape) for m in meta)))


def moe_combine(
    expand_x: torch.Tensor, expert_ids: torch.Tensor, expand_idx: torch.Tensor, ep_send_counts: torch.Tensor, expert_scales: torch.Tensor
) -> torch.Tensor:
    """Each token's expert rows weighted by its ``expert_scales``, in float32."""
    flat = expert_ids.reshape(-1).long()
    ends = ep_send_counts.long()
    starts = torch.cat([ends.new_zeros(1), ends[:-1]])
    rows = expand_x.float()[starts[flat] + expand_idx.long()]
    weighted = rows * expert_scales.reshape(-1, 1).float()
    return weighted.reshape(*expert_ids.shape, -1).sum(1).to(expand_x.dtype)


@cpu_kernel("npu_moe_distribute_combine", "npu_moe_distribute_combine_v2")
def npu_moe_distribute_combine(
    expand_x: torch.Tensor,
    expert_ids: torch.Tensor,
    expand_idx: torch.Tensor,
    ep_send_counts: torch.Tensor,
    expert_scales: torch.Tensor,
    group_ep: str,
    ep_world_size: int,
    *args: Any,
    **options: Any,
) -> torch.Tensor:
    check_one_rank_moe("npu_moe_distribute_combine", ep_world_size, options)
    return moe_combine(expand_x, expert_ids, expand_idx, ep_send_counts, expert_scales)


def moe_combine_add_rms_norm(
    tensors: tuple[torch.Tensor, ...], residual_x: torch.Tensor, gamma: torch.Tensor, eps: float
) -> tuple[torch.Tensor, ...]:
    """(y, rstd, x): x = the combined tokens + residual_x, y its RMSNorm."""
    x = moe_combine(*tensors).reshape(residual_x.shape).float() + residual_x.float()
    y, rstd = rms_norm(x, gamma, eps)
    return y.to(residual_x.dtype), rstd, x.to(residual_x.dtype)


@cpu_kernel("npu_moe_distribute_combine_add_rms_norm")
def npu_moe_distribute_combine_add_rms_norm(*args: Any, **options: Any) -> tuple[torch.Tensor, ...]:
    check_one_rank_moe("npu_moe_distribute_combine_add_rms_norm", args[8], options)
    return moe_combine_add_rms_norm(tuple(args[:5]), args[5], args[6], float(options.get("norm_eps", 1e-6)))


@cpu_kernel("_npu_distribute_barrier")
def npu_distribute_barrier(x_ref: torch.Tensor, group: str, world_size: int, **options: Any) -> torch.Tensor:
    """Waits for the group's ranks (none but this one) and gives ``x_ref`` back."""
    one_rank("_npu_distribute_barrier", world_size)
    return x_ref.clone()
