"""Converters of torch_npu's expert-parallel communication, as TorchAir makes them.

``npu_moe_distribute_dispatch`` (v1, v2) → ``MoeDistributeDispatch(V2)`` (tokens sent to
their experts' ranks), ``npu_moe_distribute_combine`` (v1, v2, with add + RMSNorm) →
``MoeDistributeCombine(V2)``/``MoeDistributeCombineAddRmsNorm`` (expert outputs brought
back and weighted), ``_npu_distribute_barrier`` → ``DistributeBarrier``,
``npu_alltoallv_gmm`` → ``AlltoAllvGroupedMatMul`` and ``npu_gmm_alltoallv`` →
``GroupedMatMulAlltoAllv`` (all-to-all-v around a grouped matmul). The groups are the
HCCL group names the caller passes, written as given. v2's dtype codes (``x_dtype``,
``scales_dtype``, a ``y_dtype`` code) make TorchAir bitcast to GE types fxlab's IR does
not have: refused with that reason. The reference kernels (one rank) are in
:mod:`fxlab.ir.kernels.npu_moe_comm`.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import TORCHAIR_DTYPE_NUMBER, DataType
from fxlab.passes.converters.npu import npu_converter
from fxlab.passes.converters.npu_builders import compact_op
from fxlab.passes.converters.npu_comm_matmul import refuse_dtype_codes
from fxlab.passes.converters.registry import Sample

GROUP_EP = "hcom_ep_group"  # the samples' HCCL group name
DISPATCH_OUTPUTS = ("expand_x", "dynamic_scales", "expand_idx", "expert_token_nums", "ep_recv_count", "tp_recv_count", "expand_scales")
# attrs every dispatch and combine writes after group_ep, ep_world_size, ep_rank_id,
# moe_expert_num: (name, default)
SHARED_ATTRS = (
    ("group_tp", ""),
    ("tp_world_size", 0),
    ("tp_rank_id", 0),
    ("expert_shard_type", 0),
    ("shared_expert_num", 1),
    ("shared_expert_rank_num", 0),
)
V2_EXPERT_ATTRS = (("comm_alg", ""), ("zero_expert_num", 0), ("copy_expert_num", 0), ("const_expert_num", 0))
COMBINE_V2_INPUTS = (
    "tp_send_counts",
    "x_active_mask",
    "activation_scale",
    "weight_scale",
    "group_list",
    "expand_scales",
    "shared_expert_x",
    "elastic_info",
    "ori_x",
    "const_expert_alpha_1",
    "const_expert_alpha_2",
    "const_expert_v",
    "performance_info",
)


def _group_attrs(group: tuple[Any, ...], options: dict[str, Any]) -> dict[str, Any]:
    """``group``: (group_ep, ep_world_size, ep_rank_id, moe_expert_num)."""
    group_ep, ep_world_size, ep_rank_id, moe_expert_num = group
    attrs: dict[str, Any] = {"group_ep": group_ep, "ep_world_size": int(ep_world_size), "ep_rank_id": int(ep_rank_id)}
    attrs["moe_expert_num"] = int(moe_expert_num)
    attrs.update({name: options.get(name, default) for name, default in SHARED_ATTRS})
    return attrs


# -- dispatch --------------------------------------------------------------------------------------
def _dispatch_samples() -> list[Sample]:
    """4 tokens of 16 (bf16) to their top-2 of 4 experts, one rank."""
    x = torch.randn(4, 16).to(torch.bfloat16)
    expert_ids = torch.tensor([[0, 2], [1, 2], [3, 0], [2, 1]], dtype=torch.int32)
    return [
        Sample((x, expert_ids, GROUP_EP, 1, 0, 4), {"expert_scales": torch.rand(4, 2)}),
        Sample((x, expert_ids, GROUP_EP, 1, 0, 4), {"expert_token_nums_type": 0}),
    ]


def _dispatch_attrs(args: tuple[Any, ...], options: dict[str, Any]) -> dict[str, Any]:
    attrs = _group_attrs(tuple(args), options)
    attrs.update(quant_mode=options.get("quant_mode", 0), global_bs=options.get("global_bs", 0))
    attrs["expert_token_nums_type"] = options.get("expert_token_nums_type", 1)
    return attrs


@npu_converter("npu_moe_distribute_dispatch.default", _dispatch_samples)
def convert_moe_distribute_dispatch(
    x: ge.Tensor, expert_ids: ge.Tensor, *args: Any, meta_outputs: Any = None, **options: Any
) -> list[ge.Tensor]:
    """npu_moe_distribute_dispatch(Tensor x, Tensor expert_ids, str group_ep, int ep_world_size, int ep_rank_id, int moe_expert_num, *, Tensor? scales=None, Tensor? x_active_mask=None, Tensor? expert_scales=None, str group_tp="", int tp_world_size=0, int tp_rank_id=0, int expert_shard_type=0, int shared_expert_num=1, int shared_expert_rank_num=0, int quant_mode=0, int global_bs=0, int expert_token_nums_type=1) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)"""
    inputs = {"x": x, "expert_ids": expert_ids, **{n: options.get(n) for n in ("scales", "x_active_mask", "expert_scales")}}
    return ge.op("MoeDistributeDispatch", inputs, _dispatch_attrs(args, options), outputs=DISPATCH_OUTPUTS)


@npu_converter("npu_moe_distribute_dispatch_v2.default", _dispatch_samples)
def convert_moe_distribute_dispatch_v2(
    x: ge.Tensor, expert_ids: ge.Tensor, *args: Any, meta_outputs: Any = None, **options: Any
) -> list[ge.Tensor]:
    """npu_moe_distribute_dispatch_v2(Tensor x, Tensor expert_ids, str group_ep, int ep_world_size, int ep_rank_id, int moe_expert_num, *, ..., str comm_alg="", int zero_expert_num=0, int copy_expert_num=0, int const_expert_num=0, int? y_dtype=None, int? x_dtype=None, int? scales_dtype=None) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)"""
    refuse_dtype_codes(options, "x_dtype", "scales_dtype", "y_dtype")
    names = ("scales", "x_active_mask", "expert_scales", "elastic_info", "performance_info")
    inputs = {"x": x, "expert_ids": expert_ids, **{n: options.get(n) for n in names}}
    attrs = _dispatch_attrs(args, options)
    attrs.update({name: options.get(name, default) for name, default in V2_EXPERT_ATTRS})
    expand_x_dtype = x.dtype if int(options.get("quant_mode", 0)) == 0 else DataType.DT_INT8
    attrs["y_dtype"] = TORCHAIR_DTYPE_NUMBER[expand_x_dtype]
    return ge.op("MoeDistributeDispatchV2", inputs, attrs, outputs=DISPATCH_OUTPUTS)


# -- combine -----------------------------------------------------------------------------------------
def combine_tensors() -> tuple[torch.Tensor, ...]:
    """(expand_x, expert_ids, expand_idx, ep_send_counts, expert_scales) of the dispatch
    samples' tokens, as a one-rank dispatch leaves them (8 expanded rows, the counts
    cumulative)."""
    expert_ids = torch.tensor([[0, 2], [1, 2], [3, 0], [2, 1]], dtype=torch.int32)
    return (
        torch.randn(8, 16).to(torch.bfloat16),
        expert_ids,
        torch.tensor([0, 0, 0, 1, 0, 1, 2, 1], dtype=torch.int32),
        torch.tensor([2, 4, 7, 8], dtype=torch.int32),
        torch.rand(4, 2),
    )


def _combine_attrs(args: tuple[Any, ...], options: dict[str, Any]) -> dict[str, Any]:
    attrs = _group_attrs(tuple(args), options)
    attrs.update(global_bs=options.get("global_bs", 0), out_dtype=options.get("out_dtype", 0))
    attrs.update(comm_quant_mode=options.get("comm_quant_mode", 0), group_list_type=options.get("group_list_type", 0))
    return attrs


@npu_converter("npu_moe_distribute_combine.default", lambda: [Sample((*combine_tensors(), GROUP_EP, 1, 0, 4))])
def convert_moe_distribute_combine(*args: Any, meta_outputs: Any = None, **options: Any) -> ge.Tensor:
    """npu_moe_distribute_combine(Tensor expand_x, Tensor expert_ids, Tensor expand_idx, Tensor ep_send_counts, Tensor expert_scales, str group_ep, int ep_world_size, int ep_rank_id, int moe_expert_num, *, Tensor? tp_send_counts=None, ..., Tensor? shared_expert_x=None, ..., int group_list_type=0) -> Tensor"""
    inputs = dict(zip(("expand_x", "expert_ids", "expand_idx", "ep_send_counts", "expert_scales"), args[:5]))
    # shared_expert_x is accepted and not passed on, as TorchAir does.
    inputs.update(
        {n: options.get(n) for n in ("tp_send_counts", "x_active_mask", "activation_scale", "weight_scale", "group_list", "expand_scales")}
    )
    return ge.op("MoeDistributeCombine", inputs, _combine_attrs(args[5:9], options), outputs=("x",))[0]


@npu_converter("npu_moe_distribute_combine_v2.default", lambda: [Sample((*combine_tensors(), GROUP_EP, 1, 0, 4))])
def convert_moe_distribute_combine_v2(*args: Any, meta_outputs: Any = None, **options: Any) -> ge.Tensor:
    """npu_moe_distribute_combine_v2(Tensor expand_x, Tensor expert_ids, Tensor assist_info_for_combine, Tensor ep_send_counts, Tensor expert_scales, str group_ep, int ep_world_size, int ep_rank_id, int moe_expert_num, *, ...) -> Tensor"""
    inputs = dict(zip(("expand_x", "expert_ids", "assist_info_for_combine", "ep_send_counts", "expert_scales"), args[:5]))
    # v1's quantisation inputs stay as placeholders: the prototype keeps them.
    inputs.update({n: None if n in ("activation_scale", "weight_scale", "group_list") else options.get(n) for n in COMBINE_V2_INPUTS})
    attrs = {**_combine_attrs(args[5:9], {**options, "out_dtype": 0, "group_list_type": 0})}
    attrs.update({name: options.get(name, default) for name, default in V2_EXPERT_ATTRS})
    return ge.op("MoeDistributeCombineV2", inputs, attrs, outputs=("x",))[0]


@npu_converter(
    "npu_moe_distribute_combine_add_rms_norm.default",
    lambda: [
        Sample((*combine_tensors(), torch.randn(4, 1, 16).to(torch.bfloat16), (torch.rand(16) + 0.5).to(torch.bfloat16), GROUP_EP, 1, 0, 4))
    ],
)
def convert_moe_distribute_combine_add_rms_norm(*args: Any, meta_outputs: Any = None, **options: Any) -> list[ge.Tensor]:
    """npu_moe_distribute_combine_add_rms_norm(Tensor expand_x, Tensor expert_ids, Tensor expand_idx, Tensor ep_send_counts, Tensor expert_scales, Tensor residual_x, Tensor gamma, str group_ep, int ep_world_size, int ep_rank_id, int moe_expert_num, *, ..., float norm_eps=1e-06, ...) -> (Tensor, Tensor, Tensor)"""
    names = ("expand_x", "expert_ids", "assist_info", "ep_send_counts", "expert_scales", "residual_x", "gamma")
    inputs = dict(zip(names, args[:7]))
    inputs.update({n: options.get(n) for n in COMBINE_V2_INPUTS if n != "performance_info"})
    attrs = _combine_attrs(args[7:11], options)
    attrs.update(comm_alg=options.get("comm_alg", ""), norm_eps=float(options.get("norm_eps", 1e-6)))
    attrs.update({name: options.get(name, default) for name, default in V2_EXPERT_ATTRS[1:]})
    return ge.op("MoeDistributeCombineAddRmsNorm", inputs, attrs, outputs=("y", "rstd", "x"))


# -- barrier --------------------------------------------------------------------------------------------
@npu_converter("_npu_distribute_barrier.default", lambda: [Sample((torch.randn(4, 16).to(torch.bfloat16), GROUP_EP, 1))])
def convert_distribute_barrier(x_ref: ge.Tensor, group: str, world_size: int, *, meta_outputs: Any = None, **options: Any) -> ge.Tensor:
    """_npu_distribute_barrier(Tensor x_ref, str group, int world_size, *, Tensor? time_out=None, Tensor? elastic_info=None) -> Tensor"""
    inputs = {"x_ref": x_ref, "time_out": options.get("time_out"), "elastic_info": options.get("elastic_info")}
    return compact_op("DistributeBarrier", inputs, {"group": group, "world_size": int(world_size)}, {}, outputs=("x_ref",))[0]


# -- all-to-all-v around a grouped matmul ------------------------------------------------------------------
A2AV_COMM_MODES = ("ai_cpu",)


def _gmm_samples() -> list[Sample]:
    """One rank, two local experts: 3 and 2 tokens of 16 to outputs of 8; and a shared
    expert's plain matmul beside it."""
    half = torch.float16
    x, w = torch.randn(5, 16).to(half), torch.randn(2, 16, 8).to(half)
    mm = {"mm_x": torch.randn(3, 16).to(half), "mm_weight": torch.randn(16, 8).to(half)}
    return [Sample((x, w, GROUP_EP, 1, [3, 2], [3, 2])), Sample((x, w, GROUP_EP, 1, [3, 2], [3, 2]), mm)]


