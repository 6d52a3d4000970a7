"""A trace's ``ascend_ir`` stage against one phase of GE's graph on the NPU machine, grouped
by source line: which of TorchAir's ops GE fused (into what), which it kept, renamed,
changed (type, format, dtype), removed, and which ops GE inserted. The GE phase must be joined with
the trace first (:func:`fxlab.npu_dumps.join.join`), so each GE op knows its TorchAir ops."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fxlab.ir.model import IrGraph
from fxlab.npu_dumps.dump_model import DumpGraph, DumpOp

SAME, FUSED, RENAMED, CHANGED, INSERTED, REMOVED = "same", "fused", "renamed", "changed", "inserted", "removed"
KINDS = (FUSED, RENAMED, CHANGED, INSERTED, REMOVED, SAME)
INSERTED_LINE = "(inserted by GE: no source line)"


@dataclass
class NpuEntry:
    kind: str
    torchair_ops: list[str]
    ge_op: str | None
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "torchair_ops": list(self.torchair_ops), "ge_op": self.ge_op, "detail": self.detail}


@dataclass
class NpuLine:
    source: str
    entries: list[NpuEntry] = field(default_factory=list)


@dataclass
class NpuPhaseDiff:
    graph: int
    ge_graph: str
    phase: str
    lines: list[NpuLine] = field(default_factory=list)

    def count(self, kind: str) -> int:
        return sum(1 for line in self.lines for e in line.entries if e.kind == kind)

    @property
    def identical(self) -> bool:
        return all(e.kind == SAME for line in self.lines for e in line.entries)

    def to_json(self) -> dict[str, Any]:
        return {
            "graph": self.graph,
            "ge_graph": self.ge_graph,
            "phase": self.phase,
            "counts": {k: self.count(k) for k in KINDS},
            "lines": [{"source": line.source, "entries": [e.to_json() for e in line.entries]} for line in self.lines],
        }


def diff_ir_with_phase(index: int, ir: IrGraph, phase: DumpGraph) -> NpuPhaseDiff:
    """``ir`` (graph ``index`` of the trace) against the joined GE ``phase``."""
    diff = NpuPhaseDiff(index, phase.key, phase.phase)
    lines: dict[str, NpuLine] = {}
    order = {op.source or "": i for i, op in reversed(list(enumerate(ir.ops)))}

    def line(source: str) -> NpuLine:
        return lines.setdefault(source, NpuLine(source))

    covered: set[str] = set()
    ir_ops = {op.name: op for op in ir.ops}
    for op in phase.ops:
        entry = _entry(op, ir_ops)
        covered.update(op.torchair_ops)
        line(INSERTED_LINE if entry.kind == INSERTED else (op.source[0] if op.source else "")).entries.append(entry)
    for ir_op in ir.ops:
        if ir_op.name not in covered:
            line(ir_op.source or "").entries.append(NpuEntry(REMOVED, [ir_op.name], None, f"{ir_op.type}: in no op of {phase.phase}"))
    diff.lines = sorted(lines.values(), key=lambda ln: (ln.source == INSERTED_LINE, order.get(ln.source, len(order)), ln.source))
    return diff


def _entry(op: DumpOp, ir_ops: dict[str, Any]) -> NpuEntry:
    if op.inserted:
        return NpuEntry(INSERTED, [], op.name, "; ".join([op.type, *op.changes()]))
    also = f"; also lines {', '.join(op.source[1:])}" if len(op.source) > 1 else ""
    if op.super_kernel_members or len(op.torchair_ops) > 1 or op.fused:
        what = (
            f"SuperKernel of {', '.join(op.super_kernel_members)}"
            if op.super_kernel_members
            else f"{op.type} fused from {', '.join(op.originals)}"
        )
        passes = f" by {', '.join(op.passes)}" if op.passes else ""
        return NpuEntry(FUSED, list(op.torchair_ops), op.name, what + passes + also)
    original = op.torchair_ops[0] if len(op.torchair_ops) == 1 else op.name
    known = ir_ops.get(original)
    changes = op.changes()
    if known is not None:
        changes += _against_trace(op, known)
        if known.type != op.type:
            changes.insert(0, f"type {known.type} -> {op.type}")
    if original != op.name:  # one of TorchAir's ops under the name GE gave it
        return NpuEntry(RENAMED, list(op.torchair_ops), op.name, "; ".join([f"renamed from {original}", *changes]) + also)
    if changes:
        return NpuEntry(CHANGED, list(op.torchair_ops), op.name, "; ".join(changes) + also)
    return NpuEntry(SAME, list(op.torchair_ops), op.name, op.type)


def _against_trace(op: DumpOp, known: Any) -> list[str]:
    """Format and dtype changes of ``op``'s outputs against the trace's own op, where the
    dump does not record the origin itself (no ``origin_format`` / ``origin_data_type``)."""
    found = []
    for output in op.outputs:
        if output.index >= len(known.output_desc):
            continue
        desc = known.output_desc[output.index]
        if output.layout and not output.origin_layout and output.layout != desc.layout:
            found.append(f"output {output.index} format {desc.layout} -> {output.layout}")
        if output.dtype and not output.origin_dtype and output.dtype != desc.dtype.name:
            found.append(f"output {output.index} dtype {desc.dtype.name} -> {output.dtype}")
    return found
