"""TorchAir's ``resolve_default_stream_markers``: the placeholders its Dynamo-side stream
pass writes for "the stream the graph runs on" become that stream's identity, read when
the graph runs.

Where a model records or waits for an event on the default stream, TorchAir's pass over
the Dynamo graph writes the strings ``DEFAULT_STREAM_ID_MARKER`` /
``DEFAULT_DEVICE_INDEX_MARKER`` / ``DEFAULT_DEVICE_TYPE_MARKER`` into the event ops. This
pass puts ``torch.npu.current_stream()`` at the graph's entry (once; npugraph_ex reuses one
a core-limit scope already put there) with ``str(stream.stream_id)``,
``str(stream.device_index)`` and ``str(stream.device_type)``, and makes the event ops read
those. A graph without markers (every graph traced on CPU: there is no NPU stream to name)
is left as it is.
"""

from __future__ import annotations

import torch
import torch.fx as fx

import fxlab.scope  # noqa: F401 - the scope markers, and through it the event operators (fxlab.npu_streams)
from fxlab.npu_streams import current_stream
from fxlab.passes.infra import PassResult

DEFAULT_MARKERS = ("DEFAULT_STREAM_ID_MARKER", "DEFAULT_DEVICE_INDEX_MARKER", "DEFAULT_DEVICE_TYPE_MARKER")
GRAPH_ENTRY_STREAM = "is_default_current_stream"


def _marked_ops(namespace: str) -> set[object]:
    ops = getattr(torch.ops, namespace)
    return {
        ops.tagged_event_record_on_stream.default,
        ops.tagged_event_wait_on_stream.default,
        ops.tagged_stream_wait_stream.default,
        ops.scope_enter.default,
    }


def graph_entry_stream(gm: fx.GraphModule) -> fx.Node:
    """npugraph_ex's one ``current_stream()`` at the graph's entry, made on first need."""
    for node in gm.graph.nodes:
        if node.meta.get(GRAPH_ENTRY_STREAM):
            return node
    with gm.graph.inserting_before(next(iter(gm.graph.nodes))):
        node = gm.graph.call_function(current_stream, args=())
    node.meta[GRAPH_ENTRY_STREAM] = True
    return node


def resolve_default_stream_markers(gm: fx.GraphModule, namespace: str = "air") -> PassResult[fx.GraphModule]:
    marked = _marked_ops(namespace)
    users = [n for n in gm.graph.nodes if n.target in marked and any(isinstance(a, str) and a in DEFAULT_MARKERS for a in n.args)]
    if not users:
        return PassResult(gm, False)
    graph = gm.graph
    if namespace == "air":
        with graph.inserting_before(next(iter(graph.nodes))):
            stream = graph.call_function(current_stream, args=())
            values = _identity(graph, stream)
    else:
        stream = graph_entry_stream(gm)
        with graph.inserting_before(stream.next):
            values = _identity(graph, stream)
    by_marker = dict(zip(DEFAULT_MARKERS, values))
    for node in users:
        node.args = tuple(by_marker.get(a, a) if isinstance(a, str) else a for a in node.args)
    gm.recompile()
    return PassResult(gm, True, changed_nodes=[n.name for n in users])


def _identity(graph: fx.Graph, stream: fx.Node) -> list[fx.Node]:
    values = []
    for field in ("stream_id", "device_index", "device_type"):
        value = graph.call_function(getattr, args=(stream, field))
        values.append(graph.call_function(str, args=(value,)))
    return values
