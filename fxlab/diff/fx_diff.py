"""Node-by-node difference of two FX stages (``aten`` vs ``functional``, any two stages of
one trace, or one stage of two saved traces), as data.

Works on :class:`~fxlab.capture.trace.StageTrace` records, so live and saved traces
diff alike. Nodes are paired by :func:`fxlab.diff.fx_align.align_nodes` (the same
computation first, then by source line and op family), and inputs compared by value:
both sides' node names map to shared keys, so ``getitem_1`` of an
``auto_functionalized_v2`` reads as the base it rewrote.

Each pair says what changed: an in-place op became functional (``functionalized``), an
in-place custom op got wrapped in ``auto_functionalized*`` (``auto_functionalized``), a
functional op or wrapper became in-place again (``reinplaced``), a different target,
different inputs, other output shapes/dtypes, other scopes, another source line. Nodes
without a partner are ``added`` / ``removed`` (``copy_epilogue_added`` / ``_removed``
for write-backs into graph inputs). Entries are grouped by source line.
Nothing here prints.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fxlab.capture.records import KIND_AUTO_FUNCTIONALIZED as _WRAPPER
from fxlab.capture.records import KIND_COPY_EPILOGUE as _EPILOGUE
from fxlab.capture.records import KIND_INPLACE as _INPLACE
from fxlab.capture.trace import NodeRecord, StageTrace
from fxlab.diff.fx_align import StageSide, align_nodes, epilogue_operands, is_overload

FUNCTIONALIZED = "functionalized"
AUTO_FUNCTIONALIZED = "auto_functionalized"
REINPLACED = "reinplaced"
COPY_EPILOGUE_ADDED = "copy_epilogue_added"
COPY_EPILOGUE_REMOVED = "copy_epilogue_removed"
ADDED = "added"
REMOVED = "removed"
TARGET_CHANGED = "target_changed"
INPUTS_CHANGED = "inputs_changed"
OUTPUTS_CHANGED = "outputs_changed"
SCOPES_CHANGED = "scopes_changed"
MOVED = "moved"


@dataclass
class NodeRef:
    """One side of an entry: the node as the reader needs it."""

    name: str
    target: str
    args: str
    kind: str
    location: str | None
    code: str | None
    outputs: list[str]
    attached: list[str] = field(default_factory=list)  # getitems folded into this node

    @classmethod
    def of(cls, record: NodeRecord, attached: Sequence[NodeRecord] = ()) -> NodeRef:
        prov = record.provenance
        return cls(
            record.name,
            record.target,
            record.args,
            record.kind,
            prov.location,
            prov.code,
            [m.signature() for m in record.outputs],
            [a.name for a in attached],
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "target": self.target,
            "args": self.args,
            "kind": self.kind,
            "source": self.location,
            "code": self.code,
            "outputs": self.outputs,
            "attached": self.attached,
        }


@dataclass
class Change:
    code: str
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "detail": self.detail}


@dataclass
class NodeChange:
    """An aligned pair of nodes, or a node on one side only, and what changed."""

    left: NodeRef | None
    right: NodeRef | None
    changes: list[Change] = field(default_factory=list)

    @property
    def kind(self) -> str:
        if self.left is None:
            return "added"
        if self.right is None:
            return "removed"
        return "changed" if self.changes else "same"

    @property
    def codes(self) -> list[str]:
        return [c.code for c in self.changes]

    @property
    def location(self) -> str | None:
        return (self.left and self.left.location) or (self.right and self.right.location) or None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "left": self.left.to_json() if self.left else None,
            "right": self.right.to_json() if self.right else None,
            "changes": [c.to_json() for c in self.changes],
        }


@dataclass
class LineGroup:
    """Every entry whose node came from one source line (``None``: no source line)."""

    location: str | None
    code: str | None
    entries: list[NodeChange]

    @property
    def same(self) -> bool:
        return all(e.kind == "same" for e in self.entries)

    def to_json(self) -> dict[str, Any]:
        return {"source": self.location, "code": self.code, "same": self.same, "entries": [e.to_json() for e in self.entries]}


@dataclass
class StageDiff:
    left_label: str
    right_label: str
    groups: list[LineGroup]
    inputs: list[NodeChange]  # graph inputs, paired by position
    outputs: tuple[str, str]  # the output node's args on each side
    outputs_same: bool

    @property
    def entries(self) -> list[NodeChange]:
        return [e for g in self.groups for e in g.entries]

    @property
    def identical(self) -> bool:
        return self.outputs_same and all(e.kind == "same" for e in [*self.entries, *self.inputs])

    def summary(self) -> dict[str, int]:
        counts = {"same": 0, "changed": 0, "added": 0, "removed": 0}
        for entry in self.entries:
            counts[entry.kind] += 1
            for code in entry.codes:
                if code not in (ADDED, REMOVED):  # already counted as the entry's kind
                    counts[code] = counts.get(code, 0) + 1
        return counts

    def to_json(self) -> dict[str, Any]:
        return {
            "left": self.left_label,
            "right": self.right_label,
            "identical": self.identical,
            "summary": self.summary(),
            "inputs": [e.to_json() for e in self.inputs if e.kind != "same"],
            "outputs": {"left": self.outputs[0], "right": self.outputs[1], "same": self.outputs_same},
            "groups": [g.to_json() for g in self.groups],
        }


# -- the diff ------------------------------------------------------------------------------
def diff_stages(left: StageTrace, right: StageTrace, *, left_label: str | None = None, right_label: str | None = None) -> StageDiff:
    """Align ``left`` and ``right`` node by node and say what changed (see module doc)."""
    lside, rside = StageSide(left, "L"), StageSide(right, "R")
    inputs = _pair_inputs(lside, rside)
    pairs = align_nodes(lside, rside)
    partner = {rhs.name: lhs for lhs, rhs in pairs}
    entries = _ordered_entries(lside, rside, partner)
    changes = [_describe(lside, rside, lhs, rhs) for lhs, rhs in entries]
    out_left = lside.output.args if lside.output else ""
    out_right = rside.output.args if rside.output else ""
    outputs_same = lside.canonical(out_left) == rside.canonical(out_right)
    return StageDiff(left_label or left.name, right_label or right.name, _grouped(changes), inputs, (out_left, out_right), outputs_same)


def _ref(side: StageSide, record: NodeRecord) -> NodeRef:
    return NodeRef.of(record, side.attached.get(record.name, []))


def _pair_inputs(lside: StageSide, rside: StageSide) -> list[NodeChange]:
    """Graph inputs paired (in the right stage's order; a left one no right one pairs
    with after them): see :func:`input_pairs`."""
    out = []
    for index, (lhs, rhs) in enumerate(input_pairs(lside.inputs, rside.inputs)):
        if lhs is not None and rhs is not None:
            lside.keys[lhs.name] = rside.keys[rhs.name] = f"input{index}"
        entry = NodeChange(_ref(lside, lhs) if lhs is not None else None, _ref(rside, rhs) if rhs is not None else None)
        if entry.left is not None and entry.right is not None and entry.left.outputs != entry.right.outputs:
            entry.changes.append(Change(OUTPUTS_CHANGED, f"{_sig(entry.left)} -> {_sig(entry.right)}"))
        out.append(entry)
    return out


# aot_autograd names graph inputs by position (``arg3_1``): such a name says nothing of the value.
_POSITIONAL_INPUT = re.compile(r"^arg\d+_\d+$")


def input_pairs(left: Sequence[NodeRecord], right: Sequence[NodeRecord]) -> list[tuple[NodeRecord | None, NodeRecord | None]]:
    """Dynamo names a graph input by where it comes from (``l_x_``, ``l_self_modules_...``),
    the same in two compiles: those pair by name. The rest pair in order, a size (a
    symbolic one a recompile adds, ``s77``) with a size and a tensor with a tensor;
    what is left over was added or removed."""
    named = {n.name: n for n in left if not _POSITIONAL_INPUT.match(n.name)}
    partner: dict[str, NodeRecord] = {r.name: named[r.name] for r in right if r.name in named}
    taken = {n.name for n in partner.values()}
    for kind in (True, False):
        lefts = [n for n in left if n.name not in taken and _is_size(n) is kind]
        rights = [n for n in right if n.name not in partner and _is_size(n) is kind]
        partner.update({r.name: lhs for r, lhs in zip(rights, lefts)})
    taken = {n.name for n in partner.values()}
    return [(partner.get(r.name), r) for r in right] + [(n, None) for n in left if n.name not in taken]


def _is_size(record: NodeRecord) -> bool:
    """A graph input that is a number (a symbolic size), not a tensor."""
    return len(record.outputs) == 1 and record.outputs[0].dtype in ("symint", "int") and not record.outputs[0].shape


def _ordered_entries(
    lside: StageSide, rside: StageSide, partner: dict[str, NodeRecord]
) -> list[tuple[NodeRecord | None, NodeRecord | None]]:
    """Right-side order; a left-only node comes just before the right-side nodes that
    follow its left neighbours (removed before added, as in a unified diff)."""
    left_pos = {n.name: i for i, n in enumerate(lside.ops)}
    anchors = _next_paired_left_positions(rside.ops, partner, left_pos)
    paired_left = {n.name for n in partner.values()}
    pending = [n for n in lside.ops if n.name not in paired_left]
    out: list[tuple[NodeRecord | None, NodeRecord | None]] = []
    for rhs, anchor in zip(rside.ops, anchors):
        while pending and left_pos[pending[0].name] < anchor:
            out.append((pending.pop(0), None))
        out.append((partner.get(rhs.name), rhs))
    out += [(n, None) for n in pending]
    return out


def _next_paired_left_positions(right: Sequence[NodeRecord], partner: dict[str, NodeRecord], left_pos: dict[str, int]) -> list[float]:
    """For each right node, the left position of the first paired node at or after it."""
    anchors: list[float] = []
    anchor = float("inf")
    for rhs in reversed(right):
        if rhs.name in partner:
            anchor = left_pos[partner[rhs.name].name]
        anchors.append(anchor)
    return anchors[::-1]


def _describe(lside: StageSide, rside: StageSide, lhs: NodeRecord | None, rhs: NodeRecord | None) -> NodeChange:
    entry = NodeChange(_ref(lside, lhs) if lhs is not None else None, _ref(rside, rhs) if rhs is not None else None)
    if lhs is None or rhs is None:
        lone = lhs or rhs
        epilogue = lone.kind == _EPILOGUE  # type: ignore[union-attr]
        code = (COPY_EPILOGUE_ADDED if epilogue else ADDED) if lhs is None else (COPY_EPILOGUE_REMOVED if epilogue else REMOVED)
        entry.changes.append(Change(code, _lone_detail(lone, code)))  # type: ignore[arg-type]
        return entry
    rewrite = _rewrite(lhs, rhs)
    if rewrite is not None:
        entry.changes.append(rewrite)
    elif lhs.target != rhs.target:
        entry.changes.append(Change(TARGET_CHANGED, f"{lhs.target} -> {rhs.target}"))
    wrapped = rewrite is not None and rewrite.code in (AUTO_FUNCTIONALIZED, REINPLACED) and _WRAPPER in (lhs.kind, rhs.kind)
    if not wrapped:  # a wrapper's args and outputs have another shape by construction
        if lside.canonical(lhs.args) != rside.canonical(rhs.args):
            entry.changes.append(Change(INPUTS_CHANGED, f"inputs ({lhs.args}) -> ({rhs.args})"))
        if entry.left.outputs != entry.right.outputs:  # type: ignore[union-attr]
            entry.changes.append(Change(OUTPUTS_CHANGED, f"{_sig(entry.left)} -> {_sig(entry.right)}"))
    if lhs.scopes != rhs.scopes:
        entry.changes.append(Change(SCOPES_CHANGED, f"{lhs.scopes} -> {rhs.scopes}"))
    left_loc, right_loc = lhs.provenance.location, rhs.provenance.location
    if left_loc and right_loc and left_loc != right_loc:
        entry.changes.append(Change(MOVED, f"source line {_moved(left_loc, right_loc)}"))
    return entry


def _rewrite(lhs: NodeRecord, rhs: NodeRecord) -> Change | None:
    """The in-place <-> functional rewrites functionalization and re-inplacing make."""
    left, right = _mode(lhs), _mode(rhs)
    if left == _INPLACE and right == _WRAPPER:
        return Change(AUTO_FUNCTIONALIZED, f"in-place {lhs.target} wrapped in {_wrapper_name(rhs)}")
    if left == _WRAPPER and right == _INPLACE:
        return Change(REINPLACED, f"{_wrapper_name(lhs)} unwrapped: in-place {rhs.target} again")
    if left == _INPLACE and right == "functional":
        return Change(FUNCTIONALIZED, f"in-place {lhs.target} became functional {rhs.target}")
    if left == "functional" and right == _INPLACE:
        return Change(REINPLACED, f"functional {lhs.target} became in-place {rhs.target}")
    return None


def _mode(record: NodeRecord) -> str:
    """in-place, a functionalization wrapper, functional, or unknown. Only an ATen-level
    node (an op overload) has a schema to say; of a Dynamo-level call, only a method
    with a trailing ``_`` (``mul_``) is known to be in-place."""
    if record.kind in (_INPLACE, _EPILOGUE, _WRAPPER):
        return _WRAPPER if record.kind == _WRAPPER else _INPLACE
    if record.op == "call_method" and record.target.endswith("_") and not record.target.endswith("__"):
        return _INPLACE
    return "functional" if is_overload(record.target) else "unknown"


def _moved(left: str, right: str) -> str:
    left_file, _, left_line = left.rpartition(":")
    right_file, _, right_line = right.rpartition(":")
    return f"{left_line} -> {right_line}" if left_file == right_file else f"{left} -> {right}"


def _wrapper_name(record: NodeRecord) -> str:
    return record.target.removeprefix("higher_order.")


def _lone_detail(record: NodeRecord, code: str) -> str:
    if code in (COPY_EPILOGUE_ADDED, COPY_EPILOGUE_REMOVED):
        destination, value = epilogue_operands(record)
        verb = "added" if code == COPY_EPILOGUE_ADDED else "removed"
        return f"copy_ epilogue {verb}: writes {value} back into graph input {destination}"
    return f"{'added' if code == ADDED else 'removed'} {record.target}"


def _sig(ref: NodeRef | None) -> str:
    return ", ".join(ref.outputs) if ref and ref.outputs else "-"


def _grouped(entries: list[NodeChange]) -> list[LineGroup]:
    """Entries grouped by source line (the left side's where paired), in first-seen order."""
    groups: dict[str | None, LineGroup] = {}
    for entry in entries:
        location = entry.location
        group = groups.get(location)
        if group is None:
            code = (entry.left and entry.left.code) or (entry.right and entry.right.code) or None
            group = groups[location] = LineGroup(location, code, [])
        group.entries.append(entry)
    return list(groups.values())
