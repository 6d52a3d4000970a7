"""``torch_npu.distributed``'s uneven collectives, on the CPU process group (gloo).

torch_npu runs them on HCCL; here they move the same rows over the process group the
caller names, so a model calling them runs eagerly, and TorchAir's remaps put its
``npu_define`` uneven operators (``HcomAllGatherV``, ``HcomReduceScatterV``) into the
graph, as on an NPU machine.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist

from fxlab.ir.kernels.hcom import gather_rows_uneven, scatter_rows_reduced

__all__ = ["all_gather_into_tensor_uneven", "reduce_scatter_tensor_uneven"]


def _group(group: Any) -> Any:
    return dist.distributed_c10d._get_default_group() if group is None or group is dist.GroupMember.WORLD else group


def _refuse_async(async_op: bool) -> None:
    if async_op:
        raise NotImplementedError("fxlab's torch_npu stand-in runs the uneven collectives with async_op=False only")


def all_gather_into_tensor_uneven(
    output: torch.Tensor, input: torch.Tensor, output_split_sizes: Any = None, group: Any = None, async_op: bool = False
) -> None:  # noqa: A002
    """Rank r's ``output_split_sizes[r]`` rows of ``input``, rank after rank, into ``output``."""
    _refuse_async(async_op)
    group = _group(group)
    size = dist.get_world_size(group)
    counts = list(output_split_sizes) if output_split_sizes else [output.size(0) // size] * size
    output.copy_(gather_rows_uneven(input, counts, group).reshape(output.shape))


def reduce_scatter_tensor_uneven(
    output: torch.Tensor,
    input: torch.Tensor,  # noqa: A002
    input_split_sizes: Any = None,
    op: Any = dist.ReduceOp.SUM,
    group: Any = None,
    async_op: bool = False,
) -> None:
    """``input``'s rows reduced over the group; this rank's ``input_split_sizes[rank]`` of them into ``output``."""
    _refuse_async(async_op)
    group = _group(group)
    size = dist.get_world_size(group)
    counts = list(input_split_sizes) if input_split_sizes else [input.size(0) // size] * size
    output.copy_(scatter_rows_reduced(input, counts, op, group).reshape(output.shape))
