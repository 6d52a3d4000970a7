"""Folding a big graph into a picture a person can read and ``dot`` can lay out.

Every drawn thing (an FX node, a GE op) is a :class:`Leaf` with a path of groups: the
scopes it sits in, then its module path (``nn_module_stack``), then, for GE ops, the FX
node it came from. The groups form a tree; a :class:`FoldPlan` says which groups are
open (drawn as a cluster of their contents) and which are folded (one box). Siblings
that repeat (``layers.0``, ``layers.1``, ... of one class, with the same ops inside) are
drawn once: the first as itself, the rest as one box with a count. Groups open breadth
first while the drawn boxes stay under a cap, so the picture shows the outline of the
whole model and the inside of its first layer. ``expand`` opens named modules, ``focus``
draws only the nodes within some hops of one node. Pure data: no DOT, no printing.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

DEFAULT_CAP = 250
# "layers.3 (DecoderLayer)" -> family "layers.# (DecoderLayer)", index 3
_DIGITS = re.compile(r"\d+")
INDEXED = re.compile(r"^(?P<head>.*?)(?P<index>\d+)(?P<tail> \(.*\))?$")


@dataclass(frozen=True)
class GroupKey:
    """One level of a leaf's path. ``name`` is what the user types for ``--expand``
    (a module path such as ``layers.0.attn``); ``label`` and ``style`` are for drawing."""

    id: str
    name: str
    label: str
    style: tuple[str, ...] = ()
    repeatable: bool = False  # module groups: "layers.3" may fold with "layers.4"
    alike_by_label: bool = True  # False: two such groups are alike by their contents alone


@dataclass
class Leaf:
    """One drawn node: its DOT id, its DOT statement, its groups and its inputs."""

    key: str
    line: str
    op_text: str  # the target or op type: what makes repeated layers look alike
    scopes: tuple[GroupKey, ...] = ()
    modules: tuple[GroupKey, ...] = ()
    tail: tuple[GroupKey, ...] = ()
    inputs: list[tuple[str, str]] = field(default_factory=list)  # (producer key, DOT edge attrs)
    adoptable: bool = True  # False for the graph's output: it belongs to no module

    @property
    def path(self) -> tuple[GroupKey, ...]:
        return self.scopes + self.modules + self.tail


@dataclass
class Group:
    key: GroupKey | None
    children: dict[str, Group] = field(default_factory=dict)
    leaves: list[Leaf] = field(default_factory=list)
    size: int = 0
    signature: int = 0

    @property
    def id(self) -> str:
        return self.key.id if self.key else ""


@dataclass
class RepeatBox:
    """Siblings with the same contents, drawn as one box: ``members[0]`` stays outside."""

    id: str
    members: list[Group]

    @property
    def size(self) -> int:
        return sum(m.size for m in self.members)


@dataclass
class RunBox:
    """Consecutive leaves of one group too many to draw one by one."""

    id: str
    leaves: list[Leaf]


@dataclass
class FoldOptions:
    cap: int = DEFAULT_CAP
    expand: tuple[str, ...] = ()
    focus: str | None = None
    depth: int = 2


@dataclass
class FoldPlan:
    """What to draw: open groups, repeat and run boxes, and each leaf's drawn box."""

    root: Group
    open: set[str] = field(default_factory=set)
    repeats: dict[str, list[RepeatBox]] = field(default_factory=dict)  # parent id -> boxes
    in_repeat: dict[str, RepeatBox] = field(default_factory=dict)  # member group id -> its box
    runs: dict[str, list[RunBox]] = field(default_factory=dict)  # group id -> runs of its leaves
    hidden: set[str] = field(default_factory=set)  # leaf keys not drawn (outside a focus)
    drawn_of: dict[str, str] = field(default_factory=dict)  # leaf key -> drawn id
    total: int = 0
    drawn: int = 0
    expanded: list[str] = field(default_factory=list)  # --expand names this picture had
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- the tree


