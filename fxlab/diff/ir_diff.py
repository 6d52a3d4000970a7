"""Op-by-op difference of two Ascend IR graphs (e.g. fxlab's conversion vs TorchAir's).

Alignment goes by provenance first, then order: ops are grouped by the FX node they
came from (``IrOp.fx_node``); groups are matched by node name and the two group
sequences merged in order; inside a group, ops are paired by their type sequence
(longest matching runs, then position). For each pair the diff reports a different type,
attrs that differ (by JSON value; TorchAir's bookkeeping keys are ignored by default),
wiring that differs (each input is mapped through the pairing, so ``Const_3:0`` on one
side equals ``Const_1:0`` on the other when those two Consts are paired), output
dtype/shape that differ (a shape empty on one side counts as unset), and whether the op moved relative to the other pairs. Two
``FxlabUnsupported`` placeholders (a node both conversions refuse) are alike. Ops
without a partner are reported as only on one side. The result is data (``IrDiff``),
JSON-ready through ``to_json``; nothing here prints.
"""

from __future__ import annotations

import bisect
import difflib
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fxlab.ir.model import UNKNOWN_RANK, IrGraph, IrOp
from fxlab.passes.conversion_result import UNSUPPORTED_OP_TYPE

# Attrs TorchAir's ``_normalize_ge_graph`` adds to every op just before GE compiles
# (prototype name/index tables) and to the graph for its runtime (input placements,
# executor type), and fxlab's own bookkeeping (``_fxlab_*``, but not the
# GE options fxlab records as graph attrs): not conversion results. A trailing ``*``
# makes an entry a prefix.
DEFAULT_IGNORED_ATTRS = frozenset(
    {"_input_name_key", "_input_name_value", "_output_name_key", "_output_name_value", "_input_placements", "_executor_type", "_fxlab_*"}
)
KEPT_FXLAB_ATTRS = ("_fxlab_ge_option:",)
MISSING = "<missing>"
NO_NODE = "<no fx node>"


@dataclass
class OpDiff:
    """One aligned pair (or a lone op). ``kind``: same / changed / only_left / only_right."""

    kind: str
    left: str | None = None
    right: str | None = None
    left_type: str | None = None
    right_type: str | None = None
    attrs: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    inputs: list[tuple[int, str | None, str | None]] = field(default_factory=list)
    outputs: list[tuple[int, Any, Any]] = field(default_factory=list)
    moved: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "left": self.left,
            "right": self.right,
            "left_type": self.left_type,
            "right_type": self.right_type,
            "attrs": {k: {"left": a, "right": b} for k, (a, b) in self.attrs.items()},
            "inputs": [{"slot": i, "left": a, "right": b} for i, a, b in self.inputs],
            "outputs": [{"slot": i, "left": a, "right": b} for i, a, b in self.outputs],
            "moved": self.moved,
        }


@dataclass
class NodeDiff:
    """The ops one FX node produced on each side, aligned."""

    fx_node: str
    left_types: list[str]
    right_types: list[str]
    ops: list[OpDiff]
    moved: bool = False

    @property
    def same(self) -> bool:
        return not self.moved and all(op.kind == "same" and not op.moved for op in self.ops)

    def to_json(self) -> dict[str, Any]:
        return {
            "fx_node": self.fx_node,
            "same": self.same,
            "moved": self.moved,
            "left_types": self.left_types,
            "right_types": self.right_types,
            "ops": [op.to_json() for op in self.ops],
        }


@dataclass
class IrDiff:
    left_label: str
    right_label: str
    nodes: list[NodeDiff]
    inputs: tuple[list[str], list[str]]
    outputs: tuple[list[str], list[str]]  # right side mapped to left names where paired
    ignored_attrs: list[str]
    graph_attrs: dict[str, tuple[Any, Any]] = field(default_factory=dict)

    @property
    def identical(self) -> bool:
        return all(n.same for n in self.nodes) and self.outputs[0] == self.outputs[1] and not self.graph_attrs

    @property
    def ops(self) -> list[OpDiff]:
        return [op for node in self.nodes for op in node.ops]

    def summary(self) -> dict[str, int]:
        counts = {"same": 0, "changed": 0, "only_left": 0, "only_right": 0, "moved": 0}
        for op in self.ops:
            counts[op.kind] += 1
            counts["moved"] += int(op.moved)
        counts["nodes_differing"] = sum(1 for n in self.nodes if not n.same)
        return counts

    def to_json(self) -> dict[str, Any]:
        return {
            "left": self.left_label,
            "right": self.right_label,
            "identical": self.identical,
            "summary": self.summary(),
            "ignored_attrs": self.ignored_attrs,
            "inputs": {"left": self.inputs[0], "right": self.inputs[1]},
            "outputs": {"left": self.outputs[0], "right": self.outputs[1]},
            "graph_attrs": {k: {"left": a, "right": b} for k, (a, b) in self.graph_attrs.items()},
            "nodes": [n.to_json() for n in self.nodes],
        }


