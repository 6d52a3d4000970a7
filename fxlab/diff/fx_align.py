"""Pairing the nodes of two FX stages (:class:`~fxlab.capture.trace.StageTrace` data),
for :mod:`fxlab.diff.fx_diff`.

Values are compared by shared keys, not names (:class:`StageSide`): graph inputs by
their pairing (:func:`fxlab.diff.fx_diff.input_pairs`: Dynamo's names, else in order by
kind), paired nodes by pair; a ``getitem`` of an ``auto_functionalized*`` node is the
op's result or the base it rewrote; the value a ``copy_`` epilogue writes back into a
graph input is that input (where the other stage mutates the input in place, readers
read the input). Alignment (:func:`align_nodes`):

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
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence

from fxlab.capture.records import KIND_AUTO_FUNCTIONALIZED, KIND_COPY_EPILOGUE
from fxlab.capture.trace import NodeRecord, StageTrace

# Ops that are one computation under two names across stages (functionalization turns
# make_fx's ``_unsafe_view`` into ``view``).
FAMILY_ALIASES = {"_unsafe_view": "view"}
_CALL_OPS = ("call_function", "call_method", "call_module", "get_attr")
_OVERLOAD = re.compile(r"^(\w+)\.(\w+)\.(\w+)$")
# A node name used as a value in an args string: not part of a dotted name, not a keyword.
_NAME_TOKEN = re.compile(r"(?<![\w.])([A-Za-z_]\w*)(?![\w.(=])")
_GETITEM_ARGS = re.compile(r"^(\w+), (\d+)$")
_BASES = re.compile(r"_all_bases=\[([^\]]*)\]")


def is_overload(target: str) -> bool:
    """``ns.op.overload``: an ATen-level node, whose schema says what it mutates."""
    return _OVERLOAD.match(target) is not None


class StageSide:
    """One stage: its graph inputs, its ops (getitems of multi-output nodes folded in),
    its output node, and the shared value key of every node name."""

    def __init__(self, stage: StageTrace, tag: str) -> None:
        self.tag = tag
        self.records = {n.name: n for n in stage.nodes}
        self.inputs = [n for n in stage.nodes if n.op == "placeholder"]
        self.output = next((n for n in stage.nodes if n.op == "output"), None)
        self.attached: dict[str, list[NodeRecord]] = {}
        self.parent_of: dict[str, tuple[str, int]] = {}
        self.dependents: dict[str, list[str]] = {}  # name -> names whose value key derives from it
        for node in stage.nodes:
            parent = self._unpacked_parent(node)
            if parent is not None:
                self.attached.setdefault(parent[0], []).append(node)
                self.parent_of[node.name] = parent
                for source in [parent[0], *_wrapper_bases(self.records[parent[0]])]:
                    self.dependents.setdefault(source, []).append(node.name)
        self.ops = [n for n in stage.nodes if n.op in _CALL_OPS and n.name not in self.parent_of]
        self.keys: dict[str, str] = {}
        # The value a copy_ epilogue writes back into a graph input *is* that input's
        # new value: where the other stage mutates the input in place, its readers read
        # the input itself.
        self.written_back = {
            src: dst
            for dst, src in (epilogue_operands(n) for n in stage.nodes if n.kind == KIND_COPY_EPILOGUE)
            if src in self.records and self.records[src].op != "placeholder"  # no cycles
        }
        # Likewise an ATen in-place op on a graph input (``add_(arg0_1, ...)``): what it
        # returns is that input's new value, which the other stage writes back.
        for node in stage.nodes:
            written = node.args.split(",", 1)[0].strip() if node.mutates == ["self"] and is_overload(node.target) else ""
            if written in self.records and self.records[written].op == "placeholder":
                self.written_back.setdefault(node.name, written)
        self._pieces: dict[str, list[str]] = {}

    def _unpacked_parent(self, node: NodeRecord) -> tuple[str, int] | None:
        match = _GETITEM_ARGS.match(node.args) if node.target == "getitem" else None
        if match is None:
            return None
        parent = self.records.get(match.group(1))
        if parent is None or parent.op != "call_function" or parent.target == "getitem":
            return None
        return parent.name, int(match.group(2))

    def canonical(self, text: str) -> str:
        """``text`` with every node name replaced by its shared value key."""
        pieces = self._pieces.get(text)
        if pieces is None:  # odd positions are node names
            pieces = self._pieces[text] = _NAME_TOKEN.split(text)
        return "".join(self.key_of(p) if i % 2 and p in self.records else p for i, p in enumerate(pieces))

    def names_in(self, text: str) -> set[str]:
        self.canonical(text)
        return {p for p in self._pieces[text][1::2] if p in self.records}

    def derived(self, name: str) -> set[str]:
        """``name`` and every name whose value key is derived from it."""
        found, todo = {name}, [name]
        while todo:
            for dependent in self.dependents.get(todo.pop(), []):
                if dependent not in found:
                    found.add(dependent)
                    todo.append(dependent)
        return found

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
        if parent.kind == KIND_AUTO_FUNCTIONALIZED:
            # auto_functionalized*: the op's own outputs first, then the rewritten bases.
            bases = _wrapper_bases(parent)
            own = len(parent.outputs) - len(bases)
            if index >= own and index - own < len(bases):
                return self.key_of(bases[index - own])
            if own == 1:
                return self.key_of(parent_name)
        return f"{self.key_of(parent_name)}[{index}]"


def epilogue_operands(record: NodeRecord) -> tuple[str, str]:
    destination, _, source = record.args.partition(", ")
    return destination, source


def _wrapper_bases(record: NodeRecord) -> list[str]:
    match = _BASES.search(record.args)
    return [b.strip() for b in match.group(1).split(",") if b.strip()] if match else []


def target_family(record: NodeRecord) -> str:
    """What a node computes, independent of overload and in-place form."""
    if record.kind == KIND_COPY_EPILOGUE:
        return "copy_ epilogue"
    target = record.target
    if record.kind == KIND_AUTO_FUNCTIONALIZED:
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


class _Pairing:
    """Pairs found so far; pairing two nodes gives both one value key."""

    def __init__(self, lside: StageSide, rside: StageSide) -> None:
        self.lside, self.rside = lside, rside
        self.pairs: list[tuple[NodeRecord, NodeRecord]] = []
        self.paired: set[int] = set()

    def add(self, left: NodeRecord, right: NodeRecord) -> None:
        self.lside.keys[left.name] = self.rside.keys[right.name] = f"node{len(self.pairs)}"
        self.pairs.append((left, right))
        self.paired.update((id(left), id(right)))

    def unpaired(self, nodes: Iterable[NodeRecord]) -> list[NodeRecord]:
        return [n for n in nodes if id(n) not in self.paired]


def align_nodes(lside: StageSide, rside: StageSide) -> list[tuple[NodeRecord, NodeRecord]]:
    """Pairs of nodes: the same computation (family and input values) first, then the
    same source line and family in order, then the rest by family in order."""
    pairing = _Pairing(lside, rside)
    _pair_same_computations(pairing)
    left_lines = _by_location(pairing.unpaired(lside.ops))
    right_lines = _by_location(pairing.unpaired(rside.ops))
    for location, lefts in left_lines.items():
        for lhs, rhs in _matching_runs(lefts, right_lines.get(location, [])):
            pairing.add(lhs, rhs)
    for lhs, rhs in _matching_runs(pairing.unpaired(lside.ops), pairing.unpaired(rside.ops)):
        pairing.add(lhs, rhs)
    return pairing.pairs


def _pair_same_computations(pairing: _Pairing) -> None:
    """Walk the right side in graph order (so a node's inputs are paired before it) and
    pair each node with the first unpaired left node of its family that reads the same
    values, preferring one from the same source line. An in-place op and its
    ``auto_functionalized*`` wrapper cannot compare arguments: same line suffices."""
    lside, rside = pairing.lside, pairing.rside
    index = _LeftIndex(lside)
    for rhs in rside.ops:
        family, location = target_family(rhs), rhs.provenance.location
        found = [
            lhs
            for lhs in index.find(family, rside.canonical(rhs.args))
            if (lhs.kind == KIND_AUTO_FUNCTIONALIZED) == (rhs.kind == KIND_AUTO_FUNCTIONALIZED)
        ]
        if location is not None:
            found += [
                lhs
                for lhs in index.on_line(family, location)
                if (lhs.kind == KIND_AUTO_FUNCTIONALIZED) != (rhs.kind == KIND_AUTO_FUNCTIONALIZED)
            ]
        if found:
            here = [lhs for lhs in found if lhs.provenance.location == location]
            chosen = min(here or found, key=lambda lhs: index.position[lhs.name])
            index.take(chosen)
            pairing.add(chosen, rhs)
            index.values_changed(lside.derived(chosen.name))


class _LeftIndex:
    """Unpaired left nodes by (family, input values) and by (family, source line); an
    entry moves when a node it reads gets paired (its value key changes)."""

    def __init__(self, side: StageSide) -> None:
        self.side = side
        self.position = {n.name: i for i, n in enumerate(side.ops)}
        self.readers: dict[str, list[NodeRecord]] = {}
        for node in side.ops:
            for name in side.names_in(node.args):
                self.readers.setdefault(name, []).append(node)
        self.entry: dict[str, tuple[str, str]] = {}
        self.by_values: dict[tuple[str, str], list[NodeRecord]] = {}
        self.by_line: dict[tuple[str, str | None], list[NodeRecord]] = {}
        for node in side.ops:
            self._put(node)
            self.by_line.setdefault((target_family(node), node.provenance.location), []).append(node)

    def _put(self, node: NodeRecord) -> None:
        key = self.entry[node.name] = (target_family(node), self.side.canonical(node.args))
        self.by_values.setdefault(key, []).append(node)

    def find(self, family: str, values: str) -> list[NodeRecord]:
        return self.by_values.get((family, values), [])

    def on_line(self, family: str, location: str) -> list[NodeRecord]:
        return self.by_line.get((family, location), [])

    def take(self, node: NodeRecord) -> None:
        self.by_values[self.entry.pop(node.name)].remove(node)
        self.by_line[(target_family(node), node.provenance.location)].remove(node)

    def values_changed(self, names: Iterable[str]) -> None:
        for name in names:
            for reader in self.readers.get(name, []):
                if reader.name in self.entry:
                    self.by_values[self.entry.pop(reader.name)].remove(reader)
                    self._put(reader)


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
