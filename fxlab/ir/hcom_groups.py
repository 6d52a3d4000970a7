"""The ``group`` attr of TorchAir's ``Hcom*`` ops, and the process group it names.

TorchAir names the communication group of a collective when it converts it: on an NPU
the HCCL communicator's name, which only the device runtime knows; on a CPU process group
(gloo, or the fake one) the group's tag and ranks, ``tag=<tag>;rank_list=<r0>,<r1>,...``.
A CPU trace gets that second form, exactly as TorchAir writes it there. The reference
kernels of the ``Hcom*`` ops read the name back to find the process group their
collective runs on (:func:`process_group`).

Converters of other collective operators (MoE dispatch/combine, communication-fused
matmuls) use :func:`group_name` for a group given as tag and ranks, and
:func:`group_name_of` for one given as a ``torch.distributed`` group name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch.distributed as dist

_TAG, _RANKS = "tag=", ";rank_list="


def group_name(tag: str, ranks: Sequence[int], group_size: int | None = None) -> str:
    """TorchAir's name of the group of ``ranks`` under ``tag`` (the group must exist in
    this process, as TorchAir finds it: checked here)."""
    size = len(ranks) if group_size is None else group_size
    dist.distributed_c10d._find_or_create_pg_by_ranks_and_tag(tag, list(ranks), size)
    return encode(tag, ranks)


def encode(tag: str, ranks: Sequence[int]) -> str:
    return f"{_TAG}{tag}{_RANKS}{','.join(str(int(r)) for r in ranks)}"


def group_name_of(name: Any) -> str:
    """TorchAir's name of the group ``torch.distributed`` names ``name`` (the group
    argument of the ``_c10d_functional`` operators)."""
    tag, ranks = tag_and_ranks(dist.distributed_c10d._resolve_process_group(name))
    return encode(tag, ranks)


def tag_and_ranks(group: Any) -> tuple[str, list[int]]:
    return dist.distributed_c10d._get_group_tag(group), dist.get_process_group_ranks(group)


def decode(name: str) -> tuple[str, list[int]]:
    """``(tag, ranks)`` of a name :func:`encode` made; ValueError for any other string."""
    if not name.startswith(_TAG) or _RANKS not in name:
        raise ValueError(f"group {name!r} is not a CPU process group's name (tag=<tag>;rank_list=<ranks>)")
    tag, ranks = name[len(_TAG) :].rsplit(_RANKS, 1)
    return tag, [int(r) for r in ranks.split(",") if r]


def process_group(name: str) -> Any:
    """The process group a ``group`` attr names, in this process."""
    tag, ranks = decode(name)
    if not dist.is_initialized():
        raise RuntimeError(f"group {name!r}: no process group in this process (torch.distributed is not initialised)")
    return dist.distributed_c10d._find_or_create_pg_by_ranks_and_tag(tag, ranks, len(ranks))
