"""A trace's pictures: each stage folded by module (see ``fold``), as DOT text. The
command line writes them and draws them with graphviz (:mod:`fxlab.cli.picture_files`); a
stage ``dot`` cannot draw is drawn again folded to :data:`FALLBACK_CAP` boxes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from collections.abc import Sequence

from fxlab.capture.trace import GraphTrace, NodeRecord, Trace
from fxlab.errors import UsageError
from fxlab.ir.model import IrGraph, IrOp
from fxlab.viz.dot import (
    PALETTE,
    open_graph,
    short_source,
    fx_node_line,
    fx_node_views,
    ir_op_line,
    quote,
    scope_attr_lines,
    scope_cluster_style,
    scope_colour,
)
from fxlab.viz.fold import INDEXED, FoldOptions, FoldPlan, Group, GroupKey, Leaf, adopt_orphans, fold, folded_edges
from fxlab.stage_names import ASCEND_IR, ATEN, FUNCTIONAL, PRE_GE

# The stage whose FX nodes the Ascend IR ops name, most specific first.
IR_SOURCE_STAGES = (PRE_GE, FUNCTIONAL, ATEN)
FALLBACK_CAP = 40
FOLDED_STYLE = {"shape": "box", "style": "filled,rounded", "fillcolor": "#e8edf4", "color": "#5b6f8a"}
REPEAT_STYLE = {"shape": "box3d", "style": "filled", "fillcolor": "#dce6f5", "color": "#3d5a80", "penwidth": "1.5"}
MODULE_STYLE = ('style="dashed,rounded"', 'color="#8093ad"')


@dataclass
class Picture:
    """One stage's folded DOT text and what the folding left out."""

    graph: int
    stage: str
    dot: str
    total: int
    drawn: int
    notes: list[str] = field(default_factory=list)
    expanded: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- leaves


def _module_keys(path: Sequence[str], prefix: str, cache: dict[tuple[str, tuple[str, ...]], tuple[GroupKey, ...]]) -> tuple[GroupKey, ...]:
    """``["layers.0 (DecoderLayer)", "layers.0.attn (Attention)"]`` -> nested groups,
    each labelled relative to its parent (``attn (Attention)``); one tuple per distinct
    path (nodes of one module share it)."""
    found = cache.get((prefix, tuple(path)))
    if found is None:
        found = cache[(prefix, tuple(path))] = _new_module_keys(path, prefix)
    return found


def _new_module_keys(path: Sequence[str], prefix: str) -> tuple[GroupKey, ...]:
    keys, parent_name, parent_id = [], "", prefix
    for entry in path:
        name = entry.split(" (", 1)[0]
        label = entry[len(parent_name) + 1 :] if parent_name and entry.startswith(parent_name + ".") else entry
        parent_id = f"{parent_id}/m:{entry}"
        keys.append(GroupKey(id=parent_id, name=name, label=label, style=(f"label={quote(label)}", *MODULE_STYLE), repeatable=True))
        parent_name = name
    return tuple(keys)


def _scope_keys(frames: Sequence[dict]) -> tuple[GroupKey, ...]:
    keys, parent = [], ""
    for position, frame in enumerate(frames):
        index = frame.get("index", position)
        parent = f"{parent}/s:{index}"
        label = "\n".join([f"scope {index}", *scope_attr_lines(frame.get("attrs", frame))])
        keys.append(GroupKey(id=parent, name=f"scope {index}", label=label, style=tuple(scope_cluster_style(frame))))
    return tuple(keys)


def fx_leaves(graph: GraphTrace, stage: str, lines: bool = True) -> list[Leaf]:
    """One leaf per FX node of ``stage``: scopes, then modules, then the node (its DOT
    statement only with ``lines``)."""
    source = graph.stages[stage]
    records: dict[str, NodeRecord] = {r.name: r for r in source.nodes}
    leaves = []
    cache: dict[tuple[str, tuple[str, ...]], tuple[GroupKey, ...]] = {}
    for view in fx_node_views(source):
        scopes = _scope_keys(view.scopes)
        record = records.get(view.name)
        modules = _module_keys(record.provenance.module_path if record else [], scopes[-1].id if scopes else "", cache)
        leaves.append(
            Leaf(
                key=view.name,
                line=fx_node_line(view) if lines else "",
                op_text=view.target if view.op != "placeholder" else "placeholder",
                scopes=scopes,
                modules=modules,
                inputs=[(i, "") for i in view.inputs],
                adoptable=view.op != "output",
            )
        )
    return leaves


