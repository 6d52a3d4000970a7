from __future__ import annotations

import torch
import torch.fx as fx

from fxlab import npu_streams
from fxlab.passes.aclgraph.resolve_default_stream_markers import DEFAULT_MARKERS, resolve_default_stream_markers


def _graph(namespace: str) -> fx.GraphModule:
    graph = fx.Graph()
    x = graph.placeholder("x")
    graph.call_function(getattr(torch.ops, namespace).tagged_event_record_on_stream.default, ("tag", *DEFAULT_MARKERS, True))
    graph.output((graph.call_function(torch.ops.aten.neg.default, (x,)),))
    return fx.GraphModule(torch.nn.Module(), graph)


def test_the_default_stream_markers_become_the_running_streams_identity():
    gm = _graph("air")
    assert resolve_default_stream_markers(gm).changed
    first = next(iter(gm.graph.nodes))
    assert first.target is npu_streams.current_stream
    record = next(n for n in gm.graph.nodes if "tagged_event_record_on_stream" in str(n.target))
    assert [a.target for a in record.args[1:4]] == [str, str, str]
    assert [a.args[0].args[1] for a in record.args[1:4]] == ["stream_id", "device_index", "device_type"]
    gm(torch.ones(2))  # runs on CPU


def test_a_graph_without_markers_is_left_as_it_is():
    graph = fx.Graph()
    graph.output((graph.placeholder("x"),))
    gm = fx.GraphModule(torch.nn.Module(), graph)
    assert not resolve_default_stream_markers(gm).changed and len(gm.graph.nodes) == 2


def test_npugraph_ex_puts_one_entry_stream_and_reads_it_after():
    gm = _graph("npugraph_ex")
    resolve_default_stream_markers(gm, namespace="npugraph_ex")
    names = [n.name for n in gm.graph.nodes]
    assert names[:2] == ["current_stream", "getattr_1"]
