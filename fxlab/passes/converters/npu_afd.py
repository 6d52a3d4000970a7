"""Converters of torch_npu's attention-FFN disaggregation operators (attention and FFN
layers on separate ranks, exchanging tokens through a shared schedule context), and of
``npu_ffn``, as TorchAir makes them.

``npu_attention_to_ffn`` → ``AttentionToFFN``, ``npu_ffn_to_attention`` →
``FFNToAttention`` (both return nothing), ``attention_worker_scheduler`` /
``ffn_worker_scheduler`` → ``TensorMove`` of the schedule context +
``AttentionWorkerScheduler`` / ``FfnWorkerScheduler``, ``npu_attention_worker_combine`` →
``AttentionWorkerCombine`` (``need_schedule`` is taken and not written: the prototype has
no such attr), ``npu_ffn_worker_batching`` → ``FfnWorkerBatching``, ``npu_ffn`` → ``FFN``
(``expert_tokens`` as an int64 ``Const``, ``expert_tokens_index`` the same with
``tokens_index_flag``). The reference kernels are in :mod:`fxlab.ir.kernels.npu_afd`.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.passes.converters.npu import npu_converter
from fxlab.passes.converters.npu_builders import compact_op, int64_input, tensor_move
from fxlab.passes.converters.registry import Sample

GROUP = "hcom_afd_group"  # the samples' HCCL group name
FFN_OPTIONAL = (
    "bias1",
    "bias2",
    "scale",
    "offset",
    "deq_scale1",
    "deq_scale2",
    "antiquant_scale1",
    "antiquant_scale2",
    "antiquant_offset1",
    "antiquant_offset2",
)


def _context() -> torch.Tensor:
    return torch.zeros(1024, dtype=torch.int8)


# -- the token exchange ------------------------------------------------------------------------------
def _attention_to_ffn_samples() -> list[Sample]:
    """4 tokens of 16 to their top-2 of 4 experts on 2 FFN ranks."""
    x = torch.randn(1, 4, 16).to(torch.bfloat16)
    ids = [torch.tensor([0], dtype=torch.int32) for _ in range(3)]
    expert_ids = torch.tensor([[[0, 2], [1, 3], [2, 0], [3, 1]]], dtype=torch.int32)
    table = torch.tensor([[1, 0, 1], [1, 0, 1], [1, 1, 1], [1, 1, 1]], dtype=torch.int32)
    return [Sample((x, *ids, expert_ids, table, GROUP, 3, [2, 4, 3], [2, 4, 2, 16], [1, 4, 2], 4))]


@npu_converter("npu_attention_to_ffn.default", _attention_to_ffn_samples)
def convert_attention_to_ffn(*args: Any, meta_outputs: Any = None, **options: Any) -> Any:
    """npu_attention_to_ffn(Tensor x, Tensor session_id, Tensor micro_batch_id, Tensor layer_id, Tensor expert_ids, Tensor expert_rank_table, str group, int world_size, int[] ffn_token_info_table_shape, int[] ffn_token_data_shape, int[] attn_token_info_table_shape, int moe_expert_num, *, Tensor? scales=None, Tensor? active_mask=None, int quant_mode=0, int sync_flag=0, int ffn_start_rank_id=0) -> ()"""
    names = ("x", "session_id", "micro_batch_id", "layer_id", "expert_ids", "expert_rank_table")
    inputs = {**dict(zip(names, args[:6])), "scales": options.get("scales"), "active_mask": options.get("active_mask")}
    group, world_size, ffn_info, ffn_data, attn_info, experts = args[6:12]
    attrs = {
        "group": group,
        "world_size": int(world_size),
        "ffn_token_info_table_shape": list(ffn_info),
        "ffn_token_data_shape": list(ffn_data),
        "attn_token_info_table_shape": list(attn_info),
        "moe_expert_num": int(experts),
        **{k: int(options.get(k, 0)) for k in ("quant_mode", "sync_flag", "ffn_start_rank_id")},
    }
    compact_op("AttentionToFFN", inputs, attrs, {"quant_mode": 0, "sync_flag": 0, "ffn_start_rank_id": 0}, outputs=())
    return None


def _ffn_to_attention_samples() -> list[Sample]:
    x = torch.randn(8, 16).to(torch.bfloat16)
    ints = [torch.zeros(8, dtype=torch.int32) for _ in range(4)]
    return [Sample((x, *ints, torch.tensor([8], dtype=torch.int64), GROUP, 3, [1, 4, 2], [1, 4, 2, 16]))]


@npu_converter("npu_ffn_to_attention.default", _ffn_to_attention_samples)
def convert_ffn_to_attention(*args: Any, meta_outputs: Any = None, attn_rank_table: ge.Tensor | None = None) -> Any:
    """npu_ffn_to_attention(Tensor x, Tensor session_ids, Tensor micro_batch_ids, Tensor token_ids, Tensor expert_offsets, Tensor actual_token_num, str group, int world_size, int[] token_info_table_shape, int[] token_data_shape, *, Tensor? attn_rank_table=None) -> ()"""
    names = ("x", "session_ids", "micro_batch_ids", "token_ids", "expert_offsets", "actual_token_num")
    inputs = {**dict(zip(names, args[:6])), "attn_rank_table": attn_rank_table}
    group, world_size, info, data = args[6:10]
    attrs = {"group": group, "world_size": int(world_size), "token_info_table_shape": list(info), "token_data_shape": list(data)}
    compact_op("FFNToAttention", inputs, attrs, {}, outputs=())
    return None


# -- the workers' scheduling --------------------------------------------------------------------------
@npu_converter("attention_worker_scheduler.default", lambda: [Sample((_context(),))])
def convert_attention_worker_scheduler(self: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """attention_worker_scheduler(Tensor self) -> Tensor"""
    return compact_op("AttentionWorkerScheduler", {"schedule_context": tensor_move(self)}, {}, {}, outputs=("schedule_context",))[0]


@npu_converter(
    "ffn_worker_scheduler.default", lambda: [Sample((_context(),)), Sample((_context(),), {"sync_group_size": 2, "execute_mode": 1})]
)
def convert_ffn_worker_scheduler(
    self: ge.Tensor, *, sync_group_size: int = 1, execute_mode: int = 0, meta_outputs: Any = None
) -> ge.Tensor:
    """ffn_worker_scheduler(Tensor self, *, int sync_group_size=1, int execute_mode=0) -> Tensor"""
    attrs = {"sync_group_size": int(sync_group_size), "execute_mode": int(execute_mode)}
    defaults = {"sync_group_size": 1, "execute_mode": 0}
    return compact_op("FfnWorkerScheduler", {"schedule_context": tensor_move(self)}, attrs, defaults, outputs=("schedule_context",))[0]


@npu_converter(
    "npu_attention_worker_combine.default",
    lambda: [Sample((_context(), torch.rand(4, 2), torch.tensor([0], dtype=torch.int32), 16), {"token_dtype": 1})],
)
def convert_attention_worker_combine(
    schedule_context: ge.Tensor,
    expert_scales: ge.Tensor,
    layer_id: ge.Tensor,
    hidden_size: int,
    *,
    token_dtype: int = 0,
    need_schedule: int = 0,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_attention_worker_combine(Tensor schedule_context, Tensor expert_scales, Tensor layer_id, int hidden_size, *, int token_dtype=0, int need_schedule=0) -> (Tensor, Tensor)"""
    inputs = {"schedule_context": schedule_context, "expert_scales": expert_scales, "layer_id": layer_id}
    attrs = {"hidden_size": int(hidden_size), "token_dtype": int(token_dtype)}
    return ge.op("AttentionWorkerCombine", inputs, attrs, outputs=("y", "next_layer_id"))


