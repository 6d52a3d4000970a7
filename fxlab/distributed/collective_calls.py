"""The collectives of a functional graph, as the ranks must agree on them.

Each collective node becomes a :class:`CollectiveCall`: what it does (the operator), on
which channel (its group's name as TorchAir writes it; for a send or a receive, the
pair of ranks), with what data (dtype, shape), reduction and root, and the user's source
line. Ranks compare their calls channel by channel, in order
(:mod:`fxlab.distributed.agreement`); :func:`disagreement` says what differs between two
ranks' calls at one position, or nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.fx as fx

from fxlab.capture.ranks import is_collective
from fxlab.ir.hcom_groups import decode, encode, tag_and_ranks

# Arguments naming the group, by the operators' schemas.
_GROUP_ARGS = ("group_name",)
_TAG_ARGS = ("tag", "pg_tag")
_RANK_ARGS = ("ranks", "rank_list")
_REDUCE_ARGS = ("reduce_op", "reduceOp", "reduce_type")
# Operators whose ranks may send different numbers of rows (only rows' size must agree).
ROWS_MAY_DIFFER = frozenset({"all_to_all_single", "all_to_all_single_npu", "allgather_in_tensor_uneven", "reduce_scatter_tensor_uneven"})
P2P = frozenset({"_send", "_recv"})
_PACKAGE_DIRS = (str(Path(torch.__file__).parent), str(Path(__file__).resolve().parents[1]))


@dataclass
class CollectiveCall:
    """One collective of one rank's graph (plain data: it crosses processes as JSON)."""

    op: str
    channel: str  # the group's name; for a send or receive, "<group> <src>-><dst>"
    members: list[int]  # global ranks that take part
    dtype: str
    shape: list[Any]
    reduction: str | None = None
    root: int | None = None
    counts: dict[str, list[int]] = field(default_factory=dict)  # send/recv counts where known
    rank: int = 0
    graph: int = 0
    node: str = ""
    source: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CollectiveCall:
        return cls(**data)

    @property
    def channel_key(self) -> str:
        return hashlib.sha1(self.channel.encode()).hexdigest()[:16]

    def describe(self) -> str:
        """``all_reduce (sum) of float32[4, 8]``."""
        extra = ", ".join(x for x in (self.reduction, None if self.root is None else f"root {self.root}") if x)
        dims = ", ".join(map(str, self.shape))
        return f"{self.op}{f' ({extra})' if extra else ''} of {self.dtype}[{dims}]"

    def where(self) -> str:
        return f"{self.source or 'an unknown line'} (graph {self.graph}, node {self.node})"


def collective_calls(gm: fx.GraphModule, graph_index: int, rank: int) -> list[CollectiveCall]:
    """The collectives of ``gm`` in graph order."""
    return [_call_of(n, graph_index, rank) for n in gm.graph.nodes if n.op == "call_function" and is_collective(n.target)]


def _bound(node: fx.Node) -> dict[str, Any]:
    target: Any = node.target
    schema = target._schema
    bound = {a.name: a.default_value for a in schema.arguments if a.has_default_value()}
    bound.update({a.name: v for a, v in zip(schema.arguments, node.args)})
    bound.update(node.kwargs)
    return bound


def _call_of(node: fx.Node, graph_index: int, rank: int) -> CollectiveCall:
    args = _bound(node)
    group, tag, ranks = _group_of(args)
    tensor = next((a for a in node.args if isinstance(a, fx.Node) and isinstance(a.meta.get("val"), torch.Tensor)), None)
    val = tensor.meta["val"] if tensor is not None else None
    target: Any = node.target
    op = target._opname
    call = CollectiveCall(
        op=op,
        channel=encode(tag, ranks),
        members=list(ranks),
        dtype=str(val.dtype).removeprefix("torch.") if val is not None else "",
        shape=[d if isinstance(d, int) else str(d) for d in val.shape] if val is not None else [],
        reduction=next((str(args[k]) for k in _REDUCE_ARGS if k in args), None),
        rank=rank,
        graph=graph_index,
        node=node.name,
        source=user_source(node),
    )
    if op in P2P:
        _as_p2p(call, args, group, ranks, rank)
    elif op in ("broadcast",):
        call.root = _global_rank(group, ranks, args.get("src"), args.get("group_src"))
    call.counts = {k: list(args[k]) for k in ("send_counts", "recv_counts") if _static_list(args.get(k))}
    return call


