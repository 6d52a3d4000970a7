"""What the HTML report's graph viewer reads: for each stage of each graph, its module
tree (the same groups and first folding as the pictures, see ``fold``), its nodes with
their inputs, kinds, shapes and source lines, and the links between stages (an ATen node
and the functional node it became, per ``diff_stages``; an FX node and its GE ops, per
provenance). Plain JSON-ready data, compact (lists, not objects, per node).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fxlab.capture.trace import GraphTrace, Trace
from fxlab.diff.fx_diff import diff_stages
from fxlab.viz.dot import KIND_COLOURS, UNSUPPORTED_OP_TYPE, desc_signature
from fxlab.viz.fold import FoldOptions, FoldPlan, Leaf, fold
from fxlab.viz.pictures import IR_SOURCE_STAGES, fx_leaves, ir_leaves
from fxlab.viz.trace_views import relative_paths
from fxlab.stage_names import ACLGRAPH, ASCEND_IR, ATEN, FUNCTIONAL, PRE_GE

# The first view opens groups breadth first up to this many boxes (dagre lays out a few
# hundred boxes in well under a second).
VIEW_CAP = 60
# Stage pairs whose nodes are matched by ``diff_stages`` (what the before-functionalize
# diff and "counterparts" show). The later stages are the functional graph rewritten in
# place: their nodes keep the functional node's name, so they are matched by name.
DIFFED_PAIRS = ((ATEN, FUNCTIONAL),)
SAME_NAME_PAIRS = ((FUNCTIONAL, PRE_GE), (FUNCTIONAL, ACLGRAPH))
# node row: name, op text, output signature, kind, group, source, code line
NODE_FIELDS = ("name", "text", "sig", "kind", "group", "source", "code")
# group row: label, parent, fill, border, module name, node count, open at first, repeat box
GROUP_FIELDS = ("label", "parent", "fill", "border", "name", "size", "open", "repeat")


def viewer_data(trace: Trace) -> dict[str, Any]:
    kinds = {kind: [fill, border, label] for kind, (fill, border, label) in KIND_COLOURS.items()}
    kinds["unsupported"] = ["#f8c4c4", "#c62828", "unsupported"]
    return {
        "model": relative_paths(trace.model),
        "kinds": kinds,
        "node_fields": NODE_FIELDS,
        "group_fields": GROUP_FIELDS,
        "graphs": [_graph_data(trace, graph) for graph in trace.graphs],
    }


def _graph_data(trace: Trace, graph: GraphTrace) -> dict[str, Any]:
    stages = []
    for stage in trace.stages:
        if stage == ASCEND_IR and graph.ir is not None:
            stages.append(_ir_stage(graph))
        elif stage in graph.stages:
            stages.append(_fx_stage(graph, stage))
    diffs = _stage_diffs(graph)
    return {"index": graph.index, "stages": stages, "links": _links(graph, diffs), "diff": _before_functionalize(diffs)}


def _stage_diffs(graph: GraphTrace) -> dict[tuple[str, str], Any]:
    return {(a, b): diff_stages(graph.stages[a], graph.stages[b]) for a, b in DIFFED_PAIRS if a in graph.stages and b in graph.stages}


def _fx_stage(graph: GraphTrace, stage: str) -> dict[str, Any]:
    leaves = fx_leaves(graph, stage, lines=False)
    plan = fold(leaves, FoldOptions(cap=VIEW_CAP))
    groups, group_of = group_rows(leaves, plan)
    records = {r.name: r for r in graph.stages[stage].nodes}
    nodes = []
    for leaf in leaves:
        record = records[leaf.key]
        prov = record.provenance
        sig = ", ".join(m.signature() for m in record.outputs[:3])
        text = record.target if record.op not in ("placeholder", "output") else record.op
        nodes.append([record.name, text, sig, record.kind, group_of[leaf.key], relative_paths(prov.location or ""), prov.code or ""])
    return stage_dict(stage, nodes, groups, leaves, plan)


def _ir_stage(graph: GraphTrace) -> dict[str, Any]:
    assert graph.ir is not None
    leaves = ir_leaves(graph, graph.ir, lines=False)
    plan = fold(leaves, FoldOptions(cap=VIEW_CAP))
    groups, group_of = group_rows(leaves, plan)
    nodes = []
    for op, leaf in zip(graph.ir.ops, leaves):
        kind = "unsupported" if op.type == UNSUPPORTED_OP_TYPE else ""
        sig = ", ".join(desc_signature(d) for d in op.output_desc[:3])
        notes = [
            f"{k}={op.attr_value(k)}"
            for k in ("_super_kernel_scope", "_op_aicore_num", "_op_vectorcore_num")
            if op.attr_value(k) is not None
        ]
        nodes.append([op.name, op.type, sig, kind, group_of[leaf.key], relative_paths(op.source or ""), "; ".join(notes)])
    return stage_dict(ASCEND_IR, nodes, groups, leaves, plan)


def stage_dict(name: str, nodes: list[list[Any]], groups: list[list[Any]], leaves: Sequence[Leaf], plan: FoldPlan) -> dict[str, Any]:
    index = {leaf.key: i for i, leaf in enumerate(leaves)}
    inputs = [sorted({index[p] for p, _ in leaf.inputs if p in index}) for leaf in leaves]
    return {"name": name, "nodes": nodes, "inputs": inputs, "groups": groups, "notes": plan.notes}


def group_rows(leaves: Sequence[Leaf], plan: FoldPlan) -> tuple[list[list[Any]], dict[str, int]]:
    """Group rows (row 0 is the whole graph) and each leaf's innermost group row."""
    rows: list[list[Any]] = [["", -1, "", "", "", len(leaves), 1, -1]]
    row_of: dict[str, int] = {"": 0}
    repeat_ids: dict[str, int] = {}
    group_of: dict[str, int] = {}
    for leaf in leaves:
        parent = 0
        for key in leaf.path:
            row = row_of.get(key.id)
            if row is None:
                box = plan.in_repeat.get(key.id)
                repeat = repeat_ids.setdefault(box.id, len(repeat_ids)) if box is not None else -1
                fill, border = _colours(key.style)
                row = row_of[key.id] = len(rows)
                rows.append([key.label, parent, fill, border, key.name, 0, int(key.id in plan.open), repeat])
            rows[row][5] += 1
            parent = row
        group_of[leaf.key] = parent
    return rows, group_of


