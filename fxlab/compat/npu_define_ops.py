"""TorchAir's ``npu_define`` collective operators, defined and run on a CPU machine.

TorchAir's collective remaps put operators of its own ``npu_define`` namespace into the
graphs (``dist.broadcast`` becomes ``npu_define.broadcast``, an all-to-all becomes
``npu_define.all_to_all_single_npu`` ...). It defines them when it is imported, with Meta
functions and NPU kernels only. :func:`npu_define_operators` gives fxlab the same
operators for a block: defined from TorchAir's schemas when no TorchAir defined them,
with Meta functions, and with CPU kernels that run the collective on the process group
the operator names (``tag`` + ``ranks``: gloo in a multi-rank trace). Operators a loaded
TorchAir defined get only the CPU kernels. Everything is undone when the block closes.

It also holds the decomposition TorchAir adds to its table: ``_c10d_functional.
all_to_all_single`` becomes ``npu_define.all_to_all_single_npu`` with element counts and
displacements (:func:`decompose_all_to_all_single`).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
import torch.distributed as dist
from torch.fx.node import has_side_effect

from fxlab.compat.torchair_state import destroy_library
from fxlab.ir.kernels.hcom import gather_rows_uneven, scatter_rows_reduced

NAMESPACE = "npu_define"
# TorchAir's schemas (torch_npu 2.13.0, ge_converter/experimental/hcom_*.py).
SCHEMAS = {
    "allgather_in_tensor": "allgather_in_tensor(Tensor out, Tensor input, str tag, int[] ranks, int group_size) -> Tensor",
    "_allgather_in_tensor_shape": (
        "_allgather_in_tensor_shape(Tensor input, SymInt[] output_shape, str tag, int[] ranks, int group_size) -> Tensor"
    ),
    "allgather_in_tensor_uneven": (
        "allgather_in_tensor_uneven(Tensor input_tensor, SymInt send_count, SymInt[] recv_counts, str tag, int[] rank_list, "
        "int group_size, SymInt[] recv_displacements) -> Tensor"
    ),
    "all_to_all_single_npu": (
        "all_to_all_single_npu(Tensor input, SymInt[] send_counts, SymInt[] send_displacements, SymInt[] recv_counts, "
        "SymInt[] recv_displacements, str tag, int[] ranks, int group_size) -> Tensor"
    ),
    "broadcast": "broadcast(Tensor self, int? src, str tag, int[] ranks, int group_size, int? group_src=None) -> Tensor",
    "reduce_scatter_tensor_uneven": (
        "reduce_scatter_tensor_uneven(Tensor input_tensor, SymInt[] send_counts, SymInt recv_count, str reduce_type, str tag, "
        "int[] rank_list, int group_size, SymInt[] send_displacements) -> Tensor"
    ),
    "_send": "_send(Tensor input_tensor, int? dst, int[] ranks, str pg_tag, int tag, int? group_dst=None, int[]? shape=None) -> None",
    "_recv": "_recv(Tensor out_tensor, int? src, int[] ranks, str pg_tag, int tag, int? group_src=None, int[]? shape=None) -> Tensor",
}
# Operators TorchAir marks as side effects: nothing reads a send, and a receive or an
# all-to-all of zero elements must still meet its peers.
SIDE_EFFECT_OPS = ("all_to_all_single_npu", "_send", "_recv")

REDUCE_OPS = {
    "sum": dist.ReduceOp.SUM,
    "avg": dist.ReduceOp.AVG,
    "product": dist.ReduceOp.PRODUCT,
    "min": dist.ReduceOp.MIN,
    "max": dist.ReduceOp.MAX,
    "band": dist.ReduceOp.BAND,
    "bor": dist.ReduceOp.BOR,
    "bxor": dist.ReduceOp.BXOR,
}


def operator(name: str) -> Any:
    """``torch.ops.npu_define.<name>.default``, or ``None`` while it is not defined."""
    try:
        return getattr(getattr(torch.ops, NAMESPACE), name).default
    except (AttributeError, RuntimeError):
        return None


def group_of(tag: str, ranks: Sequence[int], group_size: int) -> Any:
    """The process group an operator names, as TorchAir finds it."""
    return dist.distributed_c10d._find_or_create_pg_by_ranks_and_tag(tag, list(ranks), group_size)


def _rows(counts: Sequence[int]) -> list[int]:
    return [int(c) for c in counts]


# -- Meta functions: the output each operator makes ------------------------------------------
def _non_leading(t: torch.Tensor) -> int:
    return 1 if t.dim() <= 1 else math.prod(t.shape[1:])


def _with_rows(t: torch.Tensor, rows: Any) -> torch.Tensor:
    return t.new_empty([rows, *t.shape[1:]])


def _all_to_all_shape(t: torch.Tensor, recv_counts: Sequence[Any], group_size: int) -> list[Any]:
    per_row = _non_leading(t)
    if len(recv_counts) == 0:
        recv_counts = [t.shape[0] * per_row // group_size] * group_size
    return [sum(recv_counts) // per_row, *t.shape[1:]]


META = {
    "allgather_in_tensor": lambda out, inp, tag, ranks, size: out.new_empty(out.shape),
    "_allgather_in_tensor_shape": lambda inp, shape, tag, ranks, size: inp.new_empty(shape),
    "allgather_in_tensor_uneven": lambda inp, send, recv, tag, ranks, size, displs: _with_rows(inp, sum(recv)),
    "all_to_all_single_npu": lambda inp, sc, sd, rc, rd, tag, ranks, size: inp.new_empty(_all_to_all_shape(inp, rc, size)),
    "broadcast": lambda t, src, tag, ranks, size, group_src=None: torch.empty_like(t),
    "reduce_scatter_tensor_uneven": lambda inp, sc, rc, op, tag, ranks, size, sd: _with_rows(inp, rc),
    "_send": lambda t, dst, ranks, pg_tag, tag, group_dst=None, shape=None: None,
    "_recv": lambda t, src, ranks, pg_tag, tag, group_src=None, shape=None: t.new_empty(t.shape),
}


# -- CPU kernels: the collective, run on the process group ------------------------------------
def _allgather_in_tensor(out: torch.Tensor, inp: torch.Tensor, tag: str, ranks: list[int], size: int) -> torch.Tensor:
    return _gather_into(inp.new_empty(out.shape), inp, group_of(tag, ranks, size))


def _allgather_in_tensor_shape(inp: torch.Tensor, shape: list[int], tag: str, ranks: list[int], size: int) -> torch.Tensor:
    return _gather_into(inp.new_empty(shape), inp, group_of(tag, ranks, size))


def _gather_into(out: torch.Tensor, inp: torch.Tensor, group: Any) -> torch.Tensor:
    flat = inp.new_empty(out.numel())
    dist.all_gather_into_tensor(flat, inp.contiguous().reshape(-1), group=group)
    return flat.reshape(out.shape)


def _allgather_uneven(inp: Any, send: int, recv: list[int], tag: str, ranks: list[int], size: int, displs: list[int]) -> torch.Tensor:
    return gather_rows_uneven(inp, _rows(recv), group_of(tag, ranks, size))


def exchange_all_to_all(inp: torch.Tensor, send_counts: Sequence[int], recv_counts: Sequence[int], group: Any) -> torch.Tensor:
    """``inp`` flattened, ``send_counts[r]`` elements to rank r, ``recv_counts[r]``
    elements from it: the flat received buffer."""
    out = inp.new_empty(sum(_rows(recv_counts)))
    dist.all_to_all_single(out, inp.contiguous().reshape(-1), _rows(recv_counts), _rows(send_counts), group=group)
    return out


def _all_to_all_single(inp: Any, sc: list[int], sd: list[int], rc: list[int], rd: list[int], tag: str, ranks: list[int], size: int) -> Any:
    flat = exchange_all_to_all(inp, sc, rc, group_of(tag, ranks, size))
    return flat.reshape(_all_to_all_shape(inp, rc, size))


def _broadcast(t: torch.Tensor, src: int | None, tag: str, ranks: list[int], size: int, group_src: int | None = None) -> torch.Tensor:
    out = t.clone()
    dist.broadcast(out, src, group=group_of(tag, ranks, size), group_src=group_src)
    return out


def _reduce_scatter_uneven(inp: Any, sc: list[int], rc: int, op: str, tag: str, ranks: list[int], size: int, sd: list[int]) -> Any:
    counts = _rows(sc) if len(sc) else [inp.shape[0] // size] * size
    return scatter_rows_reduced(inp, counts, REDUCE_OPS[op], group_of(tag, ranks, size))


def _send(t: Any, dst: int | None, ranks: list[int], pg_tag: str, tag: int, group_dst: int | None = None, shape: Any = None) -> None:
    dist.send(t.contiguous(), dst, group=group_of(pg_tag, ranks, len(ranks)), tag=tag, group_dst=group_dst)


def _recv(t: Any, src: int | None, ranks: list[int], pg_tag: str, tag: int, group_src: int | None = None, shape: Any = None) -> Any:
    out = t.new_empty(t.shape)
    dist.recv(out, src, group=group_of(pg_tag, ranks, len(ranks)), tag=tag, group_src=group_src)
    return out


CPU_KERNELS: dict[str, Callable[..., Any]] = {
    "allgather_in_tensor": _allgather_in_tensor,
    "_allgather_in_tensor_shape": _allgather_in_tensor_shape,
    "allgather_in_tensor_uneven": _allgather_uneven,
    "all_to_all_single_npu": _all_to_all_single,
    "broadcast": _broadcast,
    "reduce_scatter_tensor_uneven": _reduce_scatter_uneven,
    "_send": _send,
    "_recv": _recv,
}


# -- TorchAir's decomposition of the functional all-to-all ------------------------------------
def all_to_all_counts(t: torch.Tensor, output_split_sizes: Sequence[Any] | None, input_split_sizes: Sequence[Any] | None, size: int) -> Any:
    """Send and receive element counts and displacements of an all-to-all of ``t`` split
    along its first dimension (equal shares when no split sizes are given)."""
    per_row = t.numel() if t.shape[0] == 0 else t.numel() // t.shape[0]
    even = [t.numel() // size] * size
    send = even if input_split_sizes is None else [s * per_row for s in input_split_sizes]
    recv = even if output_split_sizes is None else [s * per_row for s in output_split_sizes]
    if len(send) != len(recv):
        raise ValueError(f"all_to_all_single: {len(send)} input splits but {len(recv)} output splits")
    return send, _prefix_sums(send), recv, _prefix_sums(recv)


def _prefix_sums(counts: Sequence[Any]) -> list[Any]:
    return [sum(counts[:i]) for i in range(len(counts))]


def all_to_all_single_npu(t: torch.Tensor, output_split_sizes: Any, input_split_sizes: Any, tag: str, ranks: list[int], size: int) -> Any:
    """``npu_define.all_to_all_single_npu`` of ``t`` as TorchAir calls it."""
    send, send_displs, recv, recv_displs = all_to_all_counts(t, output_split_sizes, input_split_sizes, size)
    return torch.ops.npu_define.all_to_all_single_npu(t, send, send_displs, recv, recv_displs, tag, ranks, size)


def decompose_all_to_all_single(t: torch.Tensor, output_split_sizes: Any, input_split_sizes: Any, group_name: Any) -> Any:
    """``_c10d_functional.all_to_all_single`` as TorchAir decomposes it."""
    group = dist.distributed_c10d._resolve_process_group(group_name)
    ranks = dist.get_process_group_ranks(group)
    tag = dist.distributed_c10d._get_group_tag(group)
    return all_to_all_single_npu(t, output_split_sizes, input_split_sizes, tag, ranks, len(ranks))


def decompositions() -> dict[Any, Callable[..., Any]]:
    """TorchAir's collective decompositions that apply to this torch."""
    target = getattr(torch.ops._c10d_functional, "all_to_all_single", None)
    return {target.default: decompose_all_to_all_single} if target is not None else {}


# -- the block ---------------------------------------------------------------------------------
@contextlib.contextmanager
def npu_define_operators() -> Iterator[list[str]]:
    """The ``npu_define`` collective operators for the block (see the module docstring);
    yields the names fxlab defined itself (none when TorchAir had)."""
    if not dist.is_available():
        yield []
        return
    library = torch.library.Library(NAMESPACE, "FRAGMENT")  # noqa: TOR901 - undone on exit
    defined: list[str] = []
    try:
        for name, schema in SCHEMAS.items():
            if operator(name) is None:
                library.define(schema)
                library.impl(name, META[name], "Meta")
                defined.append(name)
            if not torch._C._dispatch_has_kernel_for_dispatch_key(f"{NAMESPACE}::{name}", "CPU"):
                library.impl(name, CPU_KERNELS[name], "CPU")
        for name in SIDE_EFFECT_OPS:
            has_side_effect(operator(name))
        yield defined
    finally:
        destroy_library(library)
