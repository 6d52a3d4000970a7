"""TorchAir's ``apply_event_closure_with_multi_stream``: scope markers execute at capture
time, and every user stream region is closed by events with the default stream.

Every ``scope_enter`` / ``scope_exit`` gets ``need_execute=True`` (so the marker runs
while the ACL graph is captured, not only while it is traced). When the graph has stream
regions (``npu_stream_switch``: a ``scope_enter`` whose keys hold ``_user_stream_label``):

* TorchAir records an event ``<graph>_<first node>`` before the graph's first node and
  waits for it right after each stream region's ``scope_enter``, so a user stream starts
  only after the default stream reached the graph;
* for each region's ``scope_exit`` it records ``<graph>_<exit node>`` just before it and
  waits for that event just before the graph's output, so the graph ends after every
  stream.

npugraph_ex keys the same closure by stream identity (``_user_stream_id`` and friends,
which its Dynamo pass writes): one wait on each distinct stream after the first record,
one record on each stream and one wait before the output; regions a user's pass made
(no ``_user_stream_id``) are closed as TorchAir closes them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
import torch.fx as fx

import fxlab.npu_streams  # noqa: F401 - defines the event operators where TorchAir has not
from fxlab.passes.aclgraph.capture_info import CaptureInfo
from fxlab.passes.infra import PassResult
from fxlab.passes.stream_labels import USER_STREAM_LABEL, is_marker, scope_attrs, scope_keys, scope_values

_STREAM_INFO_KEYS = {"_user_stream_id": "stream_id", "_user_stream_device_index": "device_index", "_user_stream_device_type": "device_type"}


def _stream_info(node: fx.Node) -> dict[str, int]:
    """The stream identity a stream ``scope_enter`` carries, when it carries one."""
    keys, values = scope_keys(node), scope_values(node)
    return {_STREAM_INFO_KEYS[k]: int(values[i]) for i, k in enumerate(keys) if k in _STREAM_INFO_KEYS and i < len(values)}


def _label(node: fx.Node, namespace: str) -> str:
    """TorchAir reads the first value; npugraph_ex the value at the label's key."""
    if namespace == "air":
        return scope_values(node)[0]
    return scope_attrs(node)[USER_STREAM_LABEL]


def _mark_executed(gm: fx.GraphModule, info: CaptureInfo) -> tuple[list[fx.Node], list[tuple[fx.Node, fx.Node]], bool]:
    """Set ``need_execute`` on every marker; the stream regions' enter and exit nodes."""
    enters: list[fx.Node] = []
    exits: list[tuple[fx.Node, fx.Node]] = []
    stack: list[fx.Node] = []
    changed = False
    for node in gm.graph.nodes:
        entering = is_marker(node, info.namespace, "enter")
        if not entering and not is_marker(node, info.namespace, "exit"):
            continue
        changed |= node.kwargs.get("need_execute") is not True
        node.kwargs = {**node.kwargs, "need_execute": True}
        if entering:
            if USER_STREAM_LABEL in scope_keys(node):
                label = _label(node, info.namespace)
                info.add_stream_label(label)
                info.stream_enter_nodes[node.name] = label
                stream = _stream_info(node)
                if stream:
                    info.user_stream_info[label] = stream
                enters.append(node)
            stack.append(node)
        else:
            if stack and USER_STREAM_LABEL in scope_keys(stack[-1]):
                exits.append((stack[-1], node))
                info.stream_exit_nodes.append(node.name)
            stack.pop()
    return enters, exits, changed


def apply_event_closure(gm: fx.GraphModule, info: CaptureInfo) -> PassResult[fx.GraphModule]:
    enters, exits, changed = _mark_executed(gm, info)
    if info.namespace == "air":
        added = _close_torchair(gm, info, enters, [exit_ for _, exit_ in exits])
    else:
        added = _close_npugraph_ex(gm, info, enters, exits)
    if added:
        gm.graph.lint()
    notes = [f"stream region {label} ({name}) closed by events" for name, label in info.stream_enter_nodes.items()] if added else []
    return PassResult(gm, changed or added, notes=notes)


