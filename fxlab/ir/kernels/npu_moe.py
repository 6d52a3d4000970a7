"""Kernels of the GE ops TorchAir makes for torch_npu's MoE routing operators
(``MoeGatingTopKSoftmax``, ``MoeInitRouting``, ``MoeFinalizeRoutingV2`` ...), on the math
of :mod:`fxlab.ir.kernels.npu_moe_reference`."""

from __future__ import annotations

from typing import Any

from fxlab.ir.kernels import npu_moe_reference as ref
from fxlab.ir.kernels.registry import named_inputs, register_kernel
from fxlab.ir.model import IrOp


@register_kernel("MoeGatingTopKSoftmax")
def moe_gating_top_k_softmax(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    named = named_inputs(op, inputs)
    return list(ref.moe_gating_top_k_softmax(named["x"], named.get("finished"), int(attrs["k"])))


@register_kernel("MoeGatingTopK")
def moe_gating_top_k(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    named = named_inputs(op, inputs)
    keys = ("k_group", "group_count", "group_select_mode", "renorm", "norm_type", "out_flag", "eps", "routed_scaling_factor")
    options: dict[str, Any] = {key: attrs[key] for key in keys if key in attrs}
    extra: dict[str, Any] = {name: named.get(name) for name in ("bias", "input_ids", "tid2eid")}
    return list(ref.moe_gating_top_k(named["x"], int(attrs["k"]), **extra, **options))


@register_kernel("MoeInitRouting")
def moe_init_routing(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    named = named_inputs(op, inputs)
    return list(ref.moe_init_routing(named["x"], named["row_idx"], named["expert_idx"], int(attrs["active_num"])))


_INIT_ROUTING_ATTRS = (
    "active_num",
    "expert_capacity",
    "expert_num",
    "drop_pad_mode",
    "expert_tokens_num_type",
    "expert_tokens_num_flag",
    "quant_mode",
    "active_expert_range",
    "row_idx_type",
)


@register_kernel("MoeInitRoutingV3")
def moe_init_routing_v3(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    named = named_inputs(op, inputs)
    options = {key: attrs[key] for key in _INIT_ROUTING_ATTRS if key in attrs}
    return list(ref.moe_init_routing_v2(named["x"], named["expert_idx"], scale=named.get("scale"), offset=named.get("offset"), **options))


@register_kernel("MoeComputeExpertTokens")
def moe_compute_expert_tokens(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [ref.moe_compute_expert_tokens(inputs[0], int(attrs["num_experts"]))]


@register_kernel("MoeFinalizeRouting")
def moe_finalize_routing(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    return [
        ref.moe_finalize_routing(
            n["expanded_x"], n["x1"], n.get("x2"), n["bias"], n["scales"], n["expanded_row_idx"], n["expanded_expert_idx"]
        )
    ]


@register_kernel("MoeFinalizeRoutingV2")
def moe_finalize_routing_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    out = ref.moe_finalize_routing(
        n["expanded_x"],
        n.get("x1"),
        n.get("x2"),
        n.get("bias"),
        n.get("scales"),
        n["expanded_row_idx"],
        n.get("expert_idx"),
        int(attrs.get("drop_pad_mode", 0)),
        int(attrs.get("k", 1)),
    )
    return [out]


@register_kernel("MoeReRouting")
def moe_re_routing(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    return list(
        ref.moe_re_routing(
            n["tokens"],
            n["expert_token_num_per_rank"],
            per_token_scales=n.get("per_token_scales"),
            expert_token_num_type=int(attrs.get("expert_token_num_type", 1)),
            idx_type=int(attrs.get("idx_type", 0)),
        )
    )


@register_kernel("MoeUpdateExpert")
def moe_update_expert(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    options: dict[str, Any] = {key: int(attrs[key]) for key in ("local_rank_id", "world_size", "balance_mode") if key in attrs}
    extra: dict[str, Any] = {name: n.get(name) for name in ("expert_scales", "pruning_threshold", "active_mask")}
    return list(ref.moe_update_expert(n["expert_ids"], n["eplb_table"], **extra, **options))
