from __future__ import annotations

import torch
import torch.fx as fx

import fxlab.npu_streams  # noqa: F401 - defines the npugraph_ex event operators
from fxlab.passes.aclgraph.event_protection import event_protected
from fxlab.passes.stream_labels import STREAM_KEY

ops = torch.ops.npugraph_ex


def _graph(lines):
    """``lines``: (name, stream, what) in order; what is "op", "reader", ("record", tag) or ("wait", tag)."""
    graph = fx.Graph()
    x = graph.placeholder("x")
    x.meta[STREAM_KEY] = None
    nodes = {}
    for name, stream, what in lines:
        if what in ("op", "reader"):
            node = graph.call_function(torch.relu, (x,))
        else:
            kind, tag = what
            target = ops.tagged_event_record.default if kind == "record" else ops.tagged_event_wait.default
            node = graph.call_function(target, (tag, True))
        node.name = name
        if stream != "unlabelled":
            node.meta[STREAM_KEY] = stream
        nodes[name] = node
    graph.output(x)
    return nodes


def test_readers_on_the_ops_stream_need_no_event():
    nodes = _graph([("op", None, "op"), ("r", None, "reader")])
    assert event_protected(nodes["op"], [nodes["r"]])


def test_an_op_a_pass_made_after_the_labels_has_no_stream_and_is_refused():
    nodes = _graph([("op", "unlabelled", "op"), ("r", None, "reader")])
    assert not event_protected(nodes["op"], [nodes["r"]])


def test_a_reader_without_a_label_counts_as_the_default_stream():
    # What TorchAir's reduce-overhead rule refuses (every reader must carry a label) and
    # npugraph_ex's allows: a select a re-inplaced scatter left behind.
    nodes = _graph([("op", None, "op"), ("r", "unlabelled", "reader")])
    assert event_protected(nodes["op"], [nodes["r"]])


def test_a_reader_on_another_stream_needs_an_event_after_the_write():
    unordered = _graph([("op", None, "op"), ("r", "side", "reader")])
    assert not event_protected(unordered["op"], [unordered["r"]])
    ordered = _graph([("op", None, "op"), ("rec", None, ("record", "t")), ("wait", "side", ("wait", "t")), ("r", "side", "reader")])
    assert event_protected(ordered["op"], [ordered["r"]])
    too_early = _graph([("rec", None, ("record", "t")), ("op", None, "op"), ("wait", "side", ("wait", "t")), ("r", "side", "reader")])
    assert not event_protected(too_early["op"], [too_early["r"]])


def test_order_carries_through_a_chain_of_events_and_backwards():
    chain = _graph(
        [
            ("op", None, "op"),
            ("rec1", None, ("record", "a")),
            ("wait1", "s1", ("wait", "a")),
            ("rec2", "s1", ("record", "b")),
            ("wait2", "s2", ("wait", "b")),
            ("r", "s2", "reader"),
        ]
    )
    assert event_protected(chain["op"], [chain["r"]])
    before = _graph([("r", "side", "reader"), ("rec", "side", ("record", "t")), ("wait", None, ("wait", "t")), ("op", None, "op")])
    assert event_protected(before["op"], [before["r"]])