def _a2av_gmm(
    op_type: str, gmm_x: ge.Tensor, gmm_weight: ge.Tensor, args: tuple[Any, ...], options: dict[str, Any], outputs: tuple[str, ...]
) -> list[ge.Tensor]:
    hcom, ep_world_size, send_counts, recv_counts = args
    comm_mode = options.get("comm_mode")
    if comm_mode is not None and comm_mode not in A2AV_COMM_MODES:
        raise RuntimeError(f"The comm_mode only supports value in {list(A2AV_COMM_MODES)}, but got {comm_mode}.")
    names = ("send_counts_tensor", "recv_counts_tensor", "mm_x", "mm_weight")
    inputs = {"gmm_x": gmm_x, "gmm_weight": gmm_weight, **{n: options.get(n) for n in names}}
    attrs: dict[str, Any] = {
        "group": hcom,
        "ep_world_size": int(ep_world_size),
        "send_counts": list(send_counts),
        "recv_counts": list(recv_counts),
    }
    attrs.update(trans_gmm_weight=bool(options.get("trans_gmm_weight", False)), trans_mm_weight=bool(options.get("trans_mm_weight", False)))
    if op_type == "AlltoAllvGroupedMatMul":
        attrs["permute_out_flag"] = bool(options.get("permute_out_flag", False))
    if comm_mode is not None:  # the wrapper writes it only when given
        attrs["comm_mode"] = comm_mode
    return ge.op(op_type, inputs, attrs, outputs=outputs)