def adopt_orphans(leaves: Sequence[Leaf]) -> None:
    """Give a leaf with no module one: a leaf without inputs (a parameter placeholder, a
    ``Data`` or ``Const`` op) takes its first user's, any other its first producer's (a
    ``copy_`` back into a layer's KV cache), so a layer's pieces fold with it."""
    by_key = {leaf.key: leaf for leaf in leaves}
    first_user: dict[str, Leaf] = {}
    for leaf in leaves:
        for producer, _ in leaf.inputs:
            first_user.setdefault(producer, leaf)
    # Only within the same scopes: module groups sit inside scope groups, and a node is
    # never moved into or out of a scope.
    for leaf in reversed(leaves):  # users come later: adopt from the back
        user = first_user.get(leaf.key)
        if not leaf.modules and not leaf.inputs and user is not None and user.adoptable and user.scopes == leaf.scopes:
            leaf.modules = user.modules
    for leaf in leaves:
        if leaf.modules or not leaf.adoptable:
            continue
        producers = (by_key.get(p) for p, _ in leaf.inputs)
        leaf.modules = next((p.modules for p in producers if p is not None and p.modules and p.scopes == leaf.scopes), ())


def build_tree(leaves: Iterable[Leaf]) -> Group:
    root = Group(key=None)
    for leaf in leaves:
        group = root
        group.size += 1
        for key in leaf.path:
            group = group.children.setdefault(key.id, Group(key=key))
            group.size += 1
        group.leaves.append(leaf)
    _sign(root)
    return root


def _sign(group: Group) -> int:
    """A hash of the ops inside (leaf op texts and child structure, not names)."""
    parts = [leaf.op_text for leaf in group.leaves]
    parts += [
        f"{_DIGITS.sub('#', child.key.label if child.key and child.key.alike_by_label else '')}:{_sign(child)}"
        for child in group.children.values()
    ]
    group.signature = hash(tuple(parts))
    return group.signature


def _family(group: Group) -> str:
    label = group.key.label if group.key else ""
    match = INDEXED.match(label) if group.key and group.key.repeatable else None
    return f"{match['head']}#{match['tail'] or ''}" if match else label


# ---------------------------------------------------------------- the plan


def fold(leaves: Sequence[Leaf], options: FoldOptions | None = None) -> FoldPlan:
    options = options or FoldOptions()
    adopt_orphans(leaves)
    plan = FoldPlan(root=build_tree(leaves), total=len(leaves))
    plan.open.add("")
    forced = _expand_targets(plan.root, options.expand, plan)
    _find_repeats(plan, plan.root, forced)
    if options.focus is not None:
        _focus(plan, leaves, options)
    else:
        for group_id in forced:
            plan.open.add(group_id)
        _open_breadth_first(plan, options.cap)
    _place_leaves(plan, leaves)
    plan.drawn = len(set(plan.drawn_of.values()))
    return plan


def _expand_targets(root: Group, names: Sequence[str], plan: FoldPlan) -> set[str]:
    """Ids of the groups named by ``--expand`` and of every group above them."""
    forced: set[str] = set()
    if not names:
        return forced

    def walk(group: Group, above: list[str]) -> None:
        for child in group.children.values():
            name = child.key.name if child.key else ""
            if name in names:
                forced.update(above + [child.id])
                plan.expanded.append(name)
            walk(child, above + [child.id])

    walk(root, [])
    return forced


def _find_repeats(plan: FoldPlan, group: Group, forced: set[str]) -> None:
    """Siblings of one family and one signature: all but the first go into one box
    (a sibling the user expanded stays out of it)."""
    families: dict[tuple[str, int], list[Group]] = {}
    for child in group.children.values():
        if child.key and child.key.repeatable and INDEXED.match(child.key.label):
            families.setdefault((_family(child), child.signature), []).append(child)
    for (family, _), members in families.items():
        rest = [m for m in members[1:] if m.id not in forced]
        if len(members) >= 2 and rest:
            box = RepeatBox(id=f"{group.id}/repeat:{family}:{members[0].id}", members=rest)
            plan.repeats.setdefault(group.id, []).append(box)
            plan.in_repeat.update((m.id, box) for m in rest)
    for child in group.children.values():
        if child.id not in plan.in_repeat:
            _find_repeats(plan, child, forced)


def units(plan: FoldPlan, group: Group) -> int:
    """Boxes drawn directly inside ``group`` when it is open (children folded)."""
    runs = plan.runs.get(group.id)
    leaves = len(runs) if runs is not None else len(group.leaves)
    kept = sum(1 for c in group.children.values() if c.id not in plan.in_repeat)
    return leaves + kept + len(plan.repeats.get(group.id, ()))