def ir_leaves(graph: GraphTrace, ir: IrGraph, lines: bool = True) -> list[Leaf]:
    """One leaf per GE op: its SuperKernel scope, its FX node's modules, its FX node."""
    modules_of = _fx_modules(graph)
    ops_per_node: dict[str | None, int] = {}
    for op in ir.ops:
        ops_per_node[op.fx_node] = ops_per_node.get(op.fx_node, 0) + 1
    leaves = []
    for op in ir.ops:
        sk_name = str(op.attr_value("_super_kernel_scope", "") or "")
        scope = (
            (GroupKey(id=f"/sk:{sk_name}", name=f"SuperKernel {sk_name}", label=_sk_label(op, sk_name), style=_sk_style(op, sk_name)),)
            if sk_name
            else ()
        )
        prefix = scope[0].id if scope else ""
        modules = tuple(dataclasses.replace(k, id=prefix + k.id) for k in modules_of.get(op.fx_node or "", ()))
        alone = op.fx_node is None or ops_per_node[op.fx_node] == 1
        tail = () if alone else (_fx_group_key(op, modules[-1].id if modules else prefix),)
        leaves.append(
            Leaf(
                key=op.name,
                line=ir_op_line(op, op.fx_node if alone else None) if lines else "",
                op_text=op.type,
                scopes=scope,
                modules=modules,
                tail=tail,
                inputs=_ir_inputs(op),
                adoptable=op.type != "NetOutput",
            )
        )
    return leaves


def _fx_modules(graph: GraphTrace) -> dict[str, tuple[GroupKey, ...]]:
    stage = next((s for s in IR_SOURCE_STAGES if s in graph.stages), None)
    if stage is None:
        return {}

    leaves = fx_leaves(graph, stage, lines=False)
    adopt_orphans(leaves)
    return {leaf.key: leaf.modules for leaf in leaves}


def _sk_label(op: IrOp, sk_name: str) -> str:
    options = str(op.attr_value("_super_kernel_options", "") or "")
    return f"SuperKernel {sk_name}" + (f"\n{options}" if options else "")


def _sk_style(op: IrOp, sk_name: str) -> tuple[str, ...]:
    fill, border = scope_colour(sk_name)
    label = _sk_label(op, sk_name)
    return (f"label={quote(label)}", 'style="filled,rounded"', f"fillcolor={quote(fill)}", f"color={quote(border)}", 'penwidth="2"')


def _fx_group_key(op: IrOp, parent: str) -> GroupKey:
    source = short_source(op.source)
    label = f"fx: {op.fx_node}" + (f"  ({source})" if source else "")
    return GroupKey(
        id=f"{parent}/fx:{op.fx_node}",
        name=str(op.fx_node),
        label=label,
        style=(f"label={quote(label)}", 'style="dashed,rounded"', 'color="#777777"'),
        alike_by_label=False,
    )


def _ir_inputs(op: IrOp) -> list[tuple[str, str]]:
    inputs = []
    for text in op.inputs:
        if not text:
            continue
        producer, _, index = text.rpartition(":")
        if index == "-1":
            inputs.append((producer, ' [style="dashed", color="#999999"]'))
        elif index not in ("0", ""):
            inputs.append((producer, f" [label={quote(index)}]"))
        else:
            inputs.append((producer or text, ""))
    return inputs


# ---------------------------------------------------------------- DOT of a plan


