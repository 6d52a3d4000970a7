"""Graphviz DOT text for FX stages and the Ascend IR; returns text, never prints.

FX stage: one box per node, labelled with its name, target and output dtype/shape;
in-place ops, ``copy_`` epilogues, ``auto_functionalized*`` nodes and scope markers are
filled in the colours the console views use (``trace_views.KIND_STYLE``); nodes inside
``air::scope_enter``/``scope_exit`` pairs sit in nested clusters, one per scope.

Ascend IR: one box per GE op (type, name, output desc, core limits, ``Const`` values);
edges from ``"producer:idx"`` inputs, dashed for control edges (``"producer:-1"``); the ops
one FX node became share a cluster, and those sit inside a coloured cluster per
SuperKernel scope. ``FxlabUnsupported`` ops are red.

Both emitters walk the graph once and emit in graph order, so the text is deterministic
and linear in the size of the graph. They draw every node; a trace's pictures fold the
big graphs first (``viz/pictures.py``), reusing the node lines and scope styles here.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Iterable, Iterator, Mapping, Sequence


from fxlab.capture.trace import StageTrace, TensorMeta
from fxlab.escape import visible
from fxlab.ir.model import UNKNOWN_RANK, IrGraph, IrOp, TensorDesc
from fxlab.viz.trace_views import KIND_STYLE
from fxlab.stage_names import ASCEND_IR

# (fill, border) for each console colour name used by KIND_STYLE, plus red for errors.
PALETTE: dict[str, tuple[str, str]] = {
    "yellow": ("#fff3b0", "#b8860b"),
    "magenta": ("#f9d0f3", "#a3229a"),
    "cyan": ("#c9f1f7", "#13889a"),
    "green": ("#d3f2cc", "#2e7d32"),
    "blue": ("#d0defa", "#1f4fb4"),
    "red": ("#f8c4c4", "#c62828"),
    "bright_magenta": ("#eadcff", "#6a3ab2"),
}
# kind -> (fill, border, short label), derived from the console styles so both agree.
KIND_COLOURS: dict[str, tuple[str, str, str]] = {
    kind: (*PALETTE[style.split()[-1]], label.split(":")[0]) for kind, (style, label) in KIND_STYLE.items()
}
# SuperKernel scopes get the colour the console gives the same name (viz/scopes.py's rule).
SCOPE_COLOUR_NAMES = ("magenta", "green", "blue", "cyan", "yellow", "bright_magenta")
UNSUPPORTED_OP_TYPE = "FxlabUnsupported"
MAX_OUTPUTS_SHOWN = 3
MAX_VALUE_CHARS = 24
LARGE_GRAPH_NODES = 400

_HEADER = (
    '  graph [fontname="Helvetica", fontsize=11, labelloc=t, labeljust=l];',
    '  node [shape=box, style="rounded,filled", fillcolor="white", fontname="Helvetica", fontsize=10];',
    '  edge [fontname="Helvetica", fontsize=9, color="#555555"];',
)


def quote(text: str) -> str:
    """A DOT double-quoted string; newlines become centred line breaks, bidi and
    control characters show as ``\\uXXXX`` (they would reorder the picture's text)."""
    return '"' + visible(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def scope_colour(name: str) -> tuple[str, str]:
    return PALETTE[SCOPE_COLOUR_NAMES[sum(map(ord, name)) % len(SCOPE_COLOUR_NAMES)]]


def _attr_list(attrs: Mapping[str, str]) -> str:
    return "[" + ", ".join(f"{k}={quote(v)}" for k, v in attrs.items()) + "]"


def open_graph(name: str, title: str, node_count: int) -> list[str]:
    lines = [f"digraph {quote(name)} {{", *_HEADER]
    if node_count > LARGE_GRAPH_NODES:
        # dot's network-simplex passes dominate on big graphs (a 900-node stage: ~20 s
        # unbounded, <2 s bounded) and the bounded layout reads as well.
        lines.append("  graph [nslimit=2, nslimit1=2];")
    if title:
        lines.append(f"  label={quote(title)};")
    return lines


# ---------------------------------------------------------------- FX stages


@dataclass
class FxNodeView:
    """What the picture of one FX node needs, from a live GraphModule or saved data."""

    name: str
    op: str
    target: str
    outputs: list[TensorMeta]
    kind: str = ""
    scopes: list[dict[str, Any]] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)


def fx_node_views(stage: StageTrace) -> list[FxNodeView]:
    """One view per recorded node, its edges from the node's inputs."""
    return [FxNodeView(r.name, r.op, r.target, r.outputs, r.kind, r.scopes, list(r.inputs)) for r in stage.nodes]


def fx_stage_dot(stage: StageTrace, name: str = "fx", title: str = "") -> str:
    """DOT text of one recorded FX stage."""
    views = fx_node_views(stage)
    lines = open_graph(name, title, len(views))
    layout_edges: list[str] = []
    _emit_scope_tree(lines, _scope_tree(views), 1, layout_edges)
    quoted = {view.name: quote(view.name) for view in views}  # each name is in several edges
    for view in views:
        dst = quoted[view.name]
        lines.extend(f"  {quoted.get(src) or quote(src)} -> {dst};" for src in view.inputs)
    lines.extend(layout_edges)
    lines.append("}")
    return "\n".join(lines) + "\n"


def fx_node_line(view: FxNodeView) -> str:
    label = [view.name]
    if view.op not in ("placeholder", "output", "get_attr"):
        label.append(view.target)
    if len(view.outputs) == 1:
        label.append(meta_signature(view.outputs[0]))
    elif view.outputs:
        label.append(_signatures([meta_signature(m) for m in view.outputs]))
    attrs: dict[str, str] = {}
    if view.op == "placeholder":
        attrs["shape"] = "ellipse"
    elif view.op == "output":
        attrs["shape"] = "house"
    if view.kind in KIND_COLOURS:
        fill, border, kind_label = KIND_COLOURS[view.kind]
        label.append(kind_label)
        attrs.update(fillcolor=fill, color=border, penwidth="2")
    if not attrs:  # most nodes: no need to build the attribute list
        return f"{quote(view.name)} [label={quote(chr(10).join(label))}];"
    return f"{quote(view.name)} {_attr_list({'label': chr(10).join(label), **attrs})};"


def meta_signature(meta: TensorMeta) -> str:
    """``float32[2, 8]``, as ``TensorMeta.signature``; a graph has few distinct ones."""
    return _signature_of(meta.dtype, tuple(meta.shape))


@functools.lru_cache(maxsize=4096)
def _signature_of(dtype: str, shape: tuple[int | str, ...]) -> str:
    return f"{dtype}[{', '.join(map(str, shape))}]"


def _signatures(signatures: Sequence[str]) -> str:
    shown = list(signatures[:MAX_OUTPUTS_SHOWN])
    if len(signatures) > MAX_OUTPUTS_SHOWN:
        shown.append(f"(+{len(signatures) - MAX_OUTPUTS_SHOWN} more)")
    return ", ".join(shown)


@dataclass
class _ScopeCluster:
    frame: dict[str, Any] | None
    children: dict[Any, _ScopeCluster] = field(default_factory=dict)
    nodes: list[FxNodeView] = field(default_factory=list)


def _scope_tree(views: Iterable[FxNodeView]) -> _ScopeCluster:
    """Scopes nest as a stack, so each node's frame list is a path in one tree."""
    root = _ScopeCluster(frame=None)
    for view in views:
        cluster = root
        for position, frame in enumerate(view.scopes):
            key = frame.get("index", position)
            cluster = cluster.children.setdefault(key, _ScopeCluster(frame=frame))
        cluster.nodes.append(view)
    return root


def _emit_scope_tree(lines: list[str], cluster: _ScopeCluster, depth: int, layout_edges: list[str]) -> None:
    pad = "  " * depth
    lines.extend(pad + fx_node_line(view) for view in cluster.nodes)
    for key, child in cluster.children.items():
        lines.append(f"{pad}subgraph {quote(f'cluster_scope_{key}')} {{")
        lines.extend(f"{pad}  {line};" for line in scope_cluster_style(child.frame or {}))
        _emit_scope_tree(lines, child, depth + 1, layout_edges)
        lines.append(f"{pad}}}")
        layout_edges.extend(_marker_layout_edges(child.nodes))


def _marker_layout_edges(members: Sequence[FxNodeView]) -> list[str]:
    """Markers have no data edges; invisible edges draw a scope's scope_enter at its top
    and its scope_exit at its bottom."""
    edges = []
    for position, view in enumerate(members):
        if view.kind != "scope":
            continue
        is_enter = "scope_enter" in view.target
        neighbour = position + 1 if is_enter else position - 1
        if 0 <= neighbour < len(members) and (is_enter or members[neighbour].kind != "scope"):
            src, dst = (view, members[neighbour]) if is_enter else (members[neighbour], view)
            edges.append(f'  {quote(src.name)} -> {quote(dst.name)} [style="invis"];')
    return edges


def scope_cluster_style(frame: Mapping[str, Any]) -> list[str]:
    """Label and colours of one scope frame's cluster."""
    attrs: Mapping[str, str] = frame.get("attrs", frame)
    title = f"scope {frame['index']}" if "index" in frame else "scope"
    lines = [title, *scope_attr_lines(attrs)]
    sk_name = attrs.get("_super_kernel_scope")
    if sk_name:
        fill, border = scope_colour(sk_name)
        style = {"style": "filled,rounded", "fillcolor": fill, "color": border}
    else:
        style = {"style": "dashed,rounded", "color": "#777777"}
    return [f"label={quote(chr(10).join(lines))}", *(f"{k}={quote(v)}" for k, v in style.items())]


def scope_attr_lines(attrs: Mapping[str, str]) -> list[str]:
    """The pushed attrs in words: SuperKernel name and options, core limits, others."""
    lines = []
    if "_super_kernel_scope" in attrs:
        name = attrs["_super_kernel_scope"]
        lines.append(f"SuperKernel {name}" if name else "no SuperKernel (super_kernel(None))")
        if attrs.get("_super_kernel_options"):
            lines.append(attrs["_super_kernel_options"])
    if "_op_aicore_num" in attrs or "_op_vectorcore_num" in attrs:
        lines.append(core_limit_text(attrs.get("_op_aicore_num"), attrs.get("_op_vectorcore_num")))
    shown = {"_super_kernel_scope", "_super_kernel_options", "_op_aicore_num", "_op_vectorcore_num"}
    lines.extend(f"{k.strip('_')}={v}" for k, v in attrs.items() if k not in shown)
    return lines


def core_limit_text(aicore: Any, vectorcore: Any) -> str:
    return f"cores: aicore {aicore if aicore is not None else '-'}, vectorcore {vectorcore if vectorcore is not None else '-'}"


# ---------------------------------------------------------------- Ascend IR


def ir_graph_dot(ir: IrGraph, name: str = ASCEND_IR, title: str = "") -> str:
    """DOT text of an Ascend IR graph: ops clustered by FX node inside SuperKernel scopes."""
    lines = open_graph(name, title, len(ir.ops))
    known = {op.name for op in ir.ops}
    cluster_ids = itertools.count()
    for sk_name, fx_groups in _group_ops(ir.ops).items():
        depth = 1
        if sk_name:
            lines.append(f"  subgraph {quote(f'cluster_sk_{sk_name}')} {{")
            lines.extend(f"    {line};" for line in _sk_cluster_style(sk_name, fx_groups))
            depth = 2
        for fx_node, ops in fx_groups.items():
            _emit_fx_group(lines, fx_node, ops, depth, cluster_ids)
        if sk_name:
            lines.append("  }")
    lines.extend(_missing_producer_lines(ir.ops, known))
    for op in ir.ops:
        lines.extend(_edge_lines(op))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _group_ops(ops: Iterable[IrOp]) -> dict[str, dict[str | None, list[IrOp]]]:
    """SuperKernel scope name ('' outside any) -> FX node -> its ops, in first-seen order."""
    groups: dict[str, dict[str | None, list[IrOp]]] = {}
    for op in ops:
        sk_name = str(op.attr_value("_super_kernel_scope", "") or "")
        groups.setdefault(sk_name, {}).setdefault(op.fx_node, []).append(op)
    return groups


def _sk_cluster_style(sk_name: str, fx_groups: Mapping[str | None, list[IrOp]]) -> list[str]:
    first = next(iter(fx_groups.values()))[0]
    options = str(first.attr_value("_super_kernel_options", "") or "")
    fill, border = scope_colour(sk_name)
    label = f"SuperKernel {sk_name}" + (f"\n{options}" if options else "")
    return [f"label={quote(label)}", 'style="filled,rounded"', f"fillcolor={quote(fill)}", f"color={quote(border)}", 'penwidth="2"']


def _emit_fx_group(lines: list[str], fx_node: str | None, ops: list[IrOp], depth: int, cluster_ids: Iterator[int]) -> None:
    pad = "  " * depth
    if fx_node is None or len(ops) == 1:
        # A one-op group needs no box: the op's label names its FX node instead.
        lines.extend(pad + ir_op_line(op, fx_node if len(ops) == 1 else None) for op in ops)
        return
    source = short_source(ops[0].source)
    label = f"fx: {fx_node}" + (f"  ({source})" if source else "")
    lines.append(f"{pad}subgraph {quote(f'cluster_fx_{next(cluster_ids)}')} {{")
    lines.append(f'{pad}  label={quote(label)}; style="dashed,rounded"; color="#777777";')
    lines.extend(f"{pad}  {ir_op_line(op, None)}" for op in ops)
    lines.append(f"{pad}}}")


def ir_op_line(op: IrOp, lone_fx_node: str | None) -> str:
    label = [op.name] if op.name == op.type or op.name.startswith(op.type + "_") else [op.type, op.name]
    if op.output_desc:
        label.append(_signatures([desc_signature(d) for d in op.output_desc]))
    label.extend(_op_notes(op))
    if lone_fx_node and lone_fx_node != op.name:
        label.append(f"<- {lone_fx_node}")
    attrs = {"label": "\n".join(label), **_op_shape(op)}
    tooltip = "\n".join(t for t in (f"fx: {op.fx_node}" if op.fx_node else "", short_source(op.source)) if t)
    if tooltip:
        attrs["tooltip"] = tooltip
    return f"{quote(op.name)} {_attr_list(attrs)};"


def _op_notes(op: IrOp) -> list[str]:
    notes = []
    value = op.attr_value("_readable_value")
    if op.type == "Const" and value is not None:
        text = " ".join(str(value).split())  # a tensor's repr spans lines
        notes.append("= " + (text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 3] + "..."))
    aicore, vectorcore = op.attr_value("_op_aicore_num"), op.attr_value("_op_vectorcore_num")
    if aicore is not None or vectorcore is not None:
        notes.append(core_limit_text(aicore, vectorcore))
    if op.type == UNSUPPORTED_OP_TYPE and op.attr_value("_fxlab_unsupported"):
        notes.append(f"unsupported: {op.attr_value('_fxlab_unsupported')}")
    return notes


