"""A multi-rank trace: one ordinary trace per rank, compared and saved together.

Saved (``--out DIR``): ``DIR/rank_<r>/`` holds rank r's trace in the usual layout (so
``fxlab diff DIR/rank_0 DIR/rank_1`` compares two ranks), and ``DIR/manifest.json``
names the ranks, their folders and statuses, and which ranks' graphs are alike.

Ranks are alike in structure when their graphs have the same nodes, operators, shapes and
wiring, and the same Ascend IR ops and attrs, constants' values and collectives' process
groups aside (a tensor-parallel rank's graphs differ from its peers' only in such
constants, the offset of its slice of a vocabulary, and in the group its collectives run
in); :func:`rank_groups` groups the ranks by that.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from fxlab.capture.trace import Trace

RANK_FOLDER = "rank_{rank}"
# Attrs that differ between ranks alike in structure: a constant's value (a rank's slice of
# a vocabulary), and the process group a collective runs in (one tensor-parallel group's
# ranks 0,2, another's 1,3).
VALUE_ATTRS = frozenset({"value", "_readable_value", "group"})


def rank_folder(rank: int) -> str:
    return RANK_FOLDER.format(rank=rank)


def structure_key(trace: Trace) -> str:
    """Equal for two ranks whose graphs are alike in structure (see the module docstring)."""
    return _digest(_graph_parts(trace, with_values=False))


def exact_key(trace: Trace) -> str:
    """Equal for two ranks whose graphs are the same, constants included."""
    return _digest(_graph_parts(trace, with_values=True))


def _digest(parts: Iterable[Any]) -> str:
    return hashlib.sha1(json.dumps(list(parts), sort_keys=True, default=str).encode()).hexdigest()


def _graph_parts(trace: Trace, with_values: bool) -> Iterable[Any]:
    for graph in trace.graphs:
        for name, stage in sorted(graph.stages.items()):
            yield name, [(n.op, n.target, [(m.dtype, m.shape) for m in n.outputs], n.args if with_values else None) for n in stage.nodes]
        if graph.ir is not None:
            yield "ascend_ir", [_op_part(op.to_json(), with_values) for op in graph.ir.ops]


def _op_part(op: dict[str, Any], with_values: bool) -> Any:
    attrs = op["attrs"] if with_values else {k: v for k, v in op["attrs"].items() if k not in VALUE_ATTRS}
    descs = [(d["dtype"], d["shape"]) for d in op.get("output_desc", [])]
    return op["type"], op["inputs"], attrs, descs


def rank_groups(keys: dict[int, str]) -> list[list[int]]:
    """Ranks with equal keys, each group in rank order, groups by their first rank."""
    groups: dict[str, list[int]] = {}
    for rank in sorted(keys):
        groups.setdefault(keys[rank], []).append(rank)
    return sorted(groups.values())


def ranks_text(ranks: Sequence[int]) -> str:
    """``0-3`` for a run of ranks, ``0, 2`` otherwise."""
    ranks = sorted(ranks)
    if len(ranks) > 1 and ranks == list(range(ranks[0], ranks[-1] + 1)):
        return f"{ranks[0]}-{ranks[-1]}"
    return ", ".join(map(str, ranks))


def top_manifest(
    model: str, entry: str, versions: dict[str, str], ranks: list[dict[str, Any]], groups: list[list[int]], status: str
) -> dict[str, Any]:
    """``DIR/manifest.json`` of a multi-rank trace."""
    return {
        "model": model,
        "entry": entry,
        **versions,
        "nproc": len(ranks),
        "status": status,
        "ranks": ranks,
        "same_structure": groups,
    }
