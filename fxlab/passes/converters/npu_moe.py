"""Converters of torch_npu's MoE routing operators, making the GE ops TorchAir makes.

The types, inputs and attrs are those of TorchAir's converters (``ge_converter/custom/``
of torch_npu 2.13.0) on an Atlas A2/A3 machine: ``npu_moe_gating_top_k_softmax`` →
``MoeGatingTopKSoftmax``, ``npu_moe_gating_top_k`` → ``MoeGatingTopK``,
``npu_moe_init_routing`` → ``MoeInitRouting``, ``npu_moe_init_routing_v2`` →
``MoeInitRoutingV3``, ``npu_moe_compute_expert_tokens`` → ``MoeComputeExpertTokens``,
``npu_moe_finalize_routing`` → ``MoeFinalizeRouting`` when every optional input is given
in drop-less mode, else ``MoeFinalizeRoutingV2``, ``npu_moe_re_routing`` →
``MoeReRouting``, ``npu_moe_update_expert`` → ``MoeUpdateExpert``. Where TorchAir's
converter raises, the node is refused with its reason. Kernels:
:mod:`fxlab.ir.kernels.npu_moe`.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType
from fxlab.ir.npu_dtypes import FLOAT4_X2, HIFLOAT8, INT4
from fxlab.passes.converters.npu import npu_converter
from fxlab.passes.converters.npu_builders import compact_op, npu_dtype, packed, refuse, viewed_as, widened
from fxlab.passes.converters.registry import Sample


def _logits(rows: int, experts: int) -> torch.Tensor:
    return torch.randn(rows, experts).half()


# -- gating -------------------------------------------------------------------------------------
@npu_converter(
    "npu_moe_gating_top_k_softmax.default",
    lambda: [Sample((_logits(5, 8),), {"k": 2}), Sample((torch.randn(3, 4), torch.tensor([False, True, False]), 1))],
)
def convert_moe_gating_top_k_softmax(
    x: ge.Tensor, finished: ge.Tensor | None = None, k: int = 1, *, meta_outputs: Any = None
) -> list[ge.Tensor]:
    """npu_moe_gating_top_k_softmax(Tensor x, Tensor? finished=None, int k=1) -> (Tensor, Tensor, Tensor)"""
    return ge.op("MoeGatingTopKSoftmax", {"x": x, "finished": finished}, {"k": int(k)}, outputs=("y", "expert_idx", "row_idx"))


def _gating_top_k_samples() -> list[Sample]:
    return [
        Sample(
            (_logits(4, 8), 2),
            {"bias": torch.randn(8).half(), "k_group": 2, "group_count": 4, "norm_type": 1, "routed_scaling_factor": 2.5},
        ),
        Sample((_logits(3, 6), 3), {"out_flag": True}),
        Sample((_logits(3, 6), 2), {"input_ids": torch.tensor([0, 1, 2]), "tid2eid": torch.tensor([[0, 1], [2, 3], [4, 5]])}),
    ]


@npu_converter("npu_moe_gating_top_k.default", _gating_top_k_samples)
def convert_moe_gating_top_k(
    x: ge.Tensor,
    k: int,
    *,
    bias: ge.Tensor | None = None,
    input_ids: ge.Tensor | None = None,
    tid2eid: ge.Tensor | None = None,
    k_group: int = 1,
    group_count: int = 1,
    group_select_mode: int = 0,
    renorm: int = 0,
    norm_type: int = 0,
    out_flag: bool = False,
    routed_scaling_factor: float = 1.0,
    eps: float = 1e-20,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_moe_gating_top_k(Tensor x, int k, *, Tensor? bias=None, Tensor? input_ids=None, Tensor? tid2eid=None, int k_group=1, int group_count=1, int group_select_mode=0, int renorm=0, int norm_type=0, bool out_flag=False, float routed_scaling_factor=1.0, float eps=1e-20) -> (Tensor, Tensor, Tensor)"""
    attrs = {
        "k": int(k),
        "k_group": int(k_group),
        "group_count": int(group_count),
        "group_select_mode": int(group_select_mode),
        "renorm": int(renorm),
        "norm_type": int(norm_type),
        "out_flag": bool(out_flag),
        "routed_scaling_factor": float(routed_scaling_factor),
        "eps": float(eps),
    }
    # TorchAir's builder writes bias even when absent, the hash-mode inputs only when
    # given, and names the third output ``out``.
    inputs = {"x": x, "bias": bias}
    if input_ids is not None:
        inputs.update(input_ids=input_ids, tid2eid=tid2eid)
    return ge.op("MoeGatingTopK", inputs, attrs, outputs=("y", "expert_idx", "out"))


