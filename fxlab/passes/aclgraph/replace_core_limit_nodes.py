"""TorchAir's ``replace_core_limit_nodes``: ``limit_core_num`` scopes become stream core
limits set and restored while the ACL graph is captured.

In an ACL graph the core limit is a property of the stream, not of each op (as the
``_op_aicore_num`` attr is in a GE graph). A core-limit ``scope_enter`` becomes::

    stream = torch.npu.current_stream()
    limits = torch.npu.get_stream_limit(stream)
    cube, vector = limits["cube_core_num"], limits["vector_core_num"]   # to restore
    torch.npu.set_stream_limit(stream, <aicore>, <vectorcore>)

and its ``scope_exit`` becomes ``torch.npu.set_stream_limit(stream, cube, vector)``.
TorchAir (``reduce-overhead``) also carries the limit onto a stream switched to inside a
core-limit scope: after that stream's ``scope_enter`` (kept) the new current stream gets
the enclosing limit, and its ``scope_exit`` (kept) restores that stream's own. npugraph_ex
handles core-limit scopes only, and may name the stream the limit is for
(``limit_core_num(..., stream=s)``: ``_op_stream_*`` keys), which it rebuilds with
``torch.npu.Stream(stream_id=..., ...)``.
"""

from __future__ import annotations

import operator
from typing import Any

import torch.fx as fx

from fxlab.npu_streams import Stream, current_stream, get_stream_limit, set_stream_limit
from fxlab.passes.aclgraph.resolve_default_stream_markers import DEFAULT_MARKERS, graph_entry_stream
from fxlab.passes.infra import PassResult
from fxlab.passes.stream_labels import inherit_source, is_marker, nodes_between, scope_attrs, scope_keys, scope_values

CORE_LIMIT_KEYS = {"_op_aicore_num", "_op_vectorcore_num"}
STREAM_SWITCH_KEYS = {"_user_stream_label", "_user_stream_priority"}
_OTHER = "other"


class _CoreLimits:
    """The walk over the markers: a stack of what each open scope must restore."""

    def __init__(self, gm: fx.GraphModule, namespace: str) -> None:
        self.gm, self.namespace = gm, namespace
        self.scopes: list[Any] = []  # per open scope: "core_limit", "stream_switch" or "other"
        self.limits: list[list[Any]] = []  # [stream, cube node, vector node, aicore, vectorcore]
        self.notes: list[str] = []

    def run(self) -> None:
        for node in list(self.gm.graph.nodes):
            if is_marker(node, self.namespace, "enter"):
                self._enter(node)
            elif is_marker(node, self.namespace, "exit"):
                self._exit(node)

    def _save_and_set(self, stream: fx.Node, aicore: Any, vectorcore: Any) -> tuple[fx.Node, fx.Node, fx.Node]:
        """Read the stream's limits (to restore them), then set the scope's."""
        graph = self.gm.graph
        limits = graph.call_function(get_stream_limit, args=(stream,))
        cube = graph.call_function(operator.getitem, args=(limits, "cube_core_num"))
        vector = graph.call_function(operator.getitem, args=(limits, "vector_core_num"))
        setter = graph.call_function(set_stream_limit, args=(stream, int(aicore), int(vectorcore)))
        return cube, vector, setter

    def _enter(self, node: fx.Node) -> None:
        keys = set(scope_keys(node))
        graph = self.gm.graph
        if CORE_LIMIT_KEYS <= keys:
            aicore, vectorcore = scope_values(node)
            with graph.inserting_before(node):
                stream = graph.call_function(current_stream)
                cube, vector, setter = self._save_and_set(stream, aicore, vectorcore)
            inherit_source(node, nodes_between(stream, setter))
            node.replace_all_uses_with(setter)
            graph.erase_node(node)
            self.limits.append([stream, cube, vector, aicore, vectorcore])
            self.scopes.append("core_limit")
            self.notes.append(f"{node.name}: stream core limit {aicore}|{vectorcore}")
        elif STREAM_SWITCH_KEYS <= keys and self.limits:
            aicore, vectorcore = self.limits[-1][3], self.limits[-1][4]
            with graph.inserting_after(node):
                stream = graph.call_function(current_stream)
            with graph.inserting_after(stream):
                limits = graph.call_function(get_stream_limit, args=(stream,))
            with graph.inserting_after(limits):  # each insertion goes right after limits
                graph.call_function(set_stream_limit, args=(stream, int(aicore), int(vectorcore)))
                vector = graph.call_function(operator.getitem, args=(limits, "vector_core_num"))
                cube = graph.call_function(operator.getitem, args=(limits, "cube_core_num"))
            inherit_source(node, nodes_between(stream, cube.next.next))
            self.limits.append([stream, cube, vector, aicore, vectorcore])
            self.scopes.append("stream_switch")
            self.notes.append(f"{node.name}: the switched-to stream gets the enclosing limit {aicore}|{vectorcore}")
        else:
            self.scopes.append(_OTHER)

    def _exit(self, node: fx.Node) -> None:
        kind = self.scopes.pop()
        if kind == _OTHER:
            return
        stream, cube, vector, _, _ = self.limits.pop()
        with self.gm.graph.inserting_after(node):
            restore = self.gm.graph.call_function(set_stream_limit, args=(stream, cube, vector))
        inherit_source(node, [restore])
        if kind == "core_limit":
            node.replace_all_uses_with(restore)
            self.gm.graph.erase_node(node)


