"""Record, on every FX node, the scopes (``air::scope_enter`` ... ``scope_exit``) it is in.

Works on any FX stage: the Dynamo graph calls the op packet ``torch.ops.air.scope_enter``,
the ATen stages its ``.default`` overload; both are recognised. Per node it stores

- ``node.meta["fxlab.scopes"]``: the scope stack, outer first, each frame a plain dict
  ``{"index", "enter", "attrs"}`` (``index`` counts scope_enter nodes of this graph from 0,
  ``enter`` is that node's name, ``attrs`` the pushed key/value strings);
- ``node.meta["fxlab.scope_attrs"]``: the attrs a GE op converted from this node gets, as
  plain JSON values (computed with the builder's own rule, so they cannot drift apart);
- ``node.meta["fxlab.scope_marker"]``: ``"enter"`` / ``"exit"`` on the marker nodes.

A scope_enter node is recorded inside its own scope and a scope_exit inside the scope it
closes, so the markers draw as the first and last line of their scope.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch.fx as fx

from fxlab.ir.builder import scoped_attrs
from fxlab.passes.conversion_result import scope_enter_items

SCOPES_KEY = "fxlab.scopes"
SCOPE_ATTRS_KEY = "fxlab.scope_attrs"
MARKER_KEY = "fxlab.scope_marker"

# TorchAir's markers, and the standalone npugraph_ex backend's (the same, in its namespace).
_ENTER_TARGETS = ("air.scope_enter", "air.scope_enter.default", "npugraph_ex.scope_enter", "npugraph_ex.scope_enter.default")
_EXIT_TARGETS = ("air.scope_exit", "air.scope_exit.default", "npugraph_ex.scope_exit", "npugraph_ex.scope_exit.default")


def is_scope_enter(node: fx.Node) -> bool:
    return node.op == "call_function" and _marker_of(node.target) == "enter"


def is_scope_exit(node: fx.Node) -> bool:
    return node.op == "call_function" and _marker_of(node.target) == "exit"


def marker_namespace(node: fx.Node) -> str:
    """Whose scope marker ``node`` is: ``air`` (TorchAir's ``torchair.scope``) or ``npugraph_ex``."""
    return str(node.target).split(".", 1)[0]


def _marker_of(target: Any) -> str | None:
    # str() of an op overload is slow and a graph calls the same few targets many times.
    try:
        marker = _MARKERS.get(target, _UNSEEN)
    except TypeError:  # an unhashable callable
        return _marker_of_text(str(target))
    if marker is _UNSEEN:
        marker = _MARKERS[target] = _marker_of_text(str(target))
    return marker


def _marker_of_text(text: str) -> str | None:
    return "enter" if text in _ENTER_TARGETS else "exit" if text in _EXIT_TARGETS else None


_UNSEEN = object()
_MARKERS: dict[Any, Any] = {}


def scope_enter_attrs(node: fx.Node) -> dict[str, str]:
    """The key/value strings a scope_enter node pushes (positional or keyword args)."""
    keys, values = scope_enter_items(node.args, node.kwargs)
    return {str(k): str(v) for k, v in zip(keys, values)}


def effective_scope_attrs(stack: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What a GE op created under ``stack`` (frames or attr dicts, outer first) carries."""
    attrs = scoped_attrs({}, [frame["attrs"] if "attrs" in frame else frame for frame in stack])
    return {key: attr.value for key, attr in attrs.items()}


@dataclass
class ScopeSpan:
    """One scope of one graph: where it opens and closes and which nodes it covers."""

    index: int
    attrs: dict[str, str]
    enter: str
    exit: str | None = None
    depth: int = 0
    nodes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "attrs": dict(self.attrs),
            "enter": self.enter,
            "exit": self.exit,
            "depth": self.depth,
            "nodes": list(self.nodes),
        }


@dataclass
class ScopeAnnotation:
    """What :func:`annotate_scopes` found in one graph."""

    spans: list[ScopeSpan] = field(default_factory=list)
    unmatched_exits: list[str] = field(default_factory=list)

    @property
    def unclosed(self) -> list[ScopeSpan]:
        return [span for span in self.spans if span.exit is None]

    @property
    def balanced(self) -> bool:
        return not self.unmatched_exits and not self.unclosed

    def to_json(self) -> dict[str, Any]:
        return {
            "spans": [s.to_json() for s in self.spans],
            "unmatched_exits": list(self.unmatched_exits),
            "unclosed": [s.enter for s in self.unclosed],
        }


def annotate_scopes(graph: fx.GraphModule | fx.Graph, namespace: str | None = None) -> ScopeAnnotation:
    """Walk the nodes in order, keep the scope stack, and store it on every node; with
    ``namespace`` (``air`` / ``npugraph_ex``), only that backend's markers open scopes."""
    fx_graph = graph.graph if isinstance(graph, fx.GraphModule) else graph
    result = ScopeAnnotation()
    open_spans: list[ScopeSpan] = []
    # The effective attrs change only where a scope opens or closes: compute them there.
    attrs = effective_scope_attrs([])
    for node in fx_graph.nodes:
        marker = _marker_of(node.target) if node.op == "call_function" else None
        if marker is not None and namespace is not None and marker_namespace(node) != namespace:
            marker = None
        if marker == "enter":
            span = ScopeSpan(len(result.spans), scope_enter_attrs(node), node.name, depth=len(open_spans))
            result.spans.append(span)
            open_spans.append(span)
            attrs = _effective_attrs_of(open_spans)
            _store(node, open_spans, attrs, "enter")
        elif marker == "exit":
            _store(node, open_spans, attrs, "exit")
            if open_spans:
                open_spans.pop().exit = node.name
            else:
                result.unmatched_exits.append(node.name)
            attrs = _effective_attrs_of(open_spans)
        else:
            _store(node, open_spans, attrs, None)
    return result


def _effective_attrs_of(open_spans: Sequence[ScopeSpan]) -> dict[str, Any]:
    return effective_scope_attrs([{"attrs": span.attrs} for span in open_spans])


def _store(node: fx.Node, open_spans: Sequence[ScopeSpan], attrs: dict[str, Any], marker: str | None) -> None:
    # Fresh containers per node (values are str/bool), as a caller may edit one node's meta.
    frames = [{"index": s.index, "enter": s.enter, "attrs": dict(s.attrs)} for s in open_spans] if open_spans else []
    node.meta[SCOPES_KEY] = frames
    node.meta[SCOPE_ATTRS_KEY] = dict(attrs)
    if marker is None:
        node.meta.pop(MARKER_KEY, None)
        for span in open_spans:
            span.nodes.append(node.name)
    else:
        node.meta[MARKER_KEY] = marker
