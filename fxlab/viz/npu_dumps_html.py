"""``fxlab dumps --html``: one self-contained page with GE's phases in the graph viewer,
beside the saved trace's stages when there is one (each GE phase a stage ``ge:<phase>``
of the trace graph it was joined with, its ops linked to the Ascend IR ops they came
from), and a table per phase of what GE did with each op's FX nodes and source lines.
Returns text; never writes or prints."""

from __future__ import annotations

import html
from typing import Any

from fxlab.escape import visible
from fxlab.npu_dumps.dump_model import DumpGraph, DumpSet
from fxlab.npu_dumps.phases import phase_chains
from fxlab.stage_names import ASCEND_IR
from fxlab.viz.fold import FoldOptions, GroupKey, Leaf, fold
from fxlab.viz.html_report import page_html, viewer_html
from fxlab.viz.npu_dump_views import what_ge_did
from fxlab.viz.trace_views import relative_paths
from fxlab.viz.viewer_data import GROUP_FIELDS, NODE_FIELDS, VIEW_CAP, group_rows, stage_dict, viewer_data

GE_STAGE_PREFIX = "ge:"
SK_STYLE = ('fillcolor="#fff3e0"', 'color="#ef6c00"')
UB_STYLE = ('fillcolor="#e8f5e9"', 'color="#2e7d32"')


def _e(value: Any) -> str:
    return html.escape(visible(str(value)), quote=True)


def ge_leaves(graph: DumpGraph) -> list[Leaf]:
    """One leaf per GE op, grouped by its SuperKernel or UB fusion scope."""
    leaves = []
    for op in graph.ops:
        scopes: tuple[GroupKey, ...] = ()
        if op.super_kernel_scope:
            scopes = (
                GroupKey(f"/sk:{op.super_kernel_scope}", op.super_kernel_scope, f"SuperKernel scope {op.super_kernel_scope}", SK_STYLE),
            )
        elif op.fusion_scope is not None:
            scopes = (GroupKey(f"/ub:{op.fusion_scope}", f"ub{op.fusion_scope}", f"UB fusion scope {op.fusion_scope}", UB_STYLE),)
        inputs = [(text.rpartition(":")[0], "") for text in op.inputs if text and not text.endswith(":-1")]
        leaves.append(Leaf(key=op.name, line="", op_text=op.type, scopes=scopes, inputs=inputs, adoptable=op.type != "NetOutput"))
    return leaves


def ge_stage(graph: DumpGraph) -> dict[str, Any]:
    """A GE phase as a viewer stage (the rows :mod:`fxlab.viz.viewer_data` describes)."""
    leaves = ge_leaves(graph)
    plan = fold(leaves, FoldOptions(cap=VIEW_CAP))
    groups, group_of = group_rows(leaves, plan)
    nodes = []
    for op, leaf in zip(graph.ops, leaves):
        kind = "inserted" if op.inserted else "fused" if op.fused else "renamed" if op.renamed else ""
        sig = ", ".join(f"{o.dtype} {o.layout}".strip() for o in op.outputs[:3])
        nodes.append([op.name, op.type, sig, kind, group_of[leaf.key], relative_paths(", ".join(op.source)), what_ge_did(op)])
    return stage_dict(f"{GE_STAGE_PREFIX}{graph.phase}", nodes, groups, leaves, plan)


def _phases(dumps: DumpSet) -> list[DumpGraph]:
    return [graph for chain in phase_chains(dumps.graphs).values() for graph in chain]


def dumps_viewer_data(dumps: DumpSet, trace: Any, joined: dict[int, int | None]) -> dict[str, Any]:
    """The trace's viewer data with each GE phase added to the graph it was joined with
    (and linked to its Ascend IR ops); phases joined with no trace graph get a graph of
    their own."""
    data: dict[str, Any] = (
        viewer_data(trace) if trace is not None else {"model": "", "node_fields": NODE_FIELDS, "group_fields": GROUP_FIELDS, "graphs": []}
    )
    data["kinds"] = dict(
        data.get("kinds", {}),
        inserted=["#e8f5e9", "#2e7d32", "inserted by GE"],
        fused=["#fff3e0", "#ef6c00", "fused by GE"],
        renamed=["#e3f2fd", "#1565c0", "renamed by GE"],
    )
    by_index = {g["index"]: g for g in data["graphs"]}
    own: dict[str, dict[str, Any]] = {}
    for graph in _phases(dumps):
        index = joined.get(dumps.graphs.index(graph))
        target = by_index.get(index) if index is not None else None
        if target is None:
            target = own.setdefault(graph.key, {"index": graph.key, "stages": [], "links": [], "diff": {}})
        stage = ge_stage(graph)
        target["stages"].append(stage)
        if index is not None:
            target["links"] += [[ASCEND_IR, name, stage["name"], op.name] for op in graph.ops for name in op.torchair_ops]
    data["graphs"] += list(own.values())
    return data


def dumps_html(dumps: DumpSet, trace: Any = None, joined: dict[int, int | None] | None = None) -> str:
    title = "fxlab dumps" + (f" · {trace.model}" if trace is not None else "")
    body = [f"<h1>{_e(title)}</h1>", viewer_html(dumps_viewer_data(dumps, trace, joined or {}))]
    body += [_phase_table(graph) for graph in _phases(dumps)]
    body += [f'<p class="dim">note: {_e(note)}</p>' for note in dumps.notes]
    return page_html(title, body)


def _phase_table(graph: DumpGraph) -> str:
    rows = "".join(
        f"<tr><td><code>{_e(op.name)}</code></td><td>{_e(op.type)}</td><td>{_e(what_ge_did(op))}</td>"
        f"<td>{_e(', '.join(op.fx_nodes))}</td><td>{_e(relative_paths(', '.join(op.source)))}</td></tr>"
        for op in graph.ops
    )
    head = "<tr><th>GE op</th><th>type</th><th>what GE did</th><th>FX node(s)</th><th>source</th></tr>"
    summary = f"{_e(graph.key)} · {_e(graph.phase)} ({len(graph.ops)} ops, {_e(graph.file)})"
    return f"<details><summary>{summary}</summary><table>{head}{rows}</table></details>"
