"""Collectives: the ``Hcom*`` ops TorchAir builds for them.

``_c10d_functional`` (and the older ``c10d_functional``) ``all_reduce`` →
``HcomAllReduce(reduction, group, fusion=0)``, ``all_gather_into_tensor`` →
``HcomAllGather(rank_size, group)``, ``reduce_scatter_tensor`` → ``HcomReduceScatter``,
``broadcast`` → ``HcomBroadcast(root_rank, group)``, ``wait_tensor`` → ``Identity``. The
``npu_define`` operators TorchAir's collective remaps put into graphs
(:mod:`fxlab.compat.collective_remaps`) become ``HcomAllGather`` + ``Reshape``,
``HcomAllGatherV``, ``HcomReduceScatterV``, ``HcomAllToAll`` / ``HcomAllToAllV``,
``HcomBroadcast``, ``HcomSend`` and ``HcomReceive``; the ops of the uneven and
all-to-all forms, and receives, are kept to the end (a control edge into ``NetOutput``)
as TorchAir keeps them, since they must meet their peers even when nothing reads them.

The ``group`` attr is the group's name as TorchAir derives it on a CPU process group
(:mod:`fxlab.ir.hcom_groups`); reductions are named as TorchAir names them
(``sum``/``min``/``max``/``prod``; it refuses the others). The ``npu_define`` operators
exist only while defined (by TorchAir, or by fxlab while it captures), so their
converters are kept by name, as those of torch_npu's operators are.

The ``hcom_*`` builders are what other collective converters call.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives  # noqa: F401 - defines the older c10d_functional operators

from fxlab.ir import ge
from fxlab.ir.hcom_groups import group_name, group_name_of
from fxlab.ir.model import DataType
from fxlab.passes.converters.promotion import index_input
from fxlab.passes.converters.registry import NAMED_CONVERTER_LOOKUPS
from fxlab.passes.converters.registry import CONVERTERS, ORIGIN_FXLAB, Converter, Sample, overload, register_converter

NAMESPACE = "npu_define"
# The CANN release from which TorchAir builds HcomAllToAll for an even all-to-all (older
# releases, and TorchAir without torch_npu, get HcomAllToAllV); the CANN stood in is one
# past it (fxlab.compat.native_standins.torch_npu_runtime.DEFAULT_CANN).
ALL_TO_ALL_CANN = "8.2.RC1"
EVEN_ALL_TO_ALL = True


# -- the group and the reduction ------------------------------------------------------------
def reduction_name(reduce_op: str) -> str:
    """A reduction as GE names it; TorchAir refuses those GE has no name for."""
    upper = reduce_op.upper()
    if upper not in dist.ReduceOp.RedOpType.__members__:
        raise ValueError(f"Invalid reduce operation {upper}")
    names = {"SUM": "sum", "MIN": "min", "MAX": "max", "PRODUCT": "prod"}
    if upper not in names:
        raise ValueError(f"ge unsupported reduce type {upper}")
    return names[upper]


# -- builders ------------------------------------------------------------------------------
def hcom_all_reduce(x: ge.Tensor, reduction: str, group: str, fusion: int = 0) -> ge.Tensor:
    return ge.op1("HcomAllReduce", {"x": x}, {"reduction": reduction, "group": group, "fusion": fusion, "fusion_id": -1})


def hcom_all_gather(x: ge.Tensor, rank_size: int, group: str) -> ge.Tensor:
    return ge.op1("HcomAllGather", {"x": x}, {"rank_size": rank_size, "group": group, "fusion": 0, "fusion_id": -1})


def hcom_reduce_scatter(x: ge.Tensor, reduction: str, group: str, rank_size: int) -> ge.Tensor:
    attrs = {"reduction": reduction, "group": group, "rank_size": rank_size, "fusion": 0, "fusion_id": -1}
    return ge.op1("HcomReduceScatter", {"x": x}, attrs)


def hcom_broadcast(x: ge.Tensor, root_rank: int, group: str) -> ge.Tensor:
    outs = ge.op("HcomBroadcast", {"x0": x}, {"root_rank": root_rank, "group": group, "fusion": 0, "fusion_id": -1}, outputs=("y0",))
    return outs[0]


def int64_inputs(*values: Any) -> list[ge.Tensor]:
    """Counts and displacements as TorchAir passes them: int64 tensors."""
    return ge.promote(DataType.DT_INT64, *values)


# -- _c10d_functional ---------------------------------------------------------------------------
def _default_group() -> tuple[str, int]:
    """The default group's name and size, when the samples are made (one rank before a
    test starts its group)."""
    world: Any = dist.group.WORLD if dist.is_available() and dist.is_initialized() else None
    return (world.group_name, dist.get_world_size()) if world is not None else ("0", 1)


def _all_reduce_samples() -> list[Sample]:
    name, _ = _default_group()
    return [Sample((torch.randn(4, 3), "sum", name)), Sample((torch.randn(2, 5), "max", name))]


def _gather_samples() -> list[Sample]:
    name, size = _default_group()
    return [Sample((torch.randn(2, 3), size, name))]


def _scatter_samples() -> list[Sample]:
    name, size = _default_group()
    return [Sample((torch.randn(2 * size, 3), "sum", size, name))]


def _broadcast_samples() -> list[Sample]:
    name, _ = _default_group()
    return [Sample((torch.randn(3, 2), 0, name))]


@register_converter(overload("_c10d_functional.all_reduce.default"), samples=_all_reduce_samples)
def convert_all_reduce(input: ge.Tensor, reduce_op: str, group_name: Any, *, meta_outputs: Any = None) -> ge.Tensor:  # noqa: A002
    """all_reduce(Tensor input, str reduce_op, Any group_name) -> Tensor"""
    return hcom_all_reduce(input, reduction_name(reduce_op), group_name_of(group_name))


@register_converter(overload("_c10d_functional.all_gather_into_tensor.default"), samples=_gather_samples)
def convert_all_gather(input: ge.Tensor, group_size: int, group_name: Any, *, meta_outputs: Any = None) -> ge.Tensor:  # noqa: A002
    """all_gather_into_tensor(Tensor input, int group_size, Any group_name) -> Tensor"""
    return hcom_all_gather(input, group_size, group_name_of(group_name))


@register_converter(overload("_c10d_functional.reduce_scatter_tensor.default"), samples=_scatter_samples)
def convert_reduce_scatter(input: ge.Tensor, reduce_op: str, group_size: int, group_name: Any, *, meta_outputs: Any = None) -> ge.Tensor:  # noqa: A002
    """reduce_scatter_tensor(Tensor input, str reduce_op, int group_size, Any group_name) -> Tensor"""
    return hcom_reduce_scatter(input, reduction_name(reduce_op), group_name_of(group_name), group_size)


@register_converter(overload("_c10d_functional.broadcast.default"), samples=_broadcast_samples)
def convert_broadcast(input: ge.Tensor, src: int, group_name: Any, *, meta_outputs: Any = None) -> ge.Tensor:  # noqa: A002
    """broadcast(Tensor input, int src, Any group_name) -> Tensor"""
    return hcom_broadcast(input, src, group_name_of(group_name))


@register_converter(
    overload("_c10d_functional.wait_tensor.default"),
    overload("c10d_functional.wait_tensor.default"),
    samples=lambda: [Sample((torch.randn(3, 4),))],
)
def convert_wait_tensor(tensor: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """wait_tensor(Tensor tensor) -> Tensor"""
    return ge.op1("Identity", {"x": tensor})


# -- c10d_functional: the group as tag, ranks and group size ------------------------------------
def _legacy_group() -> tuple[list[int], int]:
    _, size = _default_group()
    return list(range(size)), size


def _legacy_reduce_samples() -> list[Sample]:
    ranks, size = _legacy_group()
    return [Sample((torch.randn(4, 3), "sum", "", ranks, size))]


def _legacy_scatter_samples() -> list[Sample]:
    ranks, size = _legacy_group()
    return [Sample((torch.randn(2 * size, 3), "sum", "", ranks, size))]


def _legacy_gather_samples() -> list[Sample]:
    ranks, size = _legacy_group()
    return [Sample((torch.randn(2, 3), "", ranks, size))]


@register_converter(overload("c10d_functional.all_reduce.default"), samples=_legacy_reduce_samples)
def convert_legacy_all_reduce(
    self: ge.Tensor, reduceOp: str, tag: str, ranks: list[int], group_size: int, *, meta_outputs: Any = None
) -> ge.Tensor:
    """all_reduce(Tensor self, str reduceOp, str tag, int[] ranks, int group_size) -> Tensor"""
    return hcom_all_reduce(self, reduction_name(reduceOp), group_name(tag, ranks, group_size))


@register_converter(overload("c10d_functional.all_gather_into_tensor.default"), samples=_legacy_gather_samples)
def convert_legacy_all_gather(shard: ge.Tensor, tag: str, ranks: list[int], group_size: int, *, meta_outputs: Any = None) -> ge.Tensor:
    """all_gather_into_tensor(Tensor shard, str tag, int[] ranks, int group_size) -> Tensor"""
    return hcom_all_gather(shard, group_size, group_name(tag, ranks, group_size))


@register_converter(overload("c10d_functional.reduce_scatter_tensor.default"), samples=_legacy_scatter_samples)
def convert_legacy_reduce_scatter(
    input: ge.Tensor,  # noqa: A002
    reduceOp: str,
    tag: str,
    ranks: list[int],
    group_size: int,
    *,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """reduce_scatter_tensor(Tensor input, str reduceOp, str tag, int[] ranks, int group_size) -> Tensor"""
    return hcom_reduce_scatter(input, reduction_name(reduceOp), group_name(tag, ranks, group_size), group_size)


# -- npu_define: kept by name, registered while defined ------------------------------------------
NPU_DEFINE_CONVERTERS: dict[str, tuple[Callable[..., Any], Callable[[], list[Sample]]]] = {}


def npu_define_converter(name: str, samples: Callable[[], list[Sample]]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        if name in NPU_DEFINE_CONVERTERS:
            raise ValueError(f"two fxlab converters for npu_define::{name}")
        NPU_DEFINE_CONVERTERS[name] = (fn, samples)
        return fn

    return decorate


def converter_by_name(target: Any) -> Callable[..., Any] | None:
    if getattr(target, "namespace", None) != NAMESPACE:
        return None
    entry = NPU_DEFINE_CONVERTERS.get(f"{target._opname}.{target._overloadname}")
    return entry[0] if entry is not None else None


NAMED_CONVERTER_LOOKUPS.append(converter_by_name)


def _live(name: str) -> Any:
    op, _, overload_name = name.partition(".")
    try:
        return getattr(getattr(getattr(torch.ops, NAMESPACE), op), overload_name)
    except (AttributeError, RuntimeError):
        return None


@contextlib.contextmanager
def npu_define_converters() -> Iterator[list[str]]:
    """Register the converters of the ``npu_define`` operators defined now; unregistered on exit."""
    registered = []
    for name, (fn, samples) in NPU_DEFINE_CONVERTERS.items():
        target = _live(name)
        if target is None or target in CONVERTERS:
            continue
        CONVERTERS.register(Converter(target=target, fn=fn, origin=ORIGIN_FXLAB, samples=samples, where=f"{__name__}:{fn.__name__}"))
        registered.append(target)
    try:
        yield [str(t) for t in registered]
    finally:
        for target in registered:
            converter = CONVERTERS.get(target)
            if converter is not None and converter.origin == ORIGIN_FXLAB:
                CONVERTERS.unregister(target)


def _tag_ranks() -> tuple[str, list[int], int]:
    world: Any = dist.group.WORLD if dist.is_available() and dist.is_initialized() else None
    if world is None:
        return "ptd:0", [0], 1
    return dist.distributed_c10d._get_group_tag(world), dist.get_process_group_ranks(world), dist.get_world_size()


def _shape_gather_samples() -> list[Sample]:
    tag, ranks, size = _tag_ranks()
    return [Sample((torch.randn(2, 3), [2 * size, 3], tag, ranks, size))]


@npu_define_converter("_allgather_in_tensor_shape.default", _shape_gather_samples)
def convert_allgather_in_tensor_shape(
    input: ge.Tensor,
    output_shape: Sequence[int],
    tag: str,
    ranks: list[int],
    group_size: int,
    *,
    meta_outputs: Any = None,  # noqa: A002
) -> ge.Tensor:
    """_allgather_in_tensor_shape(Tensor input, SymInt[] output_shape, str tag, int[] ranks, int group_size) -> Tensor"""
    gathered = hcom_all_gather(input, group_size, group_name(tag, ranks, group_size))
    # a size list with symbols arrives packed (TorchAir's walk packs it before the converter)
    return ge.op1("Reshape", {"x": gathered, "shape": index_input(output_shape)}, {"axis": 0, "num_axes": -1})


def _in_tensor_gather_samples() -> list[Sample]:
    tag, ranks, size = _tag_ranks()
    return [Sample((torch.zeros(2 * size, 3), torch.randn(2, 3), tag, ranks, size))]


@npu_define_converter("allgather_in_tensor.default", _in_tensor_gather_samples)
def convert_allgather_in_tensor(
    out: ge.Tensor,
    input: ge.Tensor,
    tag: str,
    ranks: list[int],
    group_size: int,
    *,
    meta_outputs: Any = None,  # noqa: A002
) -> ge.Tensor:
    """allgather_in_tensor(Tensor out, Tensor input, str tag, int[] ranks, int group_size) -> Tensor"""
    gathered = hcom_all_gather(input, group_size, group_name(tag, ranks, group_size))
    shape = ge.op1("Shape", {"x": out}, {"dtype": 9}, dtypes=DataType.DT_INT64, shapes=[(out.rank,)])
    return ge.op1("Reshape", {"x": gathered, "shape": shape}, {"axis": 0, "num_axes": -1})


def _uneven_gather_samples() -> list[Sample]:
    tag, ranks, size = _tag_ranks()
    return [Sample((torch.randn(2, 3), 2, [2] * size, tag, ranks, size, []))]


@npu_define_converter("allgather_in_tensor_uneven.default", _uneven_gather_samples)
def convert_allgather_in_tensor_uneven(
    input_tensor: ge.Tensor,
    send_count: Any,
    recv_counts: Any,
    tag: str,
    rank_list: list[int],
    group_size: int,
    recv_displacements: Any,
    *,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """allgather_in_tensor_uneven(Tensor input_tensor, SymInt send_count, SymInt[] recv_counts, str tag, int[] rank_list, int group_size, SymInt[] recv_displacements) -> Tensor"""
    send, recv, displs = int64_inputs(send_count, recv_counts, recv_displacements)
    group = group_name(tag, rank_list, group_size)
    inputs = {"x": input_tensor, "send_count": send, "recv_counts": recv, "recv_displacements": displs}
    return ge.keep_to_the_end(ge.op1("HcomAllGatherV", inputs, {"group": group}))


def _uneven_scatter_samples() -> list[Sample]:
    tag, ranks, size = _tag_ranks()
    return [Sample((torch.randn(2 * size, 3), [2] * size, 2, "sum", tag, ranks, size, []))]


@npu_define_converter("reduce_scatter_tensor_uneven.default", _uneven_scatter_samples)
def convert_reduce_scatter_tensor_uneven(
    input_tensor: ge.Tensor,
    send_counts: Any,
    recv_count: Any,
    reduce_type: str,
    tag: str,
    rank_list: list[int],
    group_size: int,
    send_displacements: Any,
    *,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """reduce_scatter_tensor_uneven(Tensor input_tensor, SymInt[] send_counts, SymInt recv_count, str reduce_type, str tag, int[] rank_list, int group_size, SymInt[] send_displacements) -> Tensor"""
    counts, displs, recv = int64_inputs(send_counts, send_displacements, recv_count)
    attrs = {"reduction": reduction_name(reduce_type), "group": group_name(tag, rank_list, group_size)}
    inputs = {"x": input_tensor, "recv_count": recv, "send_counts": counts, "send_displacements": displs}
    return ge.keep_to_the_end(ge.op1("HcomReduceScatterV", inputs, attrs))


def _all_to_all_samples() -> list[Sample]:
    tag, ranks, size = _tag_ranks()
    even = [6] * size
    uneven = [2 * (r + 1) for r in range(size)]
    return [
        Sample((torch.randn(2 * size, 3), even, _prefix(even), even, _prefix(even), tag, ranks, size)),
        Sample((torch.randn(sum(uneven) // 2, 2), uneven, _prefix(uneven), uneven, _prefix(uneven), tag, ranks, size)),
    ]


def _prefix(counts: Sequence[int]) -> list[int]:
    return [sum(counts[:i]) for i in range(len(counts))]


@npu_define_converter("all_to_all_single_npu.default", _all_to_all_samples)
def convert_all_to_all_single_npu(
    input: ge.Tensor,  # noqa: A002
    send_counts: Any,
    send_displacements: Any,
    recv_counts: Any,
    recv_displacements: Any,
    tag: str,
    ranks: list[int],
    group_size: int,
    *,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """all_to_all_single_npu(Tensor input, SymInt[] send_counts, SymInt[] send_displacements, SymInt[] recv_counts, SymInt[] recv_displacements, str tag, int[] ranks, int group_size) -> Tensor"""
    group = group_name(tag, ranks, group_size)
    counts_known = isinstance(send_counts, (list, tuple)) and isinstance(recv_counts, (list, tuple))
    if EVEN_ALL_TO_ALL and counts_known and len(set(list(send_counts) + list(recv_counts))) == 1:
        return ge.op1("HcomAllToAll", {"x": input}, {"group": group})
    sc, sd, rc, rd = int64_inputs(send_counts, send_displacements, recv_counts, recv_displacements)
    inputs = {"send_data": input, "send_counts": sc, "send_displacements": sd, "recv_counts": rc, "recv_displacements": rd}
    return ge.keep_to_the_end(ge.op("HcomAllToAllV", inputs, {"group": group}, outputs=("recv_data",))[0])


def _npu_broadcast_samples() -> list[Sample]:
    tag, ranks, size = _tag_ranks()
    return [Sample((torch.randn(3, 2), ranks[0], tag, ranks, size))]


@npu_define_converter("broadcast.default", _npu_broadcast_samples)
def convert_npu_broadcast(
    self: ge.Tensor, src: int | None, tag: str, ranks: list[int], group_size: int, group_src: int | None = None, *, meta_outputs: Any = None
) -> ge.Tensor:
    """broadcast(Tensor self, int? src, str tag, int[] ranks, int group_size, int? group_src=None) -> Tensor"""
    name = group_name(tag, ranks, group_size)
    group = dist.distributed_c10d._find_or_create_pg_by_ranks_and_tag(tag, list(ranks), group_size)
    return hcom_broadcast(self, dist.distributed_c10d._canonicalize_group_rank(group, src, group_src), name)


def _send_samples() -> list[Sample]:
    tag, ranks, _ = _tag_ranks()
    return [Sample((torch.randn(2, 3), ranks[0], ranks, tag, 0, None, [2, 3]))]


@npu_define_converter("_send.default", _send_samples)
def convert_send(
    input_tensor: ge.Tensor,
    dst: int | None,
    ranks: list[int],
    pg_tag: str,
    tag: int,
    group_dst: int | None = None,
    shape: list[int] | None = None,
    *,
    meta_outputs: Any = None,
) -> None:
    """_send(Tensor input_tensor, int? dst, int[] ranks, str pg_tag, int tag, int? group_dst=None, int[]? shape=None) -> None"""
    name = group_name(pg_tag, ranks)
    group = dist.distributed_c10d._find_or_create_pg_by_ranks_and_tag(pg_tag, list(ranks), len(ranks))
    dest = dist.distributed_c10d._canonicalize_group_rank(group, dst, group_dst)
    attrs = {"group": name, "sr_tag": tag, "dest_rank": dest, "_force_skip_prune": True}
    ge.op("HcomSend", {"x": input_tensor}, attrs, outputs=())
    return None


def _recv_samples() -> list[Sample]:
    tag, ranks, _ = _tag_ranks()
    return [Sample((torch.zeros(2, 3), ranks[0], ranks, tag, 0, None, [2, 3]))]


@npu_define_converter("_recv.default", _recv_samples)
def convert_recv(
    out_tensor: ge.Tensor,
    src: int | None,
    ranks: list[int],
    pg_tag: str,
    tag: int,
    group_src: int | None = None,
    shape: list[int] | None = None,
    *,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """_recv(Tensor out_tensor, int? src, int[] ranks, str pg_tag, int tag, int? group_src=None, int[]? shape=None) -> Tensor"""
    name = group_name(pg_tag, ranks)
    group = dist.distributed_c10d._find_or_create_pg_by_ranks_and_tag(pg_tag, list(ranks), len(ranks))
    source = dist.distributed_c10d._canonicalize_group_rank(group, src, group_src)
    attrs = {"group": name, "sr_tag": tag, "src_rank": source, "shape": list(shape or ()), "dtype": out_tensor.dtype}
    return ge.keep_to_the_end(ge.op1("HcomReceive", {}, attrs, dtypes=out_tensor.dtype))