# -- init routing -------------------------------------------------------------------------------
def _routing_inputs(rows: int, hidden: int, k: int, experts: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    x = torch.randn(rows, hidden).half()
    expert_idx = torch.stack([torch.randperm(experts)[:k] for _ in range(rows)]).to(torch.int32)
    row_idx = torch.arange(rows * k, dtype=torch.int32).reshape(k, rows).t().contiguous()
    return x, row_idx, expert_idx


@npu_converter(
    "npu_moe_init_routing.default",
    lambda: [Sample(_routing_inputs(5, 8, 2, 4) + (5,)), Sample(_routing_inputs(4, 16, 3, 6) + (2,))],
)
def convert_moe_init_routing(
    x: ge.Tensor, row_idx: ge.Tensor, expert_idx: ge.Tensor, active_num: int = 99, *, meta_outputs: Any = None
) -> list[ge.Tensor]:
    """npu_moe_init_routing(Tensor x, Tensor row_idx, Tensor expert_idx, int active_num) -> (Tensor, Tensor, Tensor)"""
    inputs = {"x": x, "row_idx": row_idx, "expert_idx": expert_idx}
    return ge.op(
        "MoeInitRouting", inputs, {"active_num": int(active_num)}, outputs=("expanded_x", "expanded_row_idx", "expanded_expert_idx")
    )


def _init_routing_v2_samples() -> list[Sample]:
    x, _, expert_idx = _routing_inputs(6, 8, 2, 4)
    return [
        Sample((x, expert_idx), {"active_num": 12, "expert_num": 4, "expert_tokens_num_flag": True, "active_expert_range": [0, 4]}),
        Sample(
            (x.bfloat16(), expert_idx),
            {
                "scale": torch.rand(4, 8) + 0.5,
                "expert_num": 4,
                "quant_mode": 1,
                "active_expert_range": [0, 4],
                "expert_tokens_num_type": 1,
                "expert_tokens_num_flag": True,
            },
        ),
        Sample((x, expert_idx), {"active_num": 12, "expert_num": 4, "active_expert_range": [1, 3], "row_idx_type": 1}),
        Sample((x, expert_idx), {"expert_num": 4}),
    ]


@npu_converter("npu_moe_init_routing_v2.default", _init_routing_v2_samples)
def convert_moe_init_routing_v2(
    x: ge.Tensor,
    expert_idx: ge.Tensor,
    *,
    scale: ge.Tensor | None = None,
    offset: ge.Tensor | None = None,
    active_num: int = -1,
    expert_capacity: int = -1,
    expert_num: int = -1,
    drop_pad_mode: int = 0,
    expert_tokens_num_type: int = 0,
    expert_tokens_num_flag: bool = False,
    quant_mode: int = -1,
    active_expert_range: list[int] | None = None,
    row_idx_type: int = 0,
    x_dtype: int | None = None,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_moe_init_routing_v2(Tensor x, Tensor expert_idx, *, Tensor? scale=None, Tensor? offset=None, int active_num=-1, int expert_capacity=-1, int expert_num=-1, int drop_pad_mode=0, int expert_tokens_num_type=0, bool expert_tokens_num_flag=False, int quant_mode=-1, int[2] active_expert_range=[], int row_idx_type=0, int? x_dtype=None) -> (Tensor, Tensor, Tensor, Tensor)"""
    if active_expert_range is None:
        # TorchAir's op builder extends the list attr with None.
        refuse(
            "TypeError: must assign iterable (active_expert_range not given; pass active_expert_range=[first, last])",
            "custom/npu_moe_init_routing_v2.py:85",
        )
    if x_dtype is not None and quant_mode == -1:
        float4 = x.dtype == DataType.DT_UINT8 and npu_dtype(x_dtype) == DataType.DT_FLOAT4_E2M1
        x = widened(x, 2, npu_dtype(x_dtype), labelled=True) if float4 else viewed_as(x, x_dtype)
    attrs = {
        "active_num": int(active_num),
        "expert_capacity": int(expert_capacity),
        "expert_num": int(expert_num),
        "drop_pad_mode": int(drop_pad_mode),
        "expert_tokens_num_type": int(expert_tokens_num_type),
        "expert_tokens_num_flag": bool(expert_tokens_num_flag),
        "quant_mode": int(quant_mode),
        "active_expert_range": [int(v) for v in active_expert_range],
        "row_idx_type": int(row_idx_type),
    }
    outputs = ("expanded_x", "expanded_row_idx", "expert_tokens_count_or_cumsum", "expanded_scale")
    expanded_x, row_idx, tokens, scales = ge.op(
        "MoeInitRoutingV3", {"x": x, "expert_idx": expert_idx, "scale": scale, "offset": offset}, attrs, outputs=outputs
    )
    if quant_mode == 13 or quant_mode == 9 or (x_dtype is not None and quant_mode == -1 and x_dtype in (INT4, *FLOAT4_X2)):
        expanded_x = packed(expanded_x, 2, 2, DataType.DT_UINT8, cast_consts=True)
    elif quant_mode in (6, 7, 8):
        ge.set_dtype(expanded_x, npu_dtype(HIFLOAT8))
    return [expanded_x, row_idx, tokens, scales]


@npu_converter(
    "npu_moe_compute_expert_tokens.default",
    lambda: [Sample((torch.tensor([0, 0, 1, 3, 3, 3], dtype=torch.int32), 5)), Sample((torch.tensor([1, 2, 2], dtype=torch.int32), 3))],
)
def convert_moe_compute_expert_tokens(sorted_experts: ge.Tensor, num_experts: int, *, meta_outputs: Any = None) -> ge.Tensor:
    """npu_moe_compute_expert_tokens(Tensor sorted_expert_for_source_row, int num_expert) -> Tensor"""
    return ge.op(
        "MoeComputeExpertTokens",
        {"sorted_experts": sorted_experts},
        {"num_experts": int(num_experts)},
        outputs=("total_rows_before_expert",),
    )[0]


# -- finalize routing ---------------------------------------------------------------------------
def _finalize_samples() -> list[Sample]:
    rows, k, hidden, experts = 4, 2, 8, 3
    expanded = torch.randn(rows * k, hidden).half()
    skip1, skip2, bias = torch.randn(rows, hidden).half(), torch.randn(rows, hidden).half(), torch.randn(experts, hidden).half()
    scales = torch.rand(rows, k).half()
    dst = torch.randperm(rows * k).to(torch.int32)
    expert = torch.randint(0, experts, (rows, k), dtype=torch.int32)
    return [
        Sample((expanded, skip1, skip2, bias, scales, dst, expert)),
        Sample((expanded, skip1, None, bias, scales, dst, expert)),
        Sample((expanded, None, None, None, scales, dst, None), {"drop_pad_mode": 2, "k": k}),
        Sample((expanded.float(), skip1.float(), None, None, scales.float(), dst, expert)),
    ]


@npu_converter("npu_moe_finalize_routing.default", _finalize_samples)
def convert_moe_finalize_routing(
    expanded_permuted_rows: ge.Tensor,
    skip1: ge.Tensor | None,
    skip2: ge.Tensor | None,
    bias: ge.Tensor | None,
    scales: ge.Tensor | None,
    expanded_src_to_dst_row: ge.Tensor,
    expert_for_source_row: ge.Tensor | None,
    drop_pad_mode: int | None = 0,
    k: int | None = 1,
    *,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """npu_moe_finalize_routing(Tensor expanded_permuted_rows, Tensor? skip1, Tensor? skip2, Tensor? bias, Tensor? scales, Tensor expanded_src_to_dst_row, Tensor? export_for_source_row, int? drop_pad_mode=0, int? k=1) -> Tensor"""
    given = all(t is not None for t in (skip1, bias, scales, expert_for_source_row))
    if given and drop_pad_mode == 0:
        inputs = {
            "expanded_x": expanded_permuted_rows,
            "x1": skip1,
            "x2": skip2,
            "bias": bias,
            "scales": scales,
            "expanded_row_idx": expanded_src_to_dst_row,
            "expanded_expert_idx": expert_for_source_row,
        }
        return ge.op1("MoeFinalizeRouting", inputs)
    inputs = {
        "expanded_x": expanded_permuted_rows,
        "expanded_row_idx": expanded_src_to_dst_row,
        "x1": skip1,
        "x2": skip2,
        "bias": bias,
        "scales": scales,
        "expert_idx": expert_for_source_row,
    }
    return ge.op1("MoeFinalizeRoutingV2", inputs, {"drop_pad_mode": drop_pad_mode, "k": k})


# -- expert-parallel re-routing -------------------------------------------------------------------
def _re_routing_samples() -> list[Sample]:
    counts = torch.tensor([[2, 1, 0], [1, 2, 2]], dtype=torch.int32)
    tokens = torch.randn(int(counts.sum()), 8).half()
    return [
        Sample((tokens, counts), {"per_token_scales": torch.rand(int(counts.sum()))}),
        Sample((torch.randint(-128, 127, (8, 16), dtype=torch.int8), counts.to(torch.int64))),
    ]


@npu_converter("npu_moe_re_routing.default", _re_routing_samples)
def convert_moe_re_routing(
    tokens: ge.Tensor,
    expert_token_num_per_rank: ge.Tensor,
    *,
    per_token_scales: ge.Tensor | None = None,
    expert_token_num_type: int = 1,
    idx_type: int = 0,
    tokens_dtype: int | None = None,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_moe_re_routing(Tensor tokens, Tensor expert_token_num_per_rank, *, Tensor? per_token_scales=None, int expert_token_num_type=1, int idx_type=0, int? tokens_dtype=None) -> (Tensor, Tensor, Tensor, Tensor)"""
    float4 = tokens_dtype is not None and tokens_dtype in FLOAT4_X2
    if tokens_dtype is not None:
        unpack = float4 and tokens.dtype == DataType.DT_UINT8
        tokens = widened(tokens, 2, npu_dtype(tokens_dtype), labelled=True) if unpack else viewed_as(tokens, tokens_dtype)
    inputs = {"tokens": tokens, "expert_token_num_per_rank": expert_token_num_per_rank, "per_token_scales": per_token_scales}
    attrs = {"expert_token_num_type": int(expert_token_num_type), "idx_type": int(idx_type)}
    outputs = ("permute_tokens", "permute_per_token_scales", "permute_token_idx", "expert_token_num")
    permuted, scales, index, counts = ge.op("MoeReRouting", inputs, attrs, outputs=outputs)
    if float4:
        permuted = packed(permuted, 2, 2, DataType.DT_UINT8, cast_consts=True)
    elif tokens_dtype is not None:
        ge.set_dtype(permuted, npu_dtype(tokens_dtype))
    return [permuted, scales, index, counts]


# -- expert load balancing ------------------------------------------------------------------------
def _update_expert_samples() -> list[Sample]:
    expert_ids = torch.tensor([[0, 2], [1, 3], [2, 0]], dtype=torch.int32)
    eplb_table = torch.tensor([[1, 0, -1], [2, 1, 3], [1, 2, -1], [1, 3, -1]], dtype=torch.int32)
    return [
        Sample((expert_ids, eplb_table), {"local_rank_id": 0, "world_size": 4}),
        Sample(
            (expert_ids, eplb_table), {"expert_scales": torch.rand(3, 2).half(), "local_rank_id": 1, "world_size": 4, "balance_mode": 1}
        ),
    ]


@npu_converter("npu_moe_update_expert.default", _update_expert_samples)
def convert_moe_update_expert(
    expert_ids: ge.Tensor,
    eplb_table: ge.Tensor,
    *,
    expert_scales: ge.Tensor | None = None,
    pruning_threshold: ge.Tensor | None = None,
    active_mask: ge.Tensor | None = None,
    local_rank_id: int = -1,
    world_size: int = -1,
    balance_mode: int = 0,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_moe_update_expert(Tensor expert_ids, Tensor eplb_table, *, Tensor? expert_scales=None, Tensor? pruning_threshold=None, Tensor? active_mask=None, int local_rank_id=-1, int world_size=-1, int balance_mode=0) -> (Tensor, Tensor)"""
    inputs = {
        "expert_ids": expert_ids,
        "eplb_table": eplb_table,
        "expert_scales": expert_scales,
        "pruning_threshold": pruning_threshold,
        "active_mask": active_mask,
    }
    attrs = {"local_rank_id": int(local_rank_id), "world_size": int(world_size), "balance_mode": int(balance_mode)}
    defaults = {"local_rank_id": -1, "world_size": -1, "balance_mode": 0}
    return compact_op("MoeUpdateExpert", inputs, attrs, defaults, outputs=("balanced_expert_ids", "balanced_active_mask"))