def folded_dot(leaves: Sequence[Leaf], plan: FoldPlan, name: str, title: str) -> str:
    """DOT text of ``leaves`` as ``plan`` folds them: open groups are clusters, folded
    groups, repeats and runs are one box each; edges join the boxes, counted."""
    if plan.drawn < plan.total:
        title += (
            f"\nfolded: {plan.total:,} nodes drawn as {plan.drawn:,} boxes (--expand PATH opens a module, --focus NODE a neighbourhood)"
        )
    lines = open_graph(name, title, plan.drawn)
    _emit_group(lines, plan, plan.root, 1)
    lines.extend(_missing_producer_lines(leaves, plan))
    for (src, dst), (count, attrs) in folded_edges(plan, leaves).items():
        if count > 1:
            attrs = f' [label={quote(f"x{count}")}, penwidth="{min(1 + count / 8, 4):.1f}"]' if not attrs else attrs
        lines.append(f"  {quote(src)} -> {quote(dst)}{attrs};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _emit_group(lines: list[str], plan: FoldPlan, group: Group, depth: int) -> None:
    pad = "  " * depth
    runs = plan.runs.get(group.id)
    if runs is None:
        lines.extend(pad + leaf.line for leaf in group.leaves if leaf.key not in plan.hidden)
    else:
        lines.extend(
            pad + _box_line(run.id, f"{run.leaves[0].key} … {run.leaves[-1].key}\n{len(run.leaves):,} nodes", FOLDED_STYLE) for run in runs
        )
    for child in group.children.values():
        if child.id in plan.in_repeat or not _shown(plan, child):
            continue
        if child.id in plan.open:
            lines.append(f"{pad}subgraph {quote('cluster_' + child.id)} {{")
            lines.extend(f"{pad}  {line};" for line in child.key.style)  # type: ignore[union-attr]
            _emit_group(lines, plan, child, depth + 1)
            lines.append(f"{pad}}}")
        else:
            label = f"{child.key.label}\n{child.size:,} nodes"  # type: ignore[union-attr]
            lines.append(pad + _box_line(child.id, label, FOLDED_STYLE))
    for box in plan.repeats.get(group.id, ()):
        names = repeat_label([m.key.label for m in box.members if m.key])
        lines.append(pad + _box_line(box.id, f"{names}\nx{len(box.members)}, each like the one drawn · {box.size:,} nodes", REPEAT_STYLE))


def repeat_label(labels: Sequence[str]) -> str:
    """``layers.1 (L)``, ``layers.2 (L)``, ``layers.4 (L)`` -> ``layers.1-2, 4 (L)``."""
    matches = [INDEXED.match(label) for label in labels]
    if len(labels) == 1 or not all(matches):
        return labels[0] if len(labels) == 1 else f"{labels[0]} … {labels[-1]}"
    numbers = [int(m["index"]) for m in matches]  # type: ignore[index]
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    text = ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)
    return f"{matches[0]['head']}{text}{matches[0]['tail'] or ''}"  # type: ignore[index]


def _shown(plan: FoldPlan, group: Group) -> bool:
    return not plan.hidden or group.id in plan.open


def _box_line(box_id: str, label: str, style: dict[str, str]) -> str:
    attrs = {"label": label, **style}
    return f"{quote(box_id)} [" + ", ".join(f"{k}={quote(v)}" for k, v in attrs.items()) + "];"


def _missing_producer_lines(leaves: Sequence[Leaf], plan: FoldPlan) -> list[str]:
    """Inputs naming a node the graph does not have: drawn red, so they are not missed."""
    known = {leaf.key for leaf in leaves}
    missing = dict.fromkeys(p for leaf in leaves if leaf.key not in plan.hidden for p, _ in leaf.inputs if p not in known)
    border = PALETTE["red"][1]
    return [
        f'  {quote(p)} [label={quote(p + chr(10) + "(not in graph)")}, style="dashed", color={quote(border)}, fontcolor={quote(border)}];'
        for p in missing
    ]


# ---------------------------------------------------------------- a trace's pictures


def stage_picture(graph: GraphTrace, stage: str, model: str = "", options: FoldOptions | None = None) -> Picture | None:
    """The folded picture of one stage of one graph (None when the trace lacks it)."""
    if stage == ASCEND_IR:
        if graph.ir is None:
            return None
        leaves = ir_leaves(graph, graph.ir)
    elif stage in graph.stages:
        leaves = fx_leaves(graph, stage)
    else:
        return None
    options = options or FoldOptions()
    plan = fold(leaves, options)
    title = f"{model} · graph {graph.index} · {stage}".lstrip(" ·")
    if options.focus is not None and not plan.drawn:
        return Picture(graph.index, stage, "", plan.total, 0, [f"no node {options.focus!r} in graph {graph.index} {stage}"])
    dot_text = folded_dot(leaves, plan, f"graph_{graph.index}_{stage}", title)
    return Picture(graph.index, stage, dot_text, plan.total, plan.drawn, plan.notes, plan.expanded)


def trace_pictures(trace: Trace, options: FoldOptions | None = None) -> list[Picture]:
    """Every recorded stage of every graph, in stage order (a stage without the
    ``--focus`` node has no DOT text); a ``--expand`` or ``--focus`` that names nothing
    in any of them is refused."""
    model = short_source(trace.model + ":").rstrip(":")
    pictures = [p for graph in trace.graphs for stage in trace.stages if (p := stage_picture(graph, stage, model, options)) is not None]
    if options is not None:
        _check_names(options, pictures)
    return pictures


def _check_names(options: FoldOptions, pictures: Sequence[Picture]) -> None:
    unknown = [name for name in options.expand if not any(name in p.expanded for p in pictures)]
    if unknown:
        raise UsageError(
            f"--expand {', '.join(unknown)}: no such module in any stage. Give a module path as the pictures' boxes name it (e.g. layers.0 or layers.0.attn)."
        )
    if options.focus is not None and not any(p.dot for p in pictures):
        raise UsageError(
            f"--focus {options.focus}: no node or GE op of that name in any stage. Give a node name as the stage code shows it (e.g. add_3)."
        )
