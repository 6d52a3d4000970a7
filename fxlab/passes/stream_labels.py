"""Which stream (and, for npugraph_ex, which deterministic level and core limit) each node
of a graph runs under, read from its scope markers.

TorchAir's aclgraph passes ask this before they rewrite: a pattern never fuses nodes of
two streams, an op is not re-inplaced when the users of the memory it writes run on
different streams. A stream scope is a ``scope_enter`` whose keys hold
``_user_stream_label`` (``npu_stream_switch``); TorchAir's markers are ``air::scope_enter``,
npugraph_ex's ``npugraph_ex::scope_enter``. Nodes outside every stream scope run on the
default stream (label ``None``).

Stored in ``node.meta["fxlab.stream_label"]`` and ``node.meta["fxlab.execution_scope"]``
(``(deterministic level, (aicore, vectorcore))``).
"""

from __future__ import annotations

from typing import Any, cast
from collections.abc import Sequence

import torch.fx as fx

STREAM_KEY = "fxlab.stream_label"
SCOPE_METADATA_KEY = "fxlab.execution_scope"
USER_STREAM_LABEL = "_user_stream_label"


def scope_marker_names(namespace: str) -> tuple[str, str]:
    """The printed targets of the enter and exit markers of ``namespace`` (air / npugraph_ex)."""
    return f"{namespace}.scope_enter.default", f"{namespace}.scope_exit.default"


def is_marker(node: fx.Node, namespace: str, which: str) -> bool:
    """``which`` is "enter" or "exit"."""
    enter, exit_ = scope_marker_names(namespace)
    return node.op == "call_function" and str(node.target) == (enter if which == "enter" else exit_)


def scope_keys(node: fx.Node) -> list[Any]:
    """A scope marker's keys (its first argument); [] without one."""
    return list(cast(Sequence[Any], node.args[0])) if node.args else []


def scope_values(node: fx.Node) -> list[Any]:
    """A scope marker's values (its second argument); [] without one."""
    return list(cast(Sequence[Any], node.args[1])) if len(node.args) > 1 else []


def scope_attrs(node: fx.Node) -> dict[str, Any]:
    return dict(zip(scope_keys(node), scope_values(node)))


def stream_label_of_enter(node: fx.Node) -> str | None:
    """The label a stream-switch ``scope_enter`` names (its first value, as TorchAir reads it)."""
    if USER_STREAM_LABEL not in scope_keys(node):
        return None
    return scope_values(node)[0] if len(node.args) > 1 else None


def annotate_stream_scopes(gm: fx.GraphModule, namespace: str = "air") -> None:
    """Label every node with the stream it runs on and its execution scope."""
    streams: list[str | None] = []
    scopes: list[tuple[Any, Any]] = []
    stream: str | None = None
    scope: tuple[Any, Any] = (None, None)
    for node in gm.graph.nodes:
        if is_marker(node, namespace, "enter"):
            streams.append(stream)
            scopes.append(scope)
            label = stream_label_of_enter(node)
            stream = label if USER_STREAM_LABEL in scope_keys(node) else stream
            scope = _inner_scope(scope, scope_attrs(node))
            node.meta[STREAM_KEY] = stream
        elif is_marker(node, namespace, "exit"):
            node.meta[STREAM_KEY] = stream
            stream = streams.pop() if streams else None
            scope = scopes.pop() if scopes else (None, None)
        else:
            node.meta[STREAM_KEY] = stream
        node.meta[SCOPE_METADATA_KEY] = scope


def _inner_scope(outer: tuple[Any, Any], attrs: dict[str, Any]) -> tuple[Any, Any]:
    level, cores = outer
    if "_op_deterministic_level" in attrs:
        level = int(attrs["_op_deterministic_level"])
    if "_op_aicore_num" in attrs or "_op_vectorcore_num" in attrs:
        cores = (attrs.get("_op_aicore_num"), attrs.get("_op_vectorcore_num"))
    return level, cores


def on_one_stream(nodes: list[fx.Node]) -> bool:
    """TorchAir's ``verify_nodes_on_same_stream``: every node carries a label and all
    labels are equal (a single node is always on one stream)."""
    if len(nodes) < 2:
        return True
    if any(STREAM_KEY not in n.meta for n in nodes):
        return False
    return len({n.meta[STREAM_KEY] for n in nodes}) == 1


def inherit_source(source: fx.Node | dict[str, Any], nodes: list[fx.Node]) -> None:
    """Give nodes a pass made for ``source`` (a node, or its meta) its place in the user's
    code (only what the views show: TorchAir leaves such nodes without a stack trace)."""
    meta = source.meta if isinstance(source, fx.Node) else source
    for node in nodes:
        for key in ("stack_trace", "nn_module_stack"):
            if key in meta and key not in node.meta:
                node.meta[key] = meta[key]


def nodes_between(first: fx.Node, last: fx.Node) -> list[fx.Node]:
    """``first`` to ``last`` in graph order, both included."""
    found, node = [first], first
    while node is not last:
        node = node.next
        found.append(node)
    return found