def _op_shape(op: IrOp) -> dict[str, str]:
    if op.type == UNSUPPORTED_OP_TYPE:
        fill, border = PALETTE["red"]
        return {"fillcolor": fill, "color": border, "fontcolor": border, "penwidth": "2"}
    if op.type == "Data":
        return {"shape": "ellipse", "fillcolor": "#eeeeee"}
    if op.type == "NetOutput":
        return {"shape": "house", "fillcolor": "#eeeeee"}
    if op.type == "Const":
        return {"fontsize": "8", "color": "#999999"}
    return {}


def desc_signature(desc: TensorDesc) -> str:
    """``FLOAT[4, 16]``; ``?`` for an unknown dim, ``[*]`` for an unknown rank."""
    dtype = desc.dtype.name.removeprefix("DT_")
    if tuple(desc.shape) == UNKNOWN_RANK:
        return f"{dtype}[*]"
    return f"{dtype}[{', '.join('?' if d == -1 else str(d) for d in desc.shape)}]"


def _edge_lines(op: IrOp) -> list[str]:
    lines = []
    for text in op.inputs:
        if not text:  # an optional input left empty
            continue
        producer, _, index = text.rpartition(":")
        if index == "-1":
            lines.append(f'  {quote(producer)} -> {quote(op.name)} [style="dashed", color="#999999"];')
        elif index not in ("0", ""):
            lines.append(f"  {quote(producer)} -> {quote(op.name)} [label={quote(index)}];")
        else:
            lines.append(f"  {quote(producer or text)} -> {quote(op.name)};")
    return lines


def _missing_producer_lines(ops: Iterable[IrOp], known: set[str]) -> list[str]:
    """Inputs naming an op the graph does not have: drawn red, so they are not missed."""
    missing: dict[str, None] = {}
    for op in ops:
        for text in op.inputs:
            producer = text.rpartition(":")[0] if ":" in text else text
            if producer and producer not in known:
                missing[producer] = None
    border = PALETTE["red"][1]
    return [
        f'  {quote(p)} [label={quote(p + chr(10) + "(not in graph)")}, style="dashed", color={quote(border)}, fontcolor={quote(border)}];'
        for p in missing
    ]


def short_source(source: str | None) -> str:
    if not source:
        return ""
    path, _, line = source.rpartition(":")
    return f"{path.replace(chr(92), '/').rsplit('/', 1)[-1]}:{line}" if path else source