BATCHING_OUTPUTS = ("y", "group_list", "session_ids", "micro_batch_ids", "token_ids", "expert_offsets", "dynamic_scale", "actual_token_num")


@npu_converter("npu_ffn_worker_batching.default", lambda: [Sample((_context(), 4, [1, 4, 2, 16]), {"token_dtype": 1, "layer_num": 2})])
def convert_ffn_worker_batching(
    schedule_context: ge.Tensor,
    expert_num: int,
    max_out_shape: list[int],
    *,
    token_dtype: int = 0,
    need_schedule: int = 0,
    layer_num: int = 0,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_ffn_worker_batching(Tensor schedule_context, int expert_num, int[4] max_out_shape, *, int token_dtype=0, int need_schedule=0, int layer_num=0) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)"""
    attrs = {
        "expert_num": int(expert_num),
        "max_out_shape": list(max_out_shape),
        "token_dtype": int(token_dtype),
        "need_schedule": int(need_schedule),
        "layer_num": int(layer_num),
    }
    return ge.op("FfnWorkerBatching", {"schedule_context": schedule_context}, attrs, outputs=BATCHING_OUTPUTS)


# -- the FFN itself --------------------------------------------------------------------------------------
def _ffn_samples() -> list[Sample]:
    half = torch.float16
    x, w1, w2 = torch.randn(5, 16).to(half), (torch.randn(2, 16, 8) * 0.3).to(half), (torch.randn(2, 8, 16) * 0.3).to(half)
    plain = (torch.randn(3, 16).to(half), (torch.randn(16, 8) * 0.3).to(half), (torch.randn(8, 16) * 0.3).to(half))
    return [
        Sample((x, w1, w2, "relu"), {"expert_tokens": [3, 2], "bias1": torch.randn(2, 8).to(half)}),
        Sample((x, w1, w2, "gelu"), {"expert_tokens_index": [3, 5]}),
        Sample((*plain, "silu"), {"bias2": torch.randn(16).to(half)}),
    ]


@npu_converter("npu_ffn.default", _ffn_samples)
def convert_ffn(
    x: ge.Tensor, weight1: ge.Tensor, weight2: ge.Tensor, activation: str, *, meta_outputs: Any = None, **options: Any
) -> ge.Tensor:
    """npu_ffn(Tensor x, Tensor weight1, Tensor weight2, str activation, *, int[]? expert_tokens=None, int[]? expert_tokens_index=None, Tensor? bias1=None, Tensor? bias2=None, ..., int? inner_precise=None, ScalarType? output_dtype=None) -> Tensor"""
    tokens, index = options.get("expert_tokens"), options.get("expert_tokens_index")
    if tokens is not None and index is not None:
        raise ValueError("torch.ops.npu.npu_ffn.default: Cannot assign the value to expert_tokens and expert_tokens_index simultaneously!")
    output_dtype = options.get("output_dtype")
    y_dtype = -1
    if x.dtype == ge.DataType.DT_INT8 and output_dtype is not None:
        if output_dtype not in (torch.float16, torch.bfloat16):
            raise NotImplementedError(
                "torch.ops.npu.npu_ffn.default: In the quant scenario, output_dtype should be float16 or bfloat16, otherwise it should be None!"
            )
        y_dtype = 0 if output_dtype == torch.float16 else 1
    inputs = {"x": x, "weight1": weight1, "weight2": weight2, "expert_tokens": int64_input(index if index is not None else tokens)}
    inputs.update({n: options.get(n) for n in FFN_OPTIONAL})
    attrs = {
        "activation": activation,
        "inner_precise": int(options.get("inner_precise") or 0),
        "output_dtype": y_dtype,
        "tokens_index_flag": index is not None,
    }
    return ge.op1("FFN", inputs, attrs)
