"""A summary of one conversion per ATen target, like TorchAir's ``fx_summary`` (in
English, no compile needed): how often each target appears, how it was converted, and
the signatures it was called with.

Built from a :class:`ConversionResult` and the FX graph it came from; returns data only.
Writers save it as CSV (the columns of ``fx_summary``, plus the messages) or JSON.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.fx as fx

from fxlab.passes.conversion_result import FAILED_STATUSES, ConversionResult, Status

# When nodes of one target fared differently, the row shows the worst.
_SEVERITY = {
    Status.MARKER.value: 0,
    Status.CONVERTED.value: 1,
    Status.AUTO.value: 2,
    Status.RAISED.value: 3,
    Status.REFUSED.value: 4,
    Status.UNSUPPORTED.value: 5,
}
CSV_COLUMNS = ("target", "kind", "status", "count", "inputs", "outputs", "messages")


@dataclass
class SummaryRow:
    """One ATen (or custom, or builtin) target: ``inputs``/``outputs`` map each distinct
    signature to how many nodes had it; ``statuses`` counts nodes per status."""

    target: str
    kind: str
    count: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    inputs: dict[str, int] = field(default_factory=dict)
    outputs: dict[str, int] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        return max(self.statuses, key=lambda s: _SEVERITY.get(s, 0)) if self.statuses else ""


def value_signature(value: Any) -> str:
    """``float32(2, 3)`` for a tensor (as ``fx_summary`` prints fake tensors), recursively
    for lists and tuples, ``repr`` for anything else."""
    if isinstance(value, torch.Tensor):
        return f"{str(value.dtype).rsplit('.', maxsplit=1)[-1]}{tuple(int(d) if isinstance(d, int) else str(d) for d in value.shape)}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(value_signature(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {value_signature(v)}" for k, v in value.items()) + "}"
    if isinstance(value, fx.Node):
        return value_signature(value.meta.get("val", value.name))
    return str(value) if isinstance(value, torch._ops.OpOverload) else repr(value)


def _input_signature(node: fx.Node) -> str:
    args = value_signature(tuple(node.args))
    if node.kwargs:
        return f"{args}, {value_signature(dict(node.kwargs))}"
    return args


def _target_key(node: fx.Node) -> str:
    """The row key: the target, and for ``auto_functionalized_v2`` the op it wraps."""
    if _is_auto_functionalized(node):
        return f"{node.target}({node.args[0]})"
    if isinstance(node.target, (str, torch._ops.OpOverload)):
        return str(node.target)
    return getattr(node.target, "__name__", str(node.target))


def _is_auto_functionalized(node: fx.Node) -> bool:
    return getattr(node.target, "__name__", None) == "auto_functionalized_v2" and bool(node.args)


def target_kind(node: fx.Node) -> str:
    """``aten`` / ``prims`` / ``custom`` / ``higher_order`` / ``builtin`` / FX node kind."""
    target = node.target
    if node.op != "call_function":
        return node.op
    if isinstance(target, torch._ops.OpOverload):
        namespace = target.namespace
        return namespace if namespace in ("aten", "prims") else "custom"
    if isinstance(target, torch._ops.HigherOrderOperator):
        return "higher_order"
    return "builtin"


def _node_status(node: fx.Node, status: str) -> str:
    # An auto_functionalized_v2 node converts through the wrapped op's converter: when that
    # op has none registered, TorchAir's auto converter did the work.
    if status == Status.CONVERTED.value and _is_auto_functionalized(node):
        from fxlab.passes.converters.registry import CONVERTERS

        if CONVERTERS.get(node.args[0]) is None:
            return Status.AUTO.value
    return status


def summarize_conversion(gm: fx.GraphModule, result: ConversionResult) -> list[SummaryRow]:
    """One row per target, in order of first appearance in the graph."""
    nodes = {node.name: node for node in gm.graph.nodes}
    rows: dict[str, SummaryRow] = {}
    for record in result.nodes:
        node = nodes.get(record.node)
        if node is None:
            continue
        key = _target_key(node)
        row = rows.setdefault(key, SummaryRow(key, target_kind(node)))
        row.count += 1
        status = _node_status(node, record.status.value)
        row.statuses[status] = row.statuses.get(status, 0) + 1
        _bump(row.inputs, _input_signature(node))
        _bump(row.outputs, value_signature(node.meta.get("val")))
        if record.message and record.message not in row.messages:
            row.messages.append(record.message)
    return list(rows.values())


def _bump(counts: dict[str, int], key: str) -> None:
    counts[key] = counts.get(key, 0) + 1


def _counted_lines(counts: dict[str, int]) -> str:
    """``fx_summary``'s cell form: most frequent first, ``<n>x: <signature>`` per line."""
    ordered = Counter(counts).most_common()
    return "\n".join(f"{n}x: {signature}" for signature, n in ordered)


