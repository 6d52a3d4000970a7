"""Kernels of the GE ops TorchAir makes for torch_npu's communication-fused operators
(``AllGatherMatmul(V2)``, ``MatmulAllReduce``, ``MatmulReduceScatter(V2)``,
``AlltoAllMatmul``, ``MatmulAlltoAll``, ``AlltoAllvGroupedMatMul``,
``GroupedMatMulAlltoAllv``, ``MoeDistributeDispatch(V2)``, ``MoeDistributeCombine(V2)``,
``MoeDistributeCombineAddRmsNorm``, ``DistributeBarrier``), on one rank, on the math of
:mod:`fxlab.ir.kernels.npu_comm_reference`. Outputs the math leaves out (amax, quant
scales) are zeros of the shapes the op's output descs give.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.registry import named_inputs, register_kernel
from fxlab.ir.kernels import npu_comm_reference as ref
from fxlab.ir.kernels.npu_io import zeros_of
from fxlab.ir.model import IrOp, torch_dtype


def _out_dtype(op: IrOp, index: int = 0) -> torch.dtype:
    return torch_dtype(op.output_desc[index].dtype)


@register_kernel("AllGatherMatmul", "AllGatherMatmulV2")
def all_gather_matmul(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    options = {**n, "gather_output": attrs.get("is_gather_out", True)}
    y, gathered = ref.all_gather_mm(n["x1"], n["x2"], attrs.get("rank_size", 0), options, _out_dtype(op))
    return [y, gathered, zeros_of(op, 2)] if op.type == "AllGatherMatmulV2" else [y, gathered]


@register_kernel("MatmulAllReduce")
def matmul_all_reduce(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    return [ref.mm_all_reduce(n["x1"], n["x2"], {**n, "reduce_op": attrs.get("reduce_op", "sum")})]


@register_kernel("MatmulReduceScatter", "MatmulReduceScatterV2")
def matmul_reduce_scatter(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    y = ref.mm_reduce_scatter(n["x1"], n["x2"], attrs.get("rank_size", 0), n, _out_dtype(op))
    return [y, zeros_of(op, 1)] if op.type == "MatmulReduceScatterV2" else [y]


@register_kernel("AlltoAllMatmul")
def all_to_all_matmul(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    y, gathered = ref.npu_all_to_all_matmul(n["x1"], n["x2"], attrs["group"], attrs["world_size"], n.get("bias"))
    return [y, gathered if attrs.get("alltoall_out_flag", True) else zeros_of(op, 1)]


@register_kernel("MatmulAlltoAll")
def matmul_all_to_all(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    return [ref.npu_matmul_all_to_all(n["x1"], n["x2"], attrs["group"], attrs["world_size"], n.get("bias"))]


def _gmm_args(n: dict[str, Any], attrs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    args = (attrs["group"], attrs["ep_world_size"], attrs["send_counts"], attrs["recv_counts"])
    options = {k: n.get(k) for k in ("mm_x", "mm_weight")}
    options.update({k: attrs.get(k, False) for k in ("trans_gmm_weight", "trans_mm_weight", "permute_out_flag")})
    return args, options


def _or_zeros(op: IrOp, values: tuple[Any, ...]) -> list[Any]:
    return [v if v is not None else zeros_of(op, i) for i, v in enumerate(values)]


@register_kernel("AlltoAllvGroupedMatMul")
def alltoallv_grouped_matmul(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    args, options = _gmm_args(n, attrs)
    return _or_zeros(op, ref.npu_alltoallv_gmm(n["gmm_x"], n["gmm_weight"], *args, **options))


@register_kernel("GroupedMatMulAlltoAllv")
def grouped_matmul_alltoallv(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    args, options = _gmm_args(n, attrs)
    options.pop("permute_out_flag")
    return _or_zeros(op, ref.npu_gmm_alltoallv(n["gmm_x"], n["gmm_weight"], *args, **options))


@register_kernel("MoeDistributeDispatch", "MoeDistributeDispatchV2")
def moe_distribute_dispatch(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    options = {**attrs, **{k: v for k, v in n.items() if v is not None}}
    ref.check_one_rank_moe(op.type, attrs["ep_world_size"], {k: v for k, v in options.items() if k != "y_dtype"})
    shapes = tuple(tuple(d.shape) for d in op.output_desc)
    return ref.moe_dispatch(n["x"], n["expert_ids"], int(attrs["moe_expert_num"]), options, shapes)


def _combine_tensors(n: dict[str, Any]) -> tuple[Any, ...]:
    idx = n.get("expand_idx", n.get("assist_info_for_combine", n.get("assist_info")))
    return n["expand_x"], n["expert_ids"], idx, n["ep_send_counts"], n["expert_scales"]


@register_kernel("MoeDistributeCombine", "MoeDistributeCombineV2")
def moe_distribute_combine(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    ref.check_one_rank_moe(op.type, attrs["ep_world_size"], {**attrs, **n})
    return [ref.moe_combine(*_combine_tensors(n))]


@register_kernel("MoeDistributeCombineAddRmsNorm")
def moe_distribute_combine_add_rms_norm(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    ref.check_one_rank_moe(op.type, attrs["ep_world_size"], {**attrs, **n})
    return list(ref.moe_combine_add_rms_norm(_combine_tensors(n), n["residual_x"], n["gamma"], float(attrs.get("norm_eps", 1e-6))))


@register_kernel("DistributeBarrier")
def distribute_barrier(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    ref.one_rank("DistributeBarrier", attrs["world_size"])
    return [inputs[0]]
