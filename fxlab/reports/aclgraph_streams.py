"""Streams, events and core limits as TorchAir's aclgraph path applies them, and the
core demands of ops that may run at once on different streams.

On the aclgraph path a ``npu_stream_switch`` region runs on its own stream, closed by
events: it waits for an event recorded at the graph's entry and the graph's output waits
for one it records at its end (``apply_event_closure_with_multi_stream``); in between, only
``torchair.ops.wait`` / ``record`` order it against the default stream. A
``limit_core_num`` scope is a stream limit set and restored around its ops
(``replace_core_limit_nodes``), and a stream switched to inside it gets the same limit.

Two ops on different streams that no event orders may run at once. TorchAir's aclgraph
check tool looks, in device traces, for such ops whose core demands add up to more cores
than the SoC has: each waits for cores the other holds, and the ACL graph deadlocks. This
report does the same check statically, on the graph: concurrency from program order and
the events, each op's demand from its stream limit (an op without a limit may take every
core of the SoC; such pairs are noted, not warned about).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx
from torch.fx.passes.reinplace import _is_view_op

from fxlab import npu_streams
from fxlab.passes.annotate_scopes import SCOPE_ATTRS_KEY, annotate_scopes, is_scope_enter, marker_namespace
from fxlab.socs import SocInfo
from fxlab.source_lines import node_source

STREAM_LABEL = "_user_stream_label"
DEFAULT_STREAM = "default"
_EVENT_TARGETS = (
    "tagged_event_record",
    "tagged_event_wait",
    "tagged_event_record_on_stream",
    "tagged_event_wait_on_stream",
    "record",
    "wait",
)


@dataclass
class StreamEvent:
    node: str
    kind: str  # the event operator (tagged_event_record, wait, ...)
    tag: str
    stream: str

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "kind": self.kind, "tag": self.tag, "stream": self.stream}


@dataclass
class CoreLimitCall:
    node: str
    stream: str
    limit: str  # "A|V", or "restore"

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "stream": self.stream, "limit": self.limit}


@dataclass
class GraphStreams:
    index: int
    streams: dict[str, int] = field(default_factory=dict)  # stream -> ops on it
    limits: dict[str, list[str]] = field(default_factory=dict)  # stream -> core limits its ops run with
    events: list[StreamEvent] = field(default_factory=list)
    calls: list[CoreLimitCall] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "streams": dict(self.streams),
            "limits": {k: list(v) for k, v in self.limits.items()},
            "events": [e.to_json() for e in self.events],
            "core_limit_calls": [c.to_json() for c in self.calls],
            "warnings": list(self.warnings),
            "notes": list(self.notes),
        }


@dataclass
class _Op:
    name: str
    stream: str
    position: int
    clock: dict[str, int]
    demand: tuple[int, int] | None  # (aicore, vectorcore) from a core limit; None: unlimited


def graph_streams(
    index: int, scoped: fx.GraphModule, final: fx.GraphModule | None, soc: SocInfo | None, namespace: str = "air"
) -> GraphStreams:
    """``scoped``: a graph with the scope markers (the functional graph); ``final``: the
    aclgraph stage's graph (events and core-limit calls); ``namespace``: whose markers the
    backend acts on (``air``: TorchAir's; ``npugraph_ex``: the standalone backend's)."""
    report = GraphStreams(index)
    annotate_scopes(scoped, namespace)
    report.notes.extend(_ignored_markers(scoped, namespace))
    ops = _timeline(scoped)
    for op in ops:
        report.streams[op.stream] = report.streams.get(op.stream, 0) + 1
        limit = "no limit" if op.demand is None else f"{op.demand[0]}|{op.demand[1]}"
        if limit not in report.limits.setdefault(op.stream, []):
            report.limits[op.stream].append(limit)
    if final is not None:
        _final_graph(report, final)
    if len(report.streams) > 1 and soc is not None:
        _check_concurrent_demands(report, ops, soc)
    return report


def _ignored_markers(gm: fx.GraphModule, namespace: str) -> list[str]:
    """The scopes of another backend's markers, which this one passes by."""
    others = [n for n in gm.graph.nodes if is_scope_enter(n) and marker_namespace(n) != namespace]
    if not others:
        return []
    theirs = marker_namespace(others[0])
    lines = sorted({node_source(n) or n.name for n in others})
    return [
        f"the {theirs}::scope_enter marker(s) at {', '.join(lines)} do nothing on this path: its backend acts on its own "
        f"{namespace}::scope_enter markers ({_SCOPE_API[namespace]}), so their streams and core limits are not applied"
    ]


# What writes each backend's scope markers in a model.
_SCOPE_API = {"air": "torchair.scope", "npugraph_ex": "torch_npu.dynamo.npugraph_ex.scope"}


def _stream_of(node: fx.Node) -> str:
    return str(node.meta.get(SCOPE_ATTRS_KEY, {}).get(STREAM_LABEL) or DEFAULT_STREAM)


