"""The pieces of Graphviz DOT text a trace's pictures (``viz/pictures.py``) are made of;
returns text, never prints.

An FX node's box: its name, target and output dtype/shape, filled in the colours the
console views use for in-place ops, ``copy_`` epilogues, ``auto_functionalized*`` nodes and
scope markers (``trace_views.KIND_STYLE``); its edges from the node's recorded inputs. A GE
op's box: type, name, output desc, core limits, ``Const`` values; ``FxlabUnsupported`` ops
in red. Scope clusters in the colour the console gives the scope's name.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Mapping, Sequence


from fxlab.capture.trace import StageTrace, TensorMeta
from fxlab.escape import visible
from fxlab.ir.model import UNKNOWN_RANK, IrOp, TensorDesc
from fxlab.viz.trace_views import KIND_STYLE

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
    control characters show as ``\\uXXXX`` (they would reorder the picture's text); ``&``
    is written ``&amp;``, as graphviz reads character entities (``&amp;``, ``&lt;``) in labels."""
    return '"' + visible(text).replace("&", "&amp;").replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


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


def _signatures(signatures: Sequence[str]) -> str:
    shown = list(signatures[:MAX_OUTPUTS_SHOWN])
    if len(signatures) > MAX_OUTPUTS_SHOWN:
        shown.append(f"(+{len(signatures) - MAX_OUTPUTS_SHOWN} more)")
    return ", ".join(shown)


@functools.lru_cache(maxsize=4096)
def _signature_of(dtype: str, shape: tuple[int | str, ...]) -> str:
    return f"{dtype}[{', '.join(map(str, shape))}]"


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


def short_source(source: str | None) -> str:
    if not source:
        return ""
    path, _, line = source.rpartition(":")
    return f"{path.replace(chr(92), '/').rsplit('/', 1)[-1]}:{line}" if path else source