class _NpugraphExCoreLimits(_CoreLimits):
    """npugraph_ex: core-limit scopes only; the stream may be named by the scope."""

    def _enter(self, node: fx.Node) -> None:
        if not CORE_LIMIT_KEYS <= set(scope_keys(node)):
            self.scopes.append(None)
            return
        attrs = scope_attrs(node)
        with self.gm.graph.inserting_before(node):
            stream = _limited_stream(self.gm, attrs)
            cube, vector, setter = self._save_and_set(stream, attrs["_op_aicore_num"], attrs["_op_vectorcore_num"])
        inherit_source(node, nodes_between(cube.prev, setter) + ([stream] if stream.next is cube.prev else []))
        self.gm.graph.erase_node(node)
        self.scopes.append((stream, cube, vector))
        self.notes.append(f"{node.name}: stream core limit {attrs['_op_aicore_num']}|{attrs['_op_vectorcore_num']}")

    def _exit(self, node: fx.Node) -> None:
        saved = self.scopes.pop()
        if saved is None:
            return
        stream, cube, vector = saved
        with self.gm.graph.inserting_after(node):
            restore = self.gm.graph.call_function(set_stream_limit, args=(stream, cube, vector))
        inherit_source(node, [restore])
        node.replace_all_uses_with(restore)
        self.gm.graph.erase_node(node)


_STREAM_KEYS = ("_op_stream_stream_id", "_op_stream_device_index", "_op_stream_device_type")


def _limited_stream(gm: fx.GraphModule, attrs: dict[str, str]) -> fx.Node:
    present = [key in attrs for key in _STREAM_KEYS]
    if not any(present):
        return gm.graph.call_function(current_stream)
    if not all(present):
        raise RuntimeError(f"incomplete core-limit stream attributes: {attrs}")
    values = tuple(attrs[key] for key in _STREAM_KEYS)
    if values == DEFAULT_MARKERS:
        return graph_entry_stream(gm)
    if any(v in DEFAULT_MARKERS for v in values):
        raise RuntimeError(f"inconsistent default-stream markers in core-limit attributes: {attrs}")
    node = gm.graph.call_function(
        Stream, kwargs={"stream_id": int(values[0]), "device_index": int(values[1]), "device_type": int(values[2])}
    )
    node.meta["is_core_limit_stream"] = True
    return node


def replace_core_limit_nodes(gm: fx.GraphModule, namespace: str = "air") -> PassResult[fx.GraphModule]:
    walk = _CoreLimits(gm, namespace) if namespace == "air" else _NpugraphExCoreLimits(gm, namespace)
    walk.run()
    if namespace != "air":
        gm.graph.lint()
        gm.recompile()
    return PassResult(gm, bool(walk.notes), notes=walk.notes)