def _demand(node: fx.Node) -> tuple[int, int] | None:
    attrs = node.meta.get(SCOPE_ATTRS_KEY, {})
    try:
        return int(attrs["_op_aicore_num"]), int(attrs["_op_vectorcore_num"])
    except (KeyError, ValueError):
        return None


def _is_kernel(node: fx.Node) -> bool:
    """A call that runs a kernel on the device (not a view, a marker or an event)."""
    target = node.target
    if node.op != "call_function" or not isinstance(target, torch._ops.OpOverload):
        return False
    return target.namespace not in ("air", "npugraph_ex") and not _is_view_op(target)


def _timeline(gm: fx.GraphModule) -> list[_Op]:
    """Each kernel with its stream, place on it, and what it is known to follow (a
    vector clock: stream -> the last position on that stream ordered before it)."""
    clocks: dict[str, dict[str, int]] = {DEFAULT_STREAM: {DEFAULT_STREAM: 0}}
    positions: dict[str, int] = {DEFAULT_STREAM: 0}
    # Where each node ran: a wait names records, or (before apply_event_record puts a
    # record after each) the tensors whose producers it waits for.
    ran_at: dict[str, dict[str, int]] = {}
    ops = []
    for node in gm.graph.nodes:
        stream = _stream_of(node)
        if stream not in clocks:  # a region starts after the graph's entry event
            clocks[stream], positions[stream] = {DEFAULT_STREAM: 0, stream: 0}, 0
        positions[stream] += 1
        clock = clocks[stream]
        clock[stream] = positions[stream]
        if str(node.target).endswith(".wait.default"):
            for waited in node.args[0]:
                for other, pos in ran_at.get(getattr(waited, "name", ""), {}).items():
                    clock[other] = max(clock.get(other, 0), pos)
        ran_at[node.name] = dict(clock)
        if _is_kernel(node):
            ops.append(_Op(node.name, stream, positions[stream], dict(clock), _demand(node)))
    return ops


def _concurrent(a: _Op, b: _Op) -> bool:
    return b.clock.get(a.stream, 0) < a.position and a.clock.get(b.stream, 0) < b.position


def _check_concurrent_demands(report: GraphStreams, ops: list[_Op], soc: SocInfo) -> None:
    seen: set[tuple[Any, ...]] = set()
    for i, a in enumerate(ops):
        for b in ops[i + 1 :]:
            key = tuple(sorted([(a.stream, str(a.demand)), (b.stream, str(b.demand))]))
            if a.stream == b.stream or key in seen or not _concurrent(a, b):
                continue
            seen.add(key)
            report_pair(report, a, b, soc)


def report_pair(report: GraphStreams, a: _Op, b: _Op, soc: SocInfo) -> None:
    if a.demand is None or b.demand is None:
        free = a if a.demand is None else b
        report.notes.append(
            f"{a.name} ({a.stream} stream) and {b.name} ({b.stream} stream) may run at once; {free.name} has no core limit, "
            f"so it may take every core of {soc.name}"
        )
        return
    over = []
    if a.demand[0] + b.demand[0] > soc.ai_core_cnt:
        over.append(f"{a.demand[0]} + {b.demand[0]} AI cores > {soc.ai_core_cnt}")
    if soc.has_vector_cores and a.demand[1] + b.demand[1] > soc.vector_core_cnt:
        over.append(f"{a.demand[1]} + {b.demand[1]} vector cores > {soc.vector_core_cnt}")
    if over:
        report.warnings.append(
            f"[stream-cores] {a.name} on the {a.stream} stream (limit {a.demand[0]}|{a.demand[1]}) and {b.name} on the {b.stream} stream "
            f"(limit {b.demand[0]}|{b.demand[1]}) may run at once and ask for more cores than {soc.name} has ({'; '.join(over)}): "
            "an ACL graph may deadlock here, each waiting for cores the other holds. Lower the limits, or order them with "
            "torchair.ops.record() / torchair.ops.wait()."
        )


def _final_graph(report: GraphStreams, gm: fx.GraphModule) -> None:
    annotate_scopes(gm)
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        name = str(node.target).split(".")
        if len(name) == 3 and name[0] in ("air", "npugraph_ex") and name[1] in _EVENT_TARGETS:
            tag = (
                str(node.args[0])
                if node.args and isinstance(node.args[0], str)
                else ", ".join(getattr(a, "name", "") for a in (node.args[0] if node.args else []))
            )
            report.events.append(StreamEvent(node.name, name[1], tag, _stream_of(node)))
        elif node.target is npu_streams.set_stream_limit and len(node.args) == 3:
            cube, vector = node.args[1], node.args[2]
            limit = f"{cube}|{vector}" if isinstance(cube, int) and isinstance(vector, int) else "restore"
            stream = node.args[0] if isinstance(node.args[0], fx.Node) else node  # the stream it limits
            report.calls.append(CoreLimitCall(node.name, _stream_of(stream), limit))
