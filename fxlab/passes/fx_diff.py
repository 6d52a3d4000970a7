"""Node-by-node difference of two FX stages (``aten`` vs ``functional``, any two stages of
one trace, or one stage of two saved traces), as data.

Works on :class:`~fxlab.capture.trace.StageTrace` records, so live and saved traces
diff alike. Values are compared by shared keys, not names: graph inputs by position,
paired nodes by pair; a ``getitem`` of an ``auto_functionalized*`` node is the op's result
or the base it rewrote; the value a ``copy_`` epilogue writes back into a graph input is
that input (where the other stage mutates the input in place, readers read the input).
Alignment:

1. ``getitem`` nodes that unpack a multi-output node (``auto_functionalized_v2``,
   ``native_layer_norm``, ...) are folded into that node and travel with it.
2. The same computation: in the right stage's order, each node pairs with the first
   unpaired left node of the same *target family* that reads the same values (from
   the same source line if there is one). The family drops the overload and a trailing
   in-place ``_`` (``aten.add_.Tensor`` and ``aten.add.Tensor`` are both ``add``), takes
   the wrapped op of an ``auto_functionalized*`` node (which pairs with the in-place op
   on its source line), and keeps ``copy_`` epilogues apart from other copies.
3. The rest, grouped by source line: inside a line, nodes pair by family in order
   (longest matching runs); then what is left anywhere, by family in graph order.

Each pair then says what changed: an in-place op became functional (``functionalized``),
an in-place custom op got wrapped in ``auto_functionalized*`` (``auto_functionalized``),
a functional op or wrapper became in-place again (``reinplaced``), a different target,
different inputs (compared by value: both sides' node names are mapped to shared keys,
so ``getitem_1`` of an ``auto_functionalized_v2`` reads as the base it rewrote), other
output shapes/dtypes, other scopes, another source line. Nodes without a partner are
``added`` / ``removed`` (``copy_epilogue_added`` / ``_removed`` for write-backs).
Nothing here prints.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from fxlab.capture.trace import NodeRecord, StageTrace

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

# Ops that are one computation under two names across stages (functionalization turns
# make_fx's ``_unsafe_view`` into ``view``).
FAMILY_ALIASES = {"_unsafe_view": "view"}
_INPLACE, _EPILOGUE, _WRAPPER = "inplace", "copy_epilogue", "auto_functionalized"
_CALL_OPS = ("call_function", "call_method", "call_module", "get_attr")
_OVERLOAD = re.compile(r"^(\w+)\.(\w+)\.(\w+)$")
# A node name used as a value in an args string: not part of a dotted name, not a keyword.
_NAME_TOKEN = re.compile(r"(?<![\w.])([A-Za-z_]\w*)(?![\w.(=])")
_GETITEM_ARGS = re.compile(r"^(\w+), (\d+)$")
_BASES = re.compile(r"_all_bases=\[([^\]]*)\]")


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
    def of(cls, record: NodeRecord, attached: Sequence[NodeRecord] = ()) -> "NodeRef":
        prov = record.provenance
        return cls(
            record.name, record.target, record.args, record.kind, prov.location, prov.code,
            [m.signature() for m in record.outputs], [a.name for a in attached],
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "target": self.target, "args": self.args, "kind": self.kind,
            "source": self.location, "code": self.code, "outputs": self.outputs, "attached": self.attached,
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


# -- the stage as the diff sees it ---------------------------------------------------------
class _Side:
    """One stage: its graph inputs, its ops (getitems of multi-output nodes folded in),
    its output node, and the shared value key of every node name."""

    def __init__(self, stage: StageTrace, tag: str) -> None:
        self.tag = tag
        self.records = {n.name: n for n in stage.nodes}
        self.inputs = [n for n in stage.nodes if n.op == "placeholder"]
        self.output = next((n for n in stage.nodes if n.op == "output"), None)
        self.attached: dict[str, list[NodeRecord]] = {}
        self.parent_of: dict[str, tuple[str, int]] = {}
        for node in stage.nodes:
            parent = self._unpacked_parent(node)
            if parent is not None:
                self.attached.setdefault(parent[0], []).append(node)
                self.parent_of[node.name] = parent
        self.ops = [n for n in stage.nodes if n.op in _CALL_OPS and n.name not in self.parent_of]
        self.keys: dict[str, str] = {}
        # The value a copy_ epilogue writes back into a graph input *is* that input's
        # new value: where the other stage mutates the input in place, its readers read
        # the input itself.
        self.written_back = {src: dst for dst, src in (_epilogue_operands(n) for n in stage.nodes if n.kind == _EPILOGUE)}
        self._pieces: dict[str, list[str]] = {}

    def _unpacked_parent(self, node: NodeRecord) -> tuple[str, int] | None:
        match = _GETITEM_ARGS.match(node.args) if node.target == "getitem" else None
        if match is None:
            return None
        parent = self.records.get(match.group(1))
        if parent is None or parent.op != "call_function" or parent.target == "getitem":
            return None
        return parent.name, int(match.group(2))

    def ref(self, record: NodeRecord) -> NodeRef:
        return NodeRef.of(record, self.attached.get(record.name, []))

    def canonical(self, text: str) -> str:
        """``text`` with every node name replaced by its shared value key."""
        pieces = self._pieces.get(text)
        if pieces is None:  # odd positions are node names
            pieces = self._pieces[text] = _NAME_TOKEN.split(text)
        return "".join(self.key_of(p) if i % 2 and p in self.records else p for i, p in enumerate(pieces))

    def key_of(self, name: str) -> str:
        if name in self.written_back:
            return self.key_of(self.written_back[name])
        if name in self.keys:
            return self.keys[name]
        if name in self.parent_of:
            return self._getitem_key(name)
        return f"{self.tag}:{name}"

    def _getitem_key(self, name: str) -> str:
        parent_name, index = self.parent_of[name]
        parent = self.records[parent_name]
        if parent.kind == _WRAPPER:
            # auto_functionalized*: the op's own outputs first, then the rewritten bases.
            bases = _wrapper_bases(parent)
            own = len(parent.outputs) - len(bases)
            if index >= own and index - own < len(bases):
                return self.key_of(bases[index - own])
            if own == 1:
                return self.key_of(parent_name)
        return f"{self.key_of(parent_name)}[{index}]"


def _epilogue_operands(record: NodeRecord) -> tuple[str, str]:
    destination, _, source = record.args.partition(", ")
    return destination, source


def _wrapper_bases(record: NodeRecord) -> list[str]:
    match = _BASES.search(record.args)
    return [b.strip() for b in match.group(1).split(",") if b.strip()] if match else []


def target_family(record: NodeRecord) -> str:
    """What a node computes, independent of overload and in-place form."""
    if record.kind == _EPILOGUE:
        return "copy_ epilogue"
    target = record.target
    if record.kind == _WRAPPER:
        target = record.args.split(",", 1)[0].strip()
    return op_family(target)


def op_family(target: str) -> str:
    """``aten.add_.Tensor`` -> ``add``; ``npu.my_inplace.default`` -> ``npu.my_inplace``;
    ``mul_`` (a Dynamo method call) -> ``mul``; ``_VariableFunctionsClass.relu`` (a
    torch function's qualified name) -> ``relu``."""
    if target.startswith("higher_order."):
        return target
    match = _OVERLOAD.match(target)
    if match:
        namespace, name = match.group(1), match.group(2)
    elif target.count(".") == 1 and target.islower():  # an op packet, ``npu.my_inplace``
        namespace, name = target.split(".")
    else:  # a plain or class-qualified Python name
        namespace, name = "", target.rsplit(".", 1)[-1]
    if name.endswith("_") and not name.endswith("__"):
        name = name[:-1]
    name = FAMILY_ALIASES.get(name, name)
    return name if namespace in ("", "aten") else f"{namespace}.{name}"


# -- alignment -------------------------------------------------------------------------------
class _Pairing:
    """Pairs found so far; pairing two nodes gives both one value key."""

    def __init__(self, lside: _Side, rside: _Side) -> None:
        self.lside, self.rside = lside, rside
        self.pairs: list[tuple[NodeRecord, NodeRecord]] = []
        self.paired: set[int] = set()

    def add(self, left: NodeRecord, right: NodeRecord) -> None:
        self.lside.keys[left.name] = self.rside.keys[right.name] = f"node{len(self.pairs)}"
        self.pairs.append((left, right))
        self.paired.update((id(left), id(right)))

    def unpaired(self, nodes: Iterable[NodeRecord]) -> list[NodeRecord]:
        return [n for n in nodes if id(n) not in self.paired]


def align_nodes(lside: _Side, rside: _Side) -> list[tuple[NodeRecord, NodeRecord]]:
    """Pairs of nodes: the same computation (family and input values) first, then the
    same source line and family in order, then the rest by family in order."""
    pairing = _Pairing(lside, rside)
    _pair_same_computations(pairing)
    left_lines = _by_location(pairing.unpaired(lside.ops))
    right_lines = _by_location(pairing.unpaired(rside.ops))
    for location, lefts in left_lines.items():
        for l, r in _matching_runs(lefts, right_lines.get(location, [])):
            pairing.add(l, r)
    for l, r in _matching_runs(pairing.unpaired(lside.ops), pairing.unpaired(rside.ops)):
        pairing.add(l, r)
    return pairing.pairs


def _pair_same_computations(pairing: _Pairing) -> None:
    """Walk the right side in graph order (so a node's inputs are paired before it) and
    pair each node with the first unpaired left node of its family that reads the same
    values, preferring one from the same source line. An in-place op and its
    ``auto_functionalized*`` wrapper cannot compare arguments: same line suffices."""
    lside, rside = pairing.lside, pairing.rside
    buckets: dict[str, list[NodeRecord]] = {}
    for node in lside.ops:
        buckets.setdefault(target_family(node), []).append(node)
    for r in rside.ops:
        candidates = buckets.get(target_family(r), [])
        wanted = rside.canonical(r.args)
        same = [l for l in candidates if _same_computation(l, r, lside.canonical(l.args), wanted)]
        if same:
            here = [l for l in same if l.provenance.location == r.provenance.location]
            chosen = (here or same)[0]
            candidates.remove(chosen)
            pairing.add(chosen, r)


def _same_computation(l: NodeRecord, r: NodeRecord, left_args: str, right_args: str) -> bool:
    if (l.kind == _WRAPPER) != (r.kind == _WRAPPER):
        return l.provenance.location is not None and l.provenance.location == r.provenance.location
    return left_args == right_args


def _by_location(nodes: Iterable[NodeRecord]) -> dict[str | None, list[NodeRecord]]:
    groups: dict[str | None, list[NodeRecord]] = {}
    for node in nodes:
        groups.setdefault(node.provenance.location, []).append(node)
    return groups


def _matching_runs(left: Sequence[NodeRecord], right: Sequence[NodeRecord]) -> list[tuple[NodeRecord, NodeRecord]]:
    if not left or not right:
        return []
    matcher = difflib.SequenceMatcher(None, [target_family(n) for n in left], [target_family(n) for n in right], autojunk=False)
    pairs = []
    for block in matcher.get_matching_blocks():
        pairs += [(left[block.a + k], right[block.b + k]) for k in range(block.size)]
    return pairs


# -- the diff ------------------------------------------------------------------------------
def diff_stages(left: StageTrace, right: StageTrace, *, left_label: str | None = None, right_label: str | None = None) -> StageDiff:
    """Align ``left`` and ``right`` node by node and say what changed (see module doc)."""
    lside, rside = _Side(left, "L"), _Side(right, "R")
    inputs = _pair_inputs(lside, rside)
    pairs = align_nodes(lside, rside)
    partner = {r.name: l for l, r in pairs}
    entries = _ordered_entries(lside, rside, partner)
    changes = [_describe(lside, rside, l, r) for l, r in entries]
    out_left = lside.output.args if lside.output else ""
    out_right = rside.output.args if rside.output else ""
    outputs_same = lside.canonical(out_left) == rside.canonical(out_right)
    return StageDiff(
        left_label or left.name, right_label or right.name, _grouped(changes), inputs, (out_left, out_right), outputs_same
    )


def _pair_inputs(lside: _Side, rside: _Side) -> list[NodeChange]:
    """Graph inputs pair by position (Dynamo and aot_autograd name them differently)."""
    out = []
    for index in range(max(len(lside.inputs), len(rside.inputs))):
        l = lside.inputs[index] if index < len(lside.inputs) else None
        r = rside.inputs[index] if index < len(rside.inputs) else None
        if l is not None and r is not None:
            lside.keys[l.name] = rside.keys[r.name] = f"input{index}"
        entry = NodeChange(l and lside.ref(l), r and rside.ref(r))
        if l is not None and r is not None and entry.left.outputs != entry.right.outputs:  # type: ignore[union-attr]
            entry.changes.append(Change(OUTPUTS_CHANGED, f"{_sig(entry.left)} -> {_sig(entry.right)}"))
        out.append(entry)
    return out


def _ordered_entries(lside: _Side, rside: _Side, partner: dict[str, NodeRecord]) -> list[tuple[NodeRecord | None, NodeRecord | None]]:
    """Right-side order; a left-only node comes just before the right-side nodes that
    follow its left neighbours (removed before added, as in a unified diff)."""
    left_pos = {n.name: i for i, n in enumerate(lside.ops)}
    anchors = _next_paired_left_positions(rside.ops, partner, left_pos)
    paired_left = {n.name for n in partner.values()}
    pending = [n for n in lside.ops if n.name not in paired_left]
    out: list[tuple[NodeRecord | None, NodeRecord | None]] = []
    for r, anchor in zip(rside.ops, anchors):
        while pending and left_pos[pending[0].name] < anchor:
            out.append((pending.pop(0), None))
        out.append((partner.get(r.name), r))
    out += [(n, None) for n in pending]
    return out


def _next_paired_left_positions(right: Sequence[NodeRecord], partner: dict[str, NodeRecord], left_pos: dict[str, int]) -> list[float]:
    """For each right node, the left position of the first paired node at or after it."""
    anchors: list[float] = []
    anchor = float("inf")
    for r in reversed(right):
        if r.name in partner:
            anchor = left_pos[partner[r.name].name]
        anchors.append(anchor)
    return anchors[::-1]


def _describe(lside: _Side, rside: _Side, l: NodeRecord | None, r: NodeRecord | None) -> NodeChange:
    entry = NodeChange(l and lside.ref(l), r and rside.ref(r))
    if l is None or r is None:
        lone = l or r
        epilogue = lone.kind == _EPILOGUE  # type: ignore[union-attr]
        code = (COPY_EPILOGUE_ADDED if epilogue else ADDED) if l is None else (COPY_EPILOGUE_REMOVED if epilogue else REMOVED)
        entry.changes.append(Change(code, _lone_detail(lone, code)))  # type: ignore[arg-type]
        return entry
    rewrite = _rewrite(l, r)
    if rewrite is not None:
        entry.changes.append(rewrite)
    elif l.target != r.target:
        entry.changes.append(Change(TARGET_CHANGED, f"{l.target} -> {r.target}"))
    wrapped = rewrite is not None and rewrite.code in (AUTO_FUNCTIONALIZED, REINPLACED) and _WRAPPER in (l.kind, r.kind)
    if not wrapped:  # a wrapper's args and outputs have another shape by construction
        if lside.canonical(l.args) != rside.canonical(r.args):
            entry.changes.append(Change(INPUTS_CHANGED, f"inputs ({l.args}) -> ({r.args})"))
        if entry.left.outputs != entry.right.outputs:  # type: ignore[union-attr]
            entry.changes.append(Change(OUTPUTS_CHANGED, f"{_sig(entry.left)} -> {_sig(entry.right)}"))
    if l.scopes != r.scopes:
        entry.changes.append(Change(SCOPES_CHANGED, f"{l.scopes} -> {r.scopes}"))
    left_loc, right_loc = l.provenance.location, r.provenance.location
    if left_loc and right_loc and left_loc != right_loc:
        entry.changes.append(Change(MOVED, f"source line {_moved(left_loc, right_loc)}"))
    return entry


def _rewrite(l: NodeRecord, r: NodeRecord) -> Change | None:
    """The in-place <-> functional rewrites functionalization and re-inplacing make."""
    left, right = _mode(l), _mode(r)
    if left == _INPLACE and right == _WRAPPER:
        return Change(AUTO_FUNCTIONALIZED, f"in-place {l.target} wrapped in {_wrapper_name(r)}")
    if left == _WRAPPER and right == _INPLACE:
        return Change(REINPLACED, f"{_wrapper_name(l)} unwrapped: in-place {r.target} again")
    if left == _INPLACE and right == "functional":
        return Change(FUNCTIONALIZED, f"in-place {l.target} became functional {r.target}")
    if left == "functional" and right == _INPLACE:
        return Change(REINPLACED, f"functional {l.target} became in-place {r.target}")
    return None


def _mode(record: NodeRecord) -> str:
    """in-place, a functionalization wrapper, functional, or unknown. Only an ATen-level
    node (an op overload) has a schema to say; of a Dynamo-level call, only a method
    with a trailing ``_`` (``mul_``) is known to be in-place."""
    if record.kind in (_INPLACE, _EPILOGUE, _WRAPPER):
        return _WRAPPER if record.kind == _WRAPPER else _INPLACE
    if record.op == "call_method" and record.target.endswith("_") and not record.target.endswith("__"):
        return _INPLACE
    return "functional" if _OVERLOAD.match(record.target) else "unknown"


def _moved(left: str, right: str) -> str:
    left_file, _, left_line = left.rpartition(":")
    right_file, _, right_line = right.rpartition(":")
    return f"{left_line} -> {right_line}" if left_file == right_file else f"{left} -> {right}"


def _wrapper_name(record: NodeRecord) -> str:
    return record.target.removeprefix("higher_order.")


def _lone_detail(record: NodeRecord, code: str) -> str:
    if code in (COPY_EPILOGUE_ADDED, COPY_EPILOGUE_REMOVED):
        destination, value = _epilogue_operands(record)
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