def _event_ops(namespace: str) -> Any:
    return getattr(torch.ops, namespace)


def _close_torchair(gm: fx.GraphModule, info: CaptureInfo, enters: list[fx.Node], exits: list[fx.Node]) -> bool:
    if not enters:
        return False
    ops = _event_ops("air")
    graph = gm.graph
    first = next(iter(graph.nodes))
    enter_tag = f"{info.graph_name}_{first.name}"
    info.add_event(enter_tag)
    with graph.inserting_before(first):
        graph.call_function(ops.tagged_event_record.default, args=(enter_tag, True))
    _wait_after(graph, ops, enters, enter_tag)
    _record_at_exits(graph, ops, info, exits, _output(graph))
    return True


def _wait_after(graph: fx.Graph, ops: Any, enters: Iterable[fx.Node], tag: str) -> None:
    """Each stream scope waits for the event the graph's start recorded."""
    for enter in enters:
        with graph.inserting_after(enter):
            graph.call_function(ops.tagged_event_wait.default, args=(tag, True))


def _record_at_exits(graph: fx.Graph, ops: Any, info: CaptureInfo, exits: Iterable[fx.Node], output: fx.Node) -> None:
    """Each stream scope records an event as it ends; the graph's end waits for it."""
    for exit_ in exits:
        exit_tag = f"{info.graph_name}_{exit_.name}"
        info.add_event(exit_tag)
        with graph.inserting_before(exit_):
            graph.call_function(ops.tagged_event_record.default, args=(exit_tag, True))
        with graph.inserting_before(output):
            graph.call_function(ops.tagged_event_wait.default, args=(exit_tag, True))


def _close_npugraph_ex(gm: fx.GraphModule, info: CaptureInfo, enters: list[fx.Node], exits: list[tuple[fx.Node, fx.Node]]) -> bool:
    user_made: dict[str, fx.Node] = {}
    for enter in enters:
        label = _label(enter, info.namespace)
        if "_user_stream_id" not in scope_keys(enter):
            user_made.setdefault(label, enter)
    user_exits = {_label(enter, info.namespace): exit_ for enter, exit_ in exits if "_user_stream_id" not in scope_keys(enter)}
    if not info.user_stream_info and not user_made:
        return False
    ops = _event_ops("npugraph_ex")
    graph = gm.graph
    output = _output(graph)
    first = next(iter(graph.nodes))
    enter_tag = f"{info.graph_name}_{first.name}"
    info.add_event(enter_tag)
    with graph.inserting_before(first):
        first_record = graph.call_function(ops.tagged_event_record.default, args=(enter_tag, True))
    streams = {(s["stream_id"], s["device_index"], s["device_type"]): s for s in info.user_stream_info.values()}
    for stream in streams.values():
        where = (str(stream["stream_id"]), str(stream["device_index"]), str(stream["device_type"]))
        with graph.inserting_after(first_record):
            graph.call_function(ops.tagged_event_wait_on_stream.default, args=(enter_tag, *where, True))
        exit_tag = f"{info.graph_name}_stream_id_{where[0]}_device_index_{where[1]}_device_type_{where[2]}"
        info.add_event(exit_tag)
        with graph.inserting_before(output):
            graph.call_function(ops.tagged_event_record_on_stream.default, args=(exit_tag, *where, True))
        with graph.inserting_before(output):
            graph.call_function(ops.tagged_event_wait.default, args=(exit_tag, True))
    _wait_after(graph, ops, user_made.values(), enter_tag)
    _record_at_exits(graph, ops, info, user_exits.values(), output)
    return True


def _output(graph: fx.Graph) -> fx.Node:
    output = list(graph.nodes)[-1]
    if output.op != "output":
        raise RuntimeError(f"the graph's last node is {output.name}, not its output")
    return output