def diff_ir(
    left: IrGraph,
    right: IrGraph,
    *,
    left_label: str = "left",
    right_label: str = "right",
    ignore_attrs: Iterable[str] = DEFAULT_IGNORED_ATTRS,
    compare_outputs: bool = True,
) -> IrDiff:
    """Align ``left`` and ``right`` op by op and report every difference (see module doc)."""
    ignored = frozenset(ignore_attrs)
    left_groups, right_groups = _groups(left), _groups(right)
    keys = _merged_keys(list(left_groups), list(right_groups))
    pairs: list[tuple[str, list[tuple[IrOp | None, IrOp | None]]]] = [
        (key, _pair_ops(left_groups.get(key, []), right_groups.get(key, []))) for key in keys
    ]
    right_to_left = {rhs.name: lhs.name for _, group in pairs for lhs, rhs in group if lhs is not None and rhs is not None}
    moved_ops = _moved_pairs(left, right, [(lhs, rhs) for _, group in pairs for lhs, rhs in group if lhs and rhs])
    moved_nodes = _moved_keys(list(left_groups), list(right_groups))
    nodes = []
    for key, group in pairs:
        ops = [_op_diff(lhs, rhs, right_to_left, ignored, compare_outputs, moved_ops) for lhs, rhs in group]
        nodes.append(
            NodeDiff(key, [o.type for o in left_groups.get(key, [])], [o.type for o in right_groups.get(key, [])], ops, key in moved_nodes)
        )
    outputs = (list(left.outputs), [_map_ref(ref, right_to_left) for ref in right.outputs])
    inputs = (list(left.inputs), [right_to_left.get(name, name) for name in right.inputs])
    graph_attrs = _attrs_differing(left.attrs, right.attrs, ignored)
    return IrDiff(left_label, right_label, nodes, inputs, outputs, sorted(ignored), graph_attrs)


def _groups(graph: IrGraph) -> dict[str, list[IrOp]]:
    groups: dict[str, list[IrOp]] = {}
    for op in graph.ops:
        groups.setdefault(op.fx_node or NO_NODE, []).append(op)
    return groups


def _merged_keys(left: Sequence[str], right: Sequence[str]) -> list[str]:
    """Both group sequences interleaved in order, each key once."""
    merged: list[str] = []
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        merged.extend(left[i1:i2])
        if tag != "equal":
            merged.extend(right[j1:j2])
    seen: set[str] = set()
    return [k for k in merged if not (k in seen or seen.add(k))]  # type: ignore[func-returns-value]


