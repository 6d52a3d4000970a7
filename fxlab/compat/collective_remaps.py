"""TorchAir's traceable-collective remaps, applied while fxlab captures.

Dynamo replaces a call of an in-place ``torch.distributed`` collective by the function
``torch.distributed._functional_collectives.traceable_collective_remaps`` maps it to.
PyTorch maps ``all_reduce``, ``all_gather_into_tensor``, ``reduce_scatter_tensor``,
``all_to_all_single`` ... to its functional collectives; importing TorchAir adds its own
entries (``adjust_traceable_collective_remaps``): ``dist.all_to_all`` (a list of tensors),
``dist.broadcast``, ``dist.send`` and ``dist.recv`` become its ``npu_define`` operators,
and, where ``torch_npu.distributed`` has them, the uneven all-gather and reduce-scatter
too. Each replacement runs the original collective when called outside tracing.

:func:`torchair_collective_remaps` makes the same entries for a block (with fxlab's
``npu_define`` operators, :mod:`fxlab.compat.npu_define_ops`), unless a loaded TorchAir
made its own; the table and the module attributes Dynamo reads the replacements from
are restored afterwards.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Iterator
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as functional_collectives

FUNCTIONAL_COLLECTIVES = "torch.distributed._functional_collectives"
ASYNC_REFUSED = (
    "a collective with async_op=True cannot be put into a compiled graph (TorchAir refuses it as well): "
    "call it with async_op=False inside the compiled code"
)


def _tracing() -> bool:
    return functional_collectives._are_we_tracing()


def _group_info(group: Any) -> tuple[str, list[int]]:
    """TorchAir's description of ``group`` (the default group when ``None``): its tag and ranks."""
    c10d = dist.distributed_c10d
    group = c10d._world.default_pg if group is None else group
    return c10d._get_group_tag(group), dist.get_process_group_ranks(group)


def _refuse_async(async_op: bool) -> None:
    if async_op:
        raise AssertionError(ASYNC_REFUSED)


# -- the replacements (named as TorchAir names them: Dynamo finds each by its name) ------------
def npu_broadcast_patch_dist(
    tensor: torch.Tensor, src: int | None = None, group: Any = None, async_op: bool = False, group_src: Any = None
) -> Any:
    if not _tracing():
        return dist.distributed_c10d.broadcast(tensor, src, group, async_op, group_src)
    _refuse_async(async_op)
    tag, ranks = _group_info(group)
    tensor.copy_(torch.ops.npu_define.broadcast(tensor, src, tag, ranks, len(ranks), group_src))
    return tensor


def npu_send_patch_dist(tensor: torch.Tensor, dst: int | None = None, group: Any = None, tag: int = 0, group_dst: Any = None) -> Any:
    if not _tracing():
        return dist.distributed_c10d.send(tensor, dst, group, tag, group_dst)
    pg_tag, ranks = _group_info(group)
    torch.ops.npu_define._send(tensor, dst, ranks, pg_tag, tag, group_dst, tensor.shape)
    return None


def npu_recv_patch_dist(tensor: torch.Tensor, src: int | None = None, group: Any = None, tag: int = 0, group_src: Any = None) -> Any:
    if not _tracing():
        return dist.distributed_c10d.recv(tensor, src, group, tag, group_src)
    pg_tag, ranks = _group_info(group)
    tensor.copy_(torch.ops.npu_define._recv(tensor, src, ranks, pg_tag, tag, group_src, tensor.shape))
    return None


def npu_all_to_all_patch_dist(
    output_tensor_list: list[torch.Tensor], input_tensor_list: list[torch.Tensor], group: Any = None, async_op: bool = False
) -> Any:
    if not _tracing():
        return dist.distributed_c10d.all_to_all(output_tensor_list, input_tensor_list, group, async_op)
    _refuse_async(async_op)
    if len(input_tensor_list) != len(output_tensor_list):
        raise AssertionError(f"all_to_all: {len(input_tensor_list)} input tensors but {len(output_tensor_list)} output tensors")
    tag, ranks = _group_info(group)
    for out, received in zip(output_tensor_list, _all_to_all_lists(output_tensor_list, input_tensor_list, tag, ranks)):
        out.copy_(received)
    return None


def _all_to_all_lists(outputs: list[torch.Tensor], inputs: list[torch.Tensor], tag: str, ranks: list[int]) -> list[torch.Tensor]:
    """One flat all-to-all of the inputs, concatenated; its result split and shaped as the
    outputs (an output of no elements is an empty tensor of its shape)."""
    send = [t.numel() for t in inputs]
    recv = [t.numel() for t in outputs]
    flat = torch.cat([t.flatten() for t in inputs])
    received = torch.ops.npu_define.all_to_all_single_npu(flat, send, _prefix(send), recv, _prefix(recv), tag, ranks, len(ranks))
    kept = [i for i, n in enumerate(recv) if n]
    pieces = dict(zip(kept, torch.split(received, [recv[i] for i in kept])))
    return [pieces[i].reshape(out.shape) if i in pieces else torch.empty(out.shape, dtype=received.dtype) for i, out in enumerate(outputs)]


def _prefix(counts: list[int]) -> list[int]:
    return [sum(counts[:i]) for i in range(len(counts))]


