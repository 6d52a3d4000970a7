"""A summary of one conversion per ATen target, like TorchAir's ``fx_summary`` (in
English, no compile needed): how often each target appears, how it was converted, and
the signatures it was called with.

Built from a :class:`ConversionResult` and the FX graph it came from; returns data only,
and its text as CSV (the columns of ``fx_summary``, plus the messages) or JSON.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
import torch.fx as fx

from fxlab.passes.conversion_result import FAILED_STATUSES, ConversionResult, Status
from fxlab.passes.converters.auto import find_prototype, ge_type_of, op_definition
from fxlab.passes.converters.registry import CONVERTERS

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
        if CONVERTERS.get(node.args[0]) is None:
            return Status.AUTO.value
    return status


@dataclass
class ConversionSummary:
    """What a summary of one conversion says: one row per target (TorchAir's
    ``fx_summary``), the targets not converted and the custom ops auto-converted."""

    rows: list[SummaryRow]
    not_converted: list[dict[str, Any]]  # {"op", "nodes", "status", "reason"}, in graph order
    auto_converted: list[dict[str, Any]]  # see :func:`_auto_entry`


def summarize_conversion(gm: fx.GraphModule, result: ConversionResult) -> ConversionSummary:
    """The summary of ``result``, the conversion of ``gm``, in one walk over its nodes:
    rows in order of first appearance in the graph."""
    nodes = {node.name: node for node in gm.graph.nodes}
    rows: dict[str, SummaryRow] = {}
    failed: dict[str, dict[str, Any]] = {}
    auto: dict[Any, int] = {}
    for record in result.nodes:
        if record.status in FAILED_STATUSES:
            entry = failed.setdefault(
                record.target, {"op": record.target, "nodes": 0, "status": record.status.value, "reason": record.message}
            )
            entry["nodes"] += 1
        node = nodes.get(record.node)
        if node is None:
            continue
        status = _node_status(node, record.status.value)
        _count(rows, node, status, record.message)
        if status == Status.AUTO.value:
            op = node.args[0] if _is_auto_functionalized(node) else node.target
            auto[op] = auto.get(op, 0) + 1
    return ConversionSummary(list(rows.values()), list(failed.values()), [_auto_entry(op, n) for op, n in auto.items()])


def _count(rows: dict[str, SummaryRow], node: fx.Node, status: str, message: str) -> None:
    key = _target_key(node)
    row = rows.setdefault(key, SummaryRow(key, target_kind(node)))
    row.count += 1
    row.statuses[status] = row.statuses.get(status, 0) + 1
    _bump(row.inputs, _input_signature(node))
    _bump(row.outputs, value_signature(node.meta.get("val")))
    if message and message not in row.messages:
        row.messages.append(message)


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


def summary_csv_text(rows: list[SummaryRow]) -> str:
    """CSV with columns :data:`CSV_COLUMNS`; signature cells hold one line per signature."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        cells = (
            row.target,
            row.kind,
            row.status,
            row.count,
            _counted_lines(row.inputs),
            _counted_lines(row.outputs),
            "\n".join(row.messages),
        )
        writer.writerow(cells)
    return buffer.getvalue()


def summary_json_text(rows: list[SummaryRow]) -> str:
    """JSON: ``{"ops": [row, ...]}`` with every field of :class:`SummaryRow` and ``status``."""
    return json.dumps({"ops": [row_as_dict(r) for r in rows]}, indent=2) + "\n"


def summary_rows_from_json(data: dict[str, Any]) -> list[SummaryRow]:
    """The rows :func:`summary_json_text` wrote."""
    return [
        SummaryRow(
            target=str(row["target"]),
            kind=str(row["kind"]),
            count=int(row["count"]),
            statuses=dict(row["statuses"]),
            inputs=dict(row["inputs"]),
            outputs=dict(row["outputs"]),
            messages=list(row["messages"]),
        )
        for row in data["ops"]
    ]


def _auto_entry(op: Any, nodes: int) -> dict[str, Any]:
    """A custom op converted by TorchAir's auto-converter rule (directly, or inside an
    ``auto_functionalized_v2``): ``{"op", "nodes", "ge_type", "prototype", "defined_by",
    "defined_at"}``, where ``ge_type`` is the GE op type assumed, ``prototype`` whether an
    Ascend C prototype of it was found (without one, nothing says the GE op exists with
    that signature), ``defined_by`` ``"user"`` or ``"library"`` (an installed library's op
    is auto-converted only with its prototype found) and ``defined_at`` its ``file:line``."""
    return {"op": str(op), "nodes": nodes, "ge_type": ge_type_of(op), "prototype": find_prototype(op) is not None, **_definition(op)}


def _definition(op: Any) -> dict[str, Any]:
    definition = op_definition(op)
    return {"defined_by": "library" if definition.by_library else "user", "defined_at": definition.site}
