"""npugraph_ex's stream rule for re-inplacing: a reader of the written memory on another
stream is allowed when events order it against the write.

TorchAir (``reduce-overhead``) re-inplaces only when every reader runs on one stream
(:func:`fxlab.passes.stream_labels.on_one_stream`). The standalone npugraph_ex backend asks
less: readers on the op's own stream are fine, and one on another stream is fine when a
chain of tagged events makes it run wholly after the write (an event recorded on the
writing stream after the op, waited for on the reader's stream before it, possibly through
other streams) or wholly before it (the reverse). The op itself must carry a stream label
(nodes a pass made after the labels were given do not). A reader without a label counts as
the default stream.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch.fx as fx

from fxlab.passes.stream_labels import STREAM_KEY

# Per stream, a position in graph order: nodes after it (``after``) or before it
# (``before``) on that stream are ordered against the op.
Frontier = dict[Any, int]


def event_protected(node: fx.Node, readers: Sequence[fx.Node], namespace: str = "npugraph_ex") -> bool:
    """Whether every reader of the memory ``node`` writes either shares its stream or is
    ordered against it by events."""
    if STREAM_KEY not in node.meta:
        return False
    stream = node.meta[STREAM_KEY]
    others = [r for r in readers if r.meta.get(STREAM_KEY) != stream]
    if not others:
        return True
    position, records, waits = _events(node.graph, namespace)
    if not records or not waits:
        return False
    at = position[node]
    after = _spread({stream: at}, records, waits, forward=True)
    before = _spread({stream: at}, waits, records, forward=False)
    for reader in others:
        label, where = reader.meta.get(STREAM_KEY), position.get(reader, -1)
        if not ((label in after and where > after[label]) or (label in before and where < before[label])):
            return False
    return True


def _events(
    graph: fx.Graph, namespace: str
) -> tuple[dict[fx.Node, int], dict[Any, list[tuple[Any, int]]], dict[Any, list[tuple[Any, int]]]]:
    """Each node's position; per event tag, where it is recorded and waited for (stream, position)."""
    record_targets = {f"{namespace}.tagged_event_record.default", f"{namespace}.tagged_event_record_on_stream.default"}
    wait_targets = {f"{namespace}.tagged_event_wait.default", f"{namespace}.tagged_event_wait_on_stream.default"}
    position: dict[fx.Node, int] = {}
    records: dict[Any, list[tuple[Any, int]]] = {}
    waits: dict[Any, list[tuple[Any, int]]] = {}
    for index, node in enumerate(graph.nodes):
        position[node] = index
        target = str(node.target)
        if node.args and target in record_targets:
            records.setdefault(node.args[0], []).append((node.meta.get(STREAM_KEY), index))
        elif node.args and target in wait_targets:
            waits.setdefault(node.args[0], []).append((node.meta.get(STREAM_KEY), index))
    return position, records, waits


def _spread(
    frontier: Frontier, sources: dict[Any, list[tuple[Any, int]]], targets: dict[Any, list[tuple[Any, int]]], forward: bool
) -> Frontier:
    """Grow the frontier through events until it stops moving. Forward: a record after the
    frontier on its stream makes its waits' streams ordered from the wait on. Backward: a
    wait before the frontier makes its records' streams ordered up to the record."""
    changed = True
    while changed:
        changed = False
        for tag, ends in sources.items():
            for stream, at in ends:
                if stream not in frontier or (at <= frontier[stream] if forward else at >= frontier[stream]):
                    continue
                for other, there in targets.get(tag, []):
                    mark = there if forward else there + 1
                    if other not in frontier or (mark < frontier[other] if forward else mark > frontier[other]):
                        frontier[other] = mark
                        changed = True
    return frontier