def npu_allgather_into_tensor_uneven_patch_dist(
    output: Any, input: Any, output_split_sizes: Any = None, group: Any = None, async_op: bool = False
) -> Any:  # noqa: A002
    if not _tracing():
        return _torch_npu_distributed().all_gather_into_tensor_uneven(output, input, output_split_sizes, group, async_op)
    _refuse_async(async_op)
    tag, ranks = _group_info(group)
    splits = [output.size(0) // len(ranks) for _ in ranks] if output_split_sizes is None else output_split_sizes
    gathered = torch.ops.npu_define.allgather_in_tensor_uneven(
        input, send_count=input.size(0), recv_counts=splits, tag=tag, rank_list=ranks, group_size=len(ranks), recv_displacements=[]
    )
    output.copy_(gathered.reshape(output.size()))
    return None


def npu_reduce_scatter_tensor_uneven_patch_dist(
    output: Any,
    input: Any,  # noqa: A002
    input_split_sizes: Any = None,
    op: Any = dist.ReduceOp.SUM,
    group: Any = None,
    async_op: bool = False,
) -> Any:
    if not _tracing():
        return _torch_npu_distributed().reduce_scatter_tensor_uneven(output, input, input_split_sizes, op, group, async_op)
    _refuse_async(async_op)
    tag, ranks = _group_info(group)
    splits = [input.size(0) // len(ranks) for _ in ranks] if input_split_sizes is None else input_split_sizes
    scattered = torch.ops.npu_define.reduce_scatter_tensor_uneven(
        input,
        send_counts=splits,
        recv_count=output.size(0),
        reduce_type=_reduce_name(op),
        tag=tag,
        rank_list=ranks,
        group_size=len(ranks),
        send_displacements=[],
    )
    output.copy_(scattered.reshape(output.size()))
    return None


_REDUCE_NAMES = {"SUM": "sum", "AVG": "avg", "PRODUCT": "product", "MIN": "min", "MAX": "max", "BAND": "band", "BOR": "bor", "BXOR": "bxor"}


def _reduce_name(op: Any) -> str:
    """A ``ReduceOp`` as the lower-case name the operators take (a name stays as it is)."""
    if isinstance(op, str):
        return op
    for name, lower in _REDUCE_NAMES.items():
        if op == getattr(dist.ReduceOp, name):
            return lower
    raise ValueError(f"unsupported reduce op: {op}")


def _torch_npu_distributed() -> Any:
    return importlib.import_module("torch_npu.distributed")


def _uneven_pairs() -> dict[Any, Any]:
    """The uneven collectives of ``torch_npu.distributed``, when it has them."""
    try:
        npu_dist = _torch_npu_distributed()
        return {
            npu_dist.all_gather_into_tensor_uneven: npu_allgather_into_tensor_uneven_patch_dist,
            npu_dist.reduce_scatter_tensor_uneven: npu_reduce_scatter_tensor_uneven_patch_dist,
        }
    except (ImportError, AttributeError):
        return {}


def remap_entries() -> dict[Any, Any]:
    """The entries TorchAir adds to the remap table, on this machine."""
    c10d = dist.distributed_c10d
    entries = {
        c10d.all_to_all: npu_all_to_all_patch_dist,
        c10d.broadcast: npu_broadcast_patch_dist,
        c10d.send: npu_send_patch_dist,
        c10d.recv: npu_recv_patch_dist,
    }
    entries.update(_uneven_pairs())
    return entries


def _torchair_made_its_own(table: dict[Any, Any]) -> bool:
    current = table.get(dist.distributed_c10d.broadcast)
    return (getattr(current, "__module__", "") or "").startswith("torchair")


# TorchAir's own replacements of the uneven collectives, by the function fxlab writes.
_TORCHAIR_UNEVEN = {
    npu_allgather_into_tensor_uneven_patch_dist: "_ge_concrete_graph.ge_converter.experimental.hcom_allgather",
    npu_reduce_scatter_tensor_uneven_patch_dist: "_ge_concrete_graph.ge_converter.experimental.hcom_reducescatter",
}


def _torchairs_uneven_entries() -> dict[Any, Any]:
    """A loaded TorchAir's own replacements of torch_npu.distributed's uneven collectives:
    imported without torch_npu, it made none, where an NPU machine's TorchAir has them."""
    entries = {}
    for collective, ours in _uneven_pairs().items():
        module = sys.modules.get(f"torchair.{_TORCHAIR_UNEVEN[ours]}")
        theirs = getattr(module, ours.__name__, None) if module is not None else None
        if theirs is not None:
            entries[collective] = theirs
    return entries


@contextlib.contextmanager
def torchair_collective_remaps() -> Iterator[bool]:
    """TorchAir's remaps for the block; yields whether fxlab made them (False when a
    loaded TorchAir already had, or torch has no distributed package)."""
    if not dist.is_available():
        yield False
        return
    module = importlib.import_module(FUNCTIONAL_COLLECTIVES)
    table = module.traceable_collective_remaps
    made = not _torchair_made_its_own(table)
    table_before, names_before = dict(table), dict(vars(module))
    entries = remap_entries() if made else {k: v for k, v in _torchairs_uneven_entries().items() if k not in table}
    try:
        table.update(entries)
        for replacement in entries.values():
            setattr(module, replacement.__name__, replacement)
        yield made
    finally:
        table.clear()
        table.update(table_before)
        for name in [n for n in vars(module) if n not in names_before]:
            delattr(module, name)