def _colours(style: Sequence[str]) -> tuple[str, str]:
    values = dict(line.split("=", 1) for line in style if "=" in line)
    return values.get("fillcolor", "").strip('"'), values.get("color", "").strip('"')


def _links(graph: GraphTrace, diffs: dict[tuple[str, str], Any]) -> list[list[str]]:
    """[stage, node, stage, node] pairs: the same computation in two stages (a GE op and
    the node of the FX stage the Ascend IR was converted from)."""
    links = []
    for left, right in SAME_NAME_PAIRS:
        if left in graph.stages and right in graph.stages:
            names = {n.name for n in graph.stages[left].nodes}
            links += [[left, n.name, right, n.name] for n in graph.stages[right].nodes if n.name in names]
    for (left, right), diff in diffs.items():
        for entry in diff.entries:
            if entry.left is not None and entry.right is not None:
                links.append([left, entry.left.name, right, entry.right.name])
    source = next((s for s in IR_SOURCE_STAGES if s in graph.stages), None)
    if graph.ir is not None and source is not None:
        links += [[source, op.fx_node, ASCEND_IR, op.name] for op in graph.ir.ops if op.fx_node]
    return links


def _before_functionalize(diffs: dict[tuple[str, str], Any]) -> dict[str, list[str]]:
    """ "aten/<node>" or "functional/<node>" -> what functionalization did to it, in words."""
    diff = diffs.get((ATEN, FUNCTIONAL))
    if diff is None:
        return {}
    marks: dict[str, list[str]] = {}
    for entry in diff.entries:
        if entry.kind == "same":
            continue
        words = [f"{c.code}: {c.detail}" if c.detail else c.code for c in entry.changes] or [entry.kind]
        for side, ref in ((ATEN, entry.left), (FUNCTIONAL, entry.right)):
            if ref is not None:
                marks[f"{side}/{ref.name}"] = words
    return marks