def _group_of(args: dict[str, Any]) -> tuple[Any, str, list[int]]:
    """The group a collective's arguments name: a torch.distributed group name, a tag
    and ranks, or (another operator's group argument) a group name as TorchAir writes it."""
    name = next((args[k] for k in _GROUP_ARGS if k in args), None)
    if name is not None:
        group = dist.distributed_c10d._resolve_process_group(name)
        tag, ranks = tag_and_ranks(group)
        return group, tag, ranks
    if not any(k in args for k in _TAG_ARGS):
        written = next(v for v in args.values() if isinstance(v, str) and v.startswith("tag="))
        tag, listed = decode(written)
        return dist.distributed_c10d._find_or_create_pg_by_ranks_and_tag(tag, listed, len(listed)), tag, listed
    tag = next(str(args[k]) for k in _TAG_ARGS if k in args)
    listed = [int(r) for r in next(args[k] for k in _RANK_ARGS if k in args)]
    size = int(args.get("group_size") or len(listed))
    group = dist.distributed_c10d._find_or_create_pg_by_ranks_and_tag(tag, listed, size)
    return group, tag, dist.get_process_group_ranks(group)


def _global_rank(group: Any, ranks: list[int], peer: Any, group_peer: Any) -> int:
    try:
        return ranks[dist.distributed_c10d._canonicalize_group_rank(group, peer, group_peer)]
    except (ValueError, IndexError, RuntimeError):  # a peer outside the group: kept as written
        return int(peer if peer is not None else group_peer)


def _as_p2p(call: CollectiveCall, args: dict[str, Any], group: Any, ranks: list[int], rank: int) -> None:
    """A send or receive: its channel is the ordered pair of ranks."""
    if call.op == "_send":
        src, dst = rank, _global_rank(group, ranks, args.get("dst"), args.get("group_dst"))
    else:
        src, dst = _global_rank(group, ranks, args.get("src"), args.get("group_src")), rank
    call.channel = f"{call.channel} {src}->{dst}"
    call.members = [src, dst]
    call.reduction = f"tag {args.get('tag', 0)}"


def _static_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value)


def user_source(node: fx.Node) -> str | None:
    """The last frame of the node's stack trace in the user's code (not torch's, not
    fxlab's): where the user called the collective."""
    found = None
    for line in (node.meta.get("stack_trace") or "").splitlines():
        line = line.strip()
        if line.startswith('File "'):
            path = line.split('"')[1]
            if not path.startswith(_PACKAGE_DIRS):
                found = f"{path}:{line.split('line ')[1].split(',')[0]}"
    return found


# -- comparing two ranks' calls ----------------------------------------------------------------
def disagreement(mine: CollectiveCall, theirs: CollectiveCall) -> str | None:
    """What differs between two ranks' calls at one position of one channel (``None``:
    they agree)."""
    if mine.op in P2P:
        return _p2p_disagreement(mine, theirs)
    if mine.op != theirs.op:
        return "they call different collectives"
    for label, a, b in (
        ("reduction", mine.reduction, theirs.reduction),
        ("root", mine.root, theirs.root),
        ("dtype", mine.dtype, theirs.dtype),
    ):
        if a != b:
            return f"the {label} differs"
    if mine.op in ROWS_MAY_DIFFER:
        if mine.shape[1:] != theirs.shape[1:]:
            return "the row shapes differ"
        return _counts_disagreement(mine, theirs)
    if mine.shape != theirs.shape:
        return "the shapes differ"
    return None


def _p2p_disagreement(mine: CollectiveCall, theirs: CollectiveCall) -> str | None:
    if {mine.op, theirs.op} != {"_send", "_recv"}:
        return "both ranks send, or both receive, on the same pair"
    if mine.reduction != theirs.reduction:
        return "the message tags differ"
    if (mine.dtype, mine.shape) != (theirs.dtype, theirs.shape):
        return "the sent and received tensors differ in dtype or shape"
    return None


def _counts_disagreement(mine: CollectiveCall, theirs: CollectiveCall) -> str | None:
    """What one rank sends to another must be what that rank receives from it."""
    if mine.op != "all_to_all_single_npu" or not {"send_counts", "recv_counts"} <= set(mine.counts) & set(theirs.counts):
        return None
    me, peer = mine.members.index(mine.rank), theirs.members.index(theirs.rank)
    sent, received = mine.counts["send_counts"][peer], theirs.counts["recv_counts"][me]
    if sent != received:
        return f"rank {mine.rank} sends {sent} elements to rank {theirs.rank}, which expects {received}"
    back, expected = theirs.counts["send_counts"][me], mine.counts["recv_counts"][peer]
    if back != expected:
        return f"rank {theirs.rank} sends {back} elements to rank {mine.rank}, which expects {expected}"
    return None