def row_as_dict(row: SummaryRow) -> dict[str, Any]:
    data = asdict(row)
    data["status"] = row.status
    return data


def write_summary_csv(rows: list[SummaryRow], path: str | Path) -> Path:
    """CSV with columns :data:`CSV_COLUMNS`; signature cells hold one line per signature."""
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        for row in rows:
            writer.writerow(
                [
                    row.target,
                    row.kind,
                    row.status,
                    row.count,
                    _counted_lines(row.inputs),
                    _counted_lines(row.outputs),
                    "\n".join(row.messages),
                ]
            )
    return path


def write_summary_json(rows: list[SummaryRow], path: str | Path) -> Path:
    """JSON: ``{"ops": [row, ...]}`` with every field of :class:`SummaryRow` and ``status``."""
    path = Path(path)
    path.write_text(json.dumps({"ops": [row_as_dict(r) for r in rows]}, indent=2) + "\n", encoding="utf-8")
    return path


def not_converted(result: ConversionResult) -> list[dict[str, Any]]:
    """The targets some node of which was not converted, in graph order, each with its
    node count and the first reason given: ``{"op", "nodes", "status", "reason"}``."""
    found: dict[str, dict[str, Any]] = {}
    for record in result.nodes:
        if record.status in FAILED_STATUSES:
            entry = found.setdefault(
                record.target, {"op": record.target, "nodes": 0, "status": record.status.value, "reason": record.message}
            )
            entry["nodes"] += 1
    return list(found.values())


def auto_converted(gm: fx.GraphModule, result: ConversionResult) -> list[dict[str, Any]]:
    """The custom ops converted by TorchAir's auto-converter rule (directly, or inside an
    ``auto_functionalized_v2``): ``{"op", "nodes", "ge_type", "prototype", "defined_by",
    "defined_at"}``, where ``ge_type`` is the GE op type assumed, ``prototype`` whether an
    Ascend C prototype of it was found (without one, nothing says the GE op exists with
    that signature), ``defined_by`` ``"user"`` or ``"library"`` (an installed library's op
    is auto-converted only with its prototype found) and ``defined_at`` its ``file:line``."""
    from fxlab.passes.converters.auto import find_prototype, ge_type_of

    nodes = {node.name: node for node in gm.graph.nodes}
    counts: dict[Any, int] = {}
    for record in result.nodes:
        node = nodes.get(record.node)
        if node is None or _node_status(node, record.status.value) != Status.AUTO.value:
            continue
        op = node.args[0] if _is_auto_functionalized(node) else node.target
        counts[op] = counts.get(op, 0) + 1
    return [
        {"op": str(op), "nodes": n, "ge_type": ge_type_of(op), "prototype": find_prototype(op) is not None, **_definition(op)}
        for op, n in counts.items()
    ]


def _definition(op: Any) -> dict[str, Any]:
    from fxlab.passes.converters.auto import op_definition

    definition = op_definition(op)
    return {"defined_by": "library" if definition.by_library else "user", "defined_at": definition.site}