def _open_breadth_first(plan: FoldPlan, cap: int) -> None:
    """Open groups shallow first while the count of drawn boxes stays within ``cap``."""
    drawn = 0
    queue: deque[Group] = deque([plan.root])
    while queue:
        group = queue.popleft()
        if group.id not in plan.open:
            cost = units(plan, group) - 1
            if drawn + cost > cap:
                continue
            plan.open.add(group.id)
            drawn += cost
        else:
            if len(group.leaves) > max(cap - drawn, cap // 2):
                _chunk_leaves(plan, group, max(2, cap // 2))
            drawn += units(plan, group) - (0 if group is plan.root else 1)
        queue.extend(c for c in group.children.values() if c.id not in plan.in_repeat)


def _chunk_leaves(plan: FoldPlan, group: Group, boxes: int) -> None:
    """Too many leaves directly in one open group: runs of consecutive leaves, one box each."""
    per_box = -(-len(group.leaves) // boxes)
    plan.runs[group.id] = [
        RunBox(id=f"{group.id}/run:{start}", leaves=group.leaves[start : start + per_box]) for start in range(0, len(group.leaves), per_box)
    ]
    where = group.key.name if group.key else "the top level"
    plan.notes.append(
        f"{len(group.leaves)} nodes directly in {where} drawn as {len(plan.runs[group.id])} boxes of "
        f"consecutive nodes; --focus NODE --depth K draws one part node by node"
    )


def _focus(plan: FoldPlan, leaves: Sequence[Leaf], options: FoldOptions) -> None:
    """Only the leaves within ``depth`` edges of the focus node, their groups open."""
    assert options.focus is not None
    near = hops_around(leaves, options.focus, options.depth)
    if len(near) > options.cap:
        plan.notes.append(
            f"{len(near)} nodes within {options.depth} hops of {options.focus}, over the cap of {options.cap}: the first {options.cap} are drawn"
        )
        near = set([leaf.key for leaf in leaves if leaf.key in near][: options.cap])  # in graph order
    plan.hidden = {leaf.key for leaf in leaves if leaf.key not in near}
    plan.in_repeat.clear()
    plan.repeats.clear()
    for leaf in leaves:
        if leaf.key in near:
            plan.open.update(key.id for key in leaf.path)


def hops_around(leaves: Sequence[Leaf], start: str, depth: int) -> set[str]:
    """Leaf keys within ``depth`` edges of ``start``, either direction (empty if absent)."""
    neighbours: dict[str, set[str]] = {leaf.key: set() for leaf in leaves}
    for leaf in leaves:
        for producer, _ in leaf.inputs:
            if producer in neighbours:
                neighbours[leaf.key].add(producer)
                neighbours[producer].add(leaf.key)
    if start not in neighbours:
        return set()
    seen, frontier = {start}, [start]
    for _ in range(depth):
        frontier = [n for key in frontier for n in neighbours[key] if n not in seen]
        seen.update(frontier)
    return seen


def _place_leaves(plan: FoldPlan, leaves: Sequence[Leaf]) -> None:
    """Each shown leaf's drawn id: itself, or the first folded box on its path."""
    run_of = {leaf.key: run.id for runs in plan.runs.values() for run in runs for leaf in run.leaves}
    for leaf in leaves:
        if leaf.key in plan.hidden:
            continue
        plan.drawn_of[leaf.key] = _drawn_id(plan, leaf, run_of)


def _drawn_id(plan: FoldPlan, leaf: Leaf, run_of: dict[str, str]) -> str:
    for key in leaf.path:
        box = plan.in_repeat.get(key.id)
        if box is not None:
            return box.id
        if key.id not in plan.open:
            return key.id
    return run_of.get(leaf.key, leaf.key)


def folded_edges(plan: FoldPlan, leaves: Sequence[Leaf]) -> dict[tuple[str, str], tuple[int, str]]:
    """(drawn producer, drawn user) -> (how many leaf edges it stands for, DOT attrs of the first)."""
    edges: dict[tuple[str, str], tuple[int, str]] = {}
    for leaf in leaves:
        dst = plan.drawn_of.get(leaf.key)
        if dst is None:
            continue
        for producer, attrs in leaf.inputs:
            src = plan.drawn_of.get(producer, producer if producer not in plan.hidden else None)
            if src is None or src == dst:
                continue
            count, first = edges.get((src, dst), (0, attrs))
            edges[(src, dst)] = (count + 1, first)
    return edges