@npu_converter("npu_alltoallv_gmm.default", lambda: [*_gmm_samples(), Sample(_gmm_samples()[0].args, {"permute_out_flag": True})])
def convert_alltoallv_gmm(gmm_x: ge.Tensor, gmm_weight: ge.Tensor, *args: Any, meta_outputs: Any = None, **options: Any) -> list[ge.Tensor]:
    """npu_alltoallv_gmm(Tensor gmm_x, Tensor gmm_weight, str hcom, int ep_world_size, int[] send_counts, int[] recv_counts, *, Tensor? send_counts_tensor=None, Tensor? recv_counts_tensor=None, Tensor? mm_x=None, Tensor? mm_weight=None, bool trans_gmm_weight=False, bool trans_mm_weight=False, bool permute_out_flag=False, str? comm_mode=None) -> (Tensor, Tensor, Tensor)"""
    return _a2av_gmm("AlltoAllvGroupedMatMul", gmm_x, gmm_weight, args, options, ("gmm_y", "mm_y", "permute_out"))


@npu_converter("npu_gmm_alltoallv.default", _gmm_samples)
def convert_gmm_alltoallv(gmm_x: ge.Tensor, gmm_weight: ge.Tensor, *args: Any, meta_outputs: Any = None, **options: Any) -> list[ge.Tensor]:
    """npu_gmm_alltoallv(Tensor gmm_x, Tensor gmm_weight, str hcom, int ep_world_size, int[] send_counts, int[] recv_counts, *, Tensor? send_counts_tensor=None, Tensor? recv_counts_tensor=None, Tensor? mm_x=None, Tensor? mm_weight=None, bool trans_gmm_weight=False, bool trans_mm_weight=False, str? comm_mode=None) -> (Tensor, Tensor)"""
    return _a2av_gmm("GroupedMatMulAlltoAllv", gmm_x, gmm_weight, args, options, ("y", "mm_y"))
