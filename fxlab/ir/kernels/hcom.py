"""Kernels of the ``Hcom*`` collectives: the real collective, on the process group the
op's ``group`` attr names (:mod:`fxlab.ir.hcom_groups`).

In a multi-rank trace every rank runs its graph's reference run at the same time, so a
collective here meets its peers as on the device (gloo carries the data). Counts follow
TorchAir's use of each op: ``HcomAllToAllV`` counts elements of the flattened input,
the uneven all-gather and reduce-scatter (``HcomAllGatherV``, ``HcomReduceScatterV``)
count rows of the first dimension, as the ``npu_define`` operators TorchAir converts to
them do. An output's shape is its desc's where the converter recorded one.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.distributed as dist

from fxlab.ir.kernels.registry import register_kernel
from fxlab.ir.hcom_groups import process_group
from fxlab.ir.model import IrOp, torch_dtype

REDUCE_OPS = {"sum": dist.ReduceOp.SUM, "min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX, "prod": dist.ReduceOp.PRODUCT}


def _shaped(op: IrOp, flat: torch.Tensor, rows_of: torch.Tensor) -> torch.Tensor:
    """``flat`` in the op's output shape when its desc knows it, else with the trailing
    dims of ``rows_of``."""
    shape = tuple(op.output_desc[0].shape) if op.output_desc else ()
    if shape and all(d >= 0 for d in shape) and math.prod(shape) == flat.numel():
        return flat.reshape(shape)
    trailing = tuple(rows_of.shape[1:])
    per_row = math.prod(trailing) if trailing else 1
    return flat.reshape((flat.numel() // max(per_row, 1), *trailing)) if rows_of.dim() > 1 else flat


def _ints(t: torch.Tensor | None) -> list[int]:
    return [] if t is None else [int(v) for v in t.reshape(-1).tolist()]


@register_kernel("HcomAllReduce")
def all_reduce(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    out = inputs[0].clone()
    dist.all_reduce(out, REDUCE_OPS[attrs["reduction"]], group=process_group(attrs["group"]))
    return [out]


@register_kernel("HcomAllGather")
def all_gather(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x = inputs[0].contiguous()
    out = x.new_empty((x.shape[0] * attrs["rank_size"], *x.shape[1:]) if x.dim() else (attrs["rank_size"],))
    dist.all_gather_into_tensor(out, x, group=process_group(attrs["group"]))
    return [out]


@register_kernel("HcomReduceScatter")
def reduce_scatter(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x = inputs[0].contiguous()
    out = x.new_empty((x.shape[0] // attrs["rank_size"], *x.shape[1:]))
    dist.reduce_scatter_tensor(out, x, REDUCE_OPS[attrs["reduction"]], group=process_group(attrs["group"]))
    return [out]


@register_kernel("HcomBroadcast")
def broadcast(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    group = process_group(attrs["group"])
    outs = [x.clone() for x in inputs]
    for out in outs:
        dist.broadcast(out, group=group, group_src=attrs["root_rank"])
    return outs


@register_kernel("HcomAllToAll")
def all_to_all(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x = inputs[0].contiguous()
    out = x.new_empty(x.numel())
    dist.all_to_all_single(out, x.reshape(-1), group=process_group(attrs["group"]))
    return [out.reshape(x.shape)]


@register_kernel("HcomAllToAllV")
def all_to_all_v(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """Element counts and displacements of the flat send and receive buffers."""
    x, send_counts, send_displs, recv_counts, recv_displs = inputs
    flat = x.contiguous().reshape(-1)
    sends, recvs = _ints(send_counts), _ints(recv_counts)
    packed = torch.cat([flat[d : d + n] for d, n in zip(_ints(send_displs), sends)]) if sends else flat[:0]
    received = flat.new_empty(sum(recvs))
    dist.all_to_all_single(received, packed, recvs, sends, group=process_group(attrs["group"]))
    out = flat.new_zeros(max((d + n for d, n in zip(_ints(recv_displs), recvs)), default=0))
    start = 0
    for d, n in zip(_ints(recv_displs), recvs):
        out[d : d + n] = received[start : start + n]
        start += n
    return [_shaped(op, out, x)]


def gather_rows_uneven(x: torch.Tensor, counts: list[int], group: Any) -> torch.Tensor:
    """Rank r's first ``counts[r]`` rows, rank after rank: each rank's rows padded to the
    largest count, so one even all-gather carries them."""
    widest = max(counts, default=0)
    padded = x.new_zeros((widest, *x.shape[1:]))
    rows = min(x.shape[0], widest)
    padded[:rows] = x[:rows]
    gathered = x.new_empty((widest * len(counts), *x.shape[1:]))
    dist.all_gather_into_tensor(gathered, padded, group=group)
    parts = [gathered[r * widest : r * widest + c] for r, c in enumerate(counts)]
    return torch.cat(parts) if parts else x.new_empty((0, *x.shape[1:]))


def scatter_rows_reduced(x: torch.Tensor, counts: list[int], op: Any, group: Any) -> torch.Tensor:
    """The rows of ``x`` reduced over the group; rank r keeps ``counts[r]`` of them, after
    those of the ranks before it."""
    reduced = x.clone()
    dist.all_reduce(reduced, op, group=group)
    me = dist.get_rank(group)
    start = sum(counts[:me])
    return reduced[start : start + counts[me]].clone()


@register_kernel("HcomAllGatherV")
def all_gather_v(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [gather_rows_uneven(inputs[0], _ints(inputs[2]), process_group(attrs["group"]))]


@register_kernel("HcomReduceScatterV")
def reduce_scatter_v(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, counts = inputs[0], _ints(inputs[2])
    return [scatter_rows_reduced(x, counts, REDUCE_OPS[attrs["reduction"]], process_group(attrs["group"]))]


@register_kernel("HcomSend")
def send(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    dist.send(inputs[0].contiguous(), group=process_group(attrs["group"]), tag=attrs["sr_tag"], group_dst=attrs["dest_rank"])
    return []


@register_kernel("HcomReceive")
def receive(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    out = torch.empty(attrs["shape"], dtype=torch_dtype(attrs["dtype"]))
    dist.recv(out, group=process_group(attrs["group"]), tag=attrs["sr_tag"], group_src=attrs["src_rank"])
    return [out]