def _pair_ops(left: list[IrOp], right: list[IrOp]) -> list[tuple[IrOp | None, IrOp | None]]:
    """Pair by type runs; replaced runs pair by position, the rest stay alone."""
    pairs: list[tuple[IrOp | None, IrOp | None]] = []
    matcher = difflib.SequenceMatcher(None, [o.type for o in left], [o.type for o in right], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        lefts, rights = left[i1:i2], right[j1:j2]
        common = min(len(lefts), len(rights)) if tag in ("equal", "replace") else 0
        pairs.extend(zip(lefts[:common], rights[:common]))
        pairs.extend((lhs, None) for lhs in lefts[common:])
        pairs.extend((None, rhs) for rhs in rights[common:])
    return pairs


def _longest_increasing(values: Sequence[int]) -> set[int]:
    """Indices (into ``values``) of one longest strictly increasing subsequence."""
    tails: list[int] = []
    tail_index: list[int] = []
    parent = [-1] * len(values)
    for i, v in enumerate(values):
        k = bisect.bisect_left(tails, v)
        if k == len(tails):
            tails.append(v)
            tail_index.append(i)
        else:
            tails[k] = v
            tail_index[k] = i
        parent[i] = tail_index[k - 1] if k else -1
    keep, i = set(), tail_index[-1] if tail_index else -1
    while i >= 0:
        keep.add(i)
        i = parent[i]
    return keep


def _moved_pairs(left: IrGraph, right: IrGraph, pairs: list[tuple[IrOp, IrOp]]) -> set[str]:
    """Left names of paired ops whose relative order differs on the right side."""
    left_pos = {op.name: i for i, op in enumerate(left.ops)}
    right_pos = {op.name: i for i, op in enumerate(right.ops)}
    ordered = sorted(pairs, key=lambda p: left_pos[p[0].name])
    keep = _longest_increasing([right_pos[rhs.name] for _, rhs in ordered])
    return {lhs.name for i, (lhs, _) in enumerate(ordered) if i not in keep}


def _moved_keys(left: Sequence[str], right: Sequence[str]) -> set[str]:
    right_keys = set(right)
    both = [k for k in left if k in right_keys]
    right_pos = {k: i for i, k in enumerate(right)}
    keep = _longest_increasing([right_pos[k] for k in both])
    return {k for i, k in enumerate(both) if i not in keep}


def _map_ref(ref: str, right_to_left: dict[str, str]) -> str:
    if not ref:
        return ref
    name, _, index = ref.rpartition(":")
    return f"{right_to_left.get(name, name)}:{index}" if name else ref


def _op_diff(
    left: IrOp | None,
    right: IrOp | None,
    right_to_left: dict[str, str],
    ignored: frozenset[str],
    compare_outputs: bool,
    moved: set[str],
) -> OpDiff:
    if left is None or right is None:
        lone = left or right
        assert lone is not None
        kind = "only_left" if left is not None else "only_right"
        return OpDiff(
            kind,
            left=left.name if left else None,
            right=right.name if right else None,
            left_type=left.type if left else None,
            right_type=right.type if right else None,
        )
    diff = OpDiff("same", left.name, right.name, left.type, right.type, moved=left.name in moved)
    if left.type == right.type == UNSUPPORTED_OP_TYPE:
        # Both conversions refuse the node: each placeholder records its own refusal (its
        # message, the inputs it had), not a GE op, so there is nothing more to compare.
        return diff
    diff.attrs = _attr_differences(left, right, ignored)
    diff.inputs = _input_differences(left, right, right_to_left)
    diff.outputs = _output_differences(left, right) if compare_outputs else []
    if left.type != right.type or diff.attrs or diff.inputs or diff.outputs:
        diff.kind = "changed"
    return diff


def _is_ignored(key: str, ignored: frozenset[str]) -> bool:
    if key in ignored:
        return True
    if key.startswith(KEPT_FXLAB_ATTRS):
        return False
    return any(entry.endswith("*") and key.startswith(entry[:-1]) for entry in ignored)


def _attr_differences(left: IrOp, right: IrOp, ignored: frozenset[str]) -> dict[str, tuple[Any, Any]]:
    return _attrs_differing(left.attrs, right.attrs, ignored)


def _attrs_differing(left: dict[str, Any], right: dict[str, Any], ignored: frozenset[str]) -> dict[str, tuple[Any, Any]]:
    out: dict[str, tuple[Any, Any]] = {}
    for key in sorted(k for k in set(left) | set(right) if not _is_ignored(k, ignored)):
        a = left[key].to_json() if key in left else MISSING
        b = right[key].to_json() if key in right else MISSING
        if _as_float32(a) != _as_float32(b):
            out[key] = (a, b)
    return out


def _as_float32(value: Any) -> Any:
    """GE stores float attrs as 32-bit (``AttrDef.f``): 1e-05 written and read back is
    9.99999974e-06, so floats compare at float32 precision. NaN stands for itself
    (``nan != nan``, yet an attr that is NaN on both sides is the same attr)."""
    if isinstance(value, float):
        return "NaN" if value != value else struct.unpack("f", struct.pack("f", value))[0]
    if isinstance(value, list):
        return [_as_float32(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_float32(v) for k, v in value.items()}
    return value


def _input_differences(left: IrOp, right: IrOp, right_to_left: dict[str, str]) -> list[tuple[int, str | None, str | None]]:
    mapped = [_map_ref(ref, right_to_left) for ref in right.inputs]
    out = []
    for slot in range(max(len(left.inputs), len(mapped))):
        a = left.inputs[slot] if slot < len(left.inputs) else None
        b = mapped[slot] if slot < len(mapped) else None
        if a != b:
            out.append((slot, a, b))
    return out


def _output_differences(left: IrOp, right: IrOp) -> list[tuple[int, Any, Any]]:
    out = []
    for slot in range(max(len(left.output_desc), len(right.output_desc))):
        a = _desc_summary(left.output_desc[slot]) if slot < len(left.output_desc) else None
        b = _desc_summary(right.output_desc[slot]) if slot < len(right.output_desc) else None
        if a is not None and b is not None and (_unset_shape(a["shape"]) or _unset_shape(b["shape"])):
            # An empty or unknown-rank shape on one side is taken as unset: TorchAir leaves
            # output shapes to GE's shape inference and only sets the dtype.
            a, b = {"dtype": a["dtype"]}, {"dtype": b["dtype"]}
        if a != b:
            out.append((slot, a, b))
    return out


def _unset_shape(shape: list[int]) -> bool:
    return not shape or tuple(shape) == UNKNOWN_RANK


def _desc_summary(desc: Any) -> dict[str, Any]:
    return {"dtype": desc.dtype.name, "shape": list(desc.shape)}
