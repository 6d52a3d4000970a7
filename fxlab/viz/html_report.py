"""One self-contained HTML file for a trace: summary, checks, an interactive graph viewer
(module tree, folded graph, search, node details across stages: ``viewer/viewer.js``
with the vendored dagre layout, reading the trace as JSON embedded in the page), every
stage's code with the notable lines highlighted, the Ascend IR per FX node, scopes. No
network: styles and scripts are inline. Built as plain strings with ``html.escape``;
returns or writes text, never prints."""

from __future__ import annotations

import functools
import html
import json
import re
from pathlib import Path
from typing import Any
from collections.abc import Iterable, Sequence

from fxlab.capture.trace import CheckResult, GraphTrace, StageTrace, Trace
from fxlab.escape import BIDI_CONTROLS, LINE_SEPARATORS, visible
from fxlab.ir.model import IrGraph, IrOp
from fxlab.viz.dot import KIND_COLOURS, UNSUPPORTED_OP_TYPE, scope_attr_lines
from fxlab.viz.pass_views import PASS_LIST_TITLES
from fxlab.viz.trace_views import SCOPE_KEYS_SHOWN, STAGE_TITLES, conversion_lines, relative_paths, scope_tag
from fxlab.stage_names import ASCEND_IR, ATEN, FUNCTIONAL, GE_GRAPH_PASSES
from fxlab.viz.viewer_data import viewer_data

MAX_NODES_LISTED = 12
HERE = Path(__file__).resolve().parent
# The page's own errors, kept for the browser test (set before any other script runs).
_ERROR_TRAP = (
    "window.__fxlabErrors=[];window.addEventListener('error',function(e){window.__fxlabErrors.push(String(e.message))});"
    "(function(){var f=console.error;console.error=function(){window.__fxlabErrors.push(Array.prototype.join.call(arguments,' '));f.apply(console,arguments)}})();"
)

_ASSIGN = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::\s*\"[^\"]*\")?\s*=")
_STYLE = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; margin-top: 2em; }
h3 { font-size: 1.05em; margin-top: 1.4em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
td.num { text-align: right; }
pre.code { background: #fafafa; border: 1px solid #ddd; padding: 0.6em; overflow-x: auto; font-size: 0.82em; line-height: 1.35; }
pre.code span.line { display: block; white-space: pre; }
span.tag { color: #2e7d32; font-style: italic; }
span.unsupported { color: #c62828; font-weight: bold; }
.ok { color: #2e7d32; font-weight: bold; } .bad { color: #c62828; font-weight: bold; } .dim { color: #777; }
.partial { color: #b8860b; font-weight: bold; }
details { margin: 0.4em 0; } summary { cursor: pointer; font-weight: 600; }
span.swatch { display: inline-block; padding: 0 0.5em; margin-right: 0.6em; border-left: 4px solid; }
"""


def html_report(trace: Trace) -> str:
    title = f"fxlab trace · {_base_name(trace.model)}"
    body = [
        f"<h1>{_e(title)}</h1>",
        _header_line(trace),
        _summary_table(trace),
        _checks(trace),
        _legend(),
        viewer_section(trace),
        _contents(trace),
    ]
    body += [_graph_section(trace, graph) for graph in trace.graphs]
    return page_html(title, body)


def page_html(title: str, body: Sequence[str]) -> str:
    """A whole self-contained page: the report's styles, the viewer's, and ``body``."""
    head = f'<meta charset="utf-8"><title>{_e(title)}</title><style>{_STYLE}{_asset("viewer/viewer.css")}</style><script>{_ERROR_TRAP}</script>'
    return f'<!DOCTYPE html>\n<html lang="en">\n<head>{head}</head>\n<body>\n' + "\n".join(body) + "\n</body>\n</html>\n"


def _e(value: Any) -> str:
    # Bidi and control characters shown as \uXXXX: they would reorder what the page shows.
    return html.escape(visible(str(value)), quote=True)


def _base_name(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _anchor(graph: GraphTrace, stage: str | None = None) -> str:
    return f"graph-{graph.index}" + (f"-{stage}" if stage else "")


# ---------------------------------------------------------------- the viewer


@functools.cache
def _asset(name: str) -> str:
    """A file shipped beside this module (the viewer, the vendored layout library)."""
    return (HERE / name).read_text(encoding="utf-8")


# Bidi and C1 controls in the viewer's strings: written so that they decode to their
# visible ``\uXXXX`` text (an escaped backslash), as the rest of the report shows them.
_SCRIPT_VISIBLE = {ord(c): "\\" + visible(c) for c in BIDI_CONTROLS + LINE_SEPARATORS + "".join(map(chr, range(0x7F, 0xA0)))}


def script_json(data: object) -> str:
    """JSON that can sit inside a <script> element: no ``<`` (so no ``</script>`` or
    ``<!--``), and no raw bidi controls or line separators (shown as ``\\uXXXX``)."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").translate(_SCRIPT_VISIBLE)


def viewer_section(trace: Trace) -> str:
    """The interactive viewer: its data as JSON, dagre, and the viewer script, inline."""
    return viewer_html(viewer_data(trace))


def viewer_html(data: object) -> str:
    """The viewer over ``data`` (what :func:`fxlab.viz.viewer_data.viewer_data` returns)."""
    return (
        '<h2 id="viewer">Graph viewer</h2>\n<div id="fxlab-viewer"><p class="dim">The viewer needs JavaScript.</p></div>\n'
        f'<script type="application/json" id="fxlab-data">{script_json(data)}</script>\n'
        f"<script>{_asset('vendor/dagre.min.js')}</script>\n<script>{_asset('viewer/viewer.js')}</script>"
    )


# ---------------------------------------------------------------- summary and checks


def _header_line(trace: Trace) -> str:
    status_class = {"ok": "ok", "unverified": "partial", "partial": "partial"}.get(trace.status, "bad")
    items = [
        f"model <code>{_e(relative_paths(trace.model))}</code>",
        f"entry <code>{_e(trace.entry)}</code>",
        f"fxlab {_e(trace.fxlab_version)}",
        f"torch {_e(trace.torch_version)}",
        f'status <span class="{status_class}">{_e(trace.status)}</span>',
    ]
    return "<p>" + " · ".join(items) + "</p>"


def _summary_table(trace: Trace) -> str:
    heads = ["graph", *(f"{s} GE ops" if s == ASCEND_IR else f"{s} ops" for s in trace.stages)]
    heads += ["in-place ops aten → functional", "mutated inputs", "graph break"]
    rows = []
    for graph in trace.graphs:
        cells = [f'<td class="num"><a href="#{_anchor(graph)}">{graph.index}</a></td>']
        cells += [f'<td class="num">{_e(c)}</td>' for c in _stage_counts(trace, graph)]
        cells.append(f"<td>{_e(_inplace_change(graph))}</td>")
        cells.append(f"<td>{'<br>'.join(_e(m) for m in graph.mutated_inputs) or '-'}</td>")
        cells.append(f"<td>{_e(_break_text(graph))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    head = "<tr>" + "".join(f"<th>{_e(h)}</th>" for h in heads) + "</tr>"
    return "<h2>Summary</h2>\n<table>" + head + "".join(rows) + "</table>"


def _stage_counts(trace: Trace, graph: GraphTrace) -> list[str]:
    counts = []
    for stage in trace.stages:
        if stage == ASCEND_IR:
            partial = graph.partial
            counts.append(f"{len(graph.ir.ops)}{' (partial)' if partial else ''}" if graph.ir is not None else "-")
        else:
            counts.append(str(len(graph.stages[stage].call_nodes())) if stage in graph.stages else "-")
    return counts


def _inplace_change(graph: GraphTrace) -> str:
    def count(stage: str, kind: str) -> str:
        recorded = graph.stages.get(stage)
        return str(recorded.count(kind)) if recorded is not None else "-"

    text = f"{count(ATEN, 'inplace')} → {count(FUNCTIONAL, 'inplace')}"
    extras = [
        f"{count(FUNCTIONAL, kind)} {label}"
        for kind, label in (("auto_functionalized", "auto_functionalized"), ("copy_epilogue", "copy_ epilogue"))
    ]
    extras = [x for x in extras if not x.startswith(("0 ", "- "))]
    return text + (f" ({', '.join(extras)})" if extras else "")


def _break_text(graph: GraphTrace) -> str:
    if not graph.break_reason:
        return "-"
    reason = graph.break_reason.splitlines()[0]
    return f"{reason} at {relative_paths(graph.break_location)}" if graph.break_location else reason


def _checks(trace: Trace) -> str:
    items = []
    for label, check in (("eager vs compiled", trace.check), ("Ascend IR on CPU vs compiled", trace.ir_check)):
        if check is not None:
            items.append(f"<li>{_e(label)}: {_verdict(check)}</li>")
            items += [f'<li class="dim">note: {_e(note)}</li>' for note in check.notes]
    items += [f'<li class="partial">graph {g.index}: {_e(g.error)}</li>' for g in trace.graphs if g.error]
    items += [f'<li class="partial">{_e(problem)}</li>' for problem in trace.problems]
    items += [f'<li class="partial">{_e(line.plain)}</li>' for g in trace.graphs for line in conversion_lines(g)]
    items += [f'<li class="dim">{_e(note)}</li>' for note in trace.notes]
    return "<h2>Checks</h2>\n<ul>" + ("".join(items) or '<li class="dim">no checks recorded</li>') + "</ul>"


def _verdict(check: CheckResult) -> str:
    css = "dim" if check.skipped else ("ok" if check.ok else "bad")
    return f'<span class="{css}">{_e(check.verdict)}</span>'


def _legend() -> str:
    swatches = [
        f'<span class="swatch" style="background:{fill};border-color:{border}">{_e(label)}</span>'
        for fill, border, label in KIND_COLOURS.values()
    ]
    return "<p>Highlighted nodes: " + "".join(swatches) + "</p>"


def _contents(trace: Trace) -> str:
    items = []
    for graph in trace.graphs:
        links = [f'<a href="#{_anchor(graph, s)}">{_e(s)}</a>' for s in _stages_of(trace, graph)]
        items.append(f'<li><a href="#{_anchor(graph)}">graph {graph.index}</a>: ' + " · ".join(links) + "</li>")
    return '<h2>Contents</h2>\n<ul><li><a href="#viewer">graph viewer</a></li>' + "".join(items) + "</ul>"


def _stages_of(trace: Trace, graph: GraphTrace) -> list[str]:
    return [s for s in trace.stages if s in graph.stages or (s == ASCEND_IR and graph.ir is not None)]


# ---------------------------------------------------------------- one graph


def _graph_section(trace: Trace, graph: GraphTrace) -> str:
    parts = [f'<section id="{_anchor(graph)}">', f"<h2>graph {graph.index}</h2>"]
    if graph.break_reason:
        parts.append(f"<p>Graph break after this graph: {_e(_break_text(graph))}</p>")
    if graph.mutated_inputs:
        parts.append(f"<p>Inputs written in place: {_e(', '.join(graph.mutated_inputs))}</p>")
    for stage in _stages_of(trace, graph):
        if stage == ASCEND_IR:
            parts += [_ir_section(graph), _passes_section(graph, GE_GRAPH_PASSES)]
        else:
            parts += [_stage_section(graph, graph.stages[stage]), _passes_section(graph, stage)]
    parts.append(_scope_section(graph))
    parts.append("</section>")
    return "\n".join(p for p in parts if p)


def _passes_section(graph: GraphTrace, pass_list: str) -> str:
    """What each pass of one list did, in order (nothing when the list did not run)."""
    records = graph.pass_records(pass_list)
    if not records:
        return ""
    rows = []
    for record in records:
        who = " (user)" if record.origin == "user" else ""
        changes = [f"{sign}{_listed(getattr(record, key))}" for sign, key in (("-", "removed"), ("+", "added"), ("~", "changed_nodes"))]
        what = "; ".join(c for c in changes if not c.endswith("0")) if record.changed else "no change"
        notes = "".join(f'<br><span class="dim">{_e(note)}</span>' for note in record.notes)
        rows.append(f"<tr><td>{_e(record.name + who)}</td><td>{what or 'changed nodes in place'}{notes}</td></tr>")
    title = PASS_LIST_TITLES.get(pass_list, pass_list)
    return f"<h4>{_e(title)}</h4>\n<table><tr><th>pass</th><th>what it did</th></tr>" + "".join(rows) + "</table>"


def _stage_section(graph: GraphTrace, stage: StageTrace) -> str:
    counts = [f"{len(stage.nodes)} nodes, {len(stage.call_nodes())} ops"]
    counts += [f"{label}: {stage.count(kind)}" for kind, (_, _, label) in KIND_COLOURS.items() if stage.count(kind)]
    title = f"{stage.name}: {STAGE_TITLES.get(stage.name, stage.name)}"
    return (
        f'<h3 id="{_anchor(graph, stage.name)}">{_e(title)} <span class="dim">({_e(", ".join(counts))})</span></h3>\n'
        + highlighted_code(stage)
    )


def highlighted_code(stage: StageTrace) -> str:
    """The stage's readable code; lines defining a notable node are coloured by kind and
    tagged (in-place, copy_ epilogue, auto_functionalized, scope marker, scope attrs)."""
    marks = {n.name: n for n in stage.nodes if n.kind or n.scopes}
    lines = []
    for line in relative_paths(stage.code.rstrip()).split("\n"):
        match = _ASSIGN.match(line)
        node = marks.get(match.group(1)) if match else None
        if node is None:
            lines.append(f'<span class="line">{_e(line)}</span>')
            continue
        style = ""
        tags = []
        if node.kind in KIND_COLOURS:
            fill, border, label = KIND_COLOURS[node.kind]
            style = f' style="background:{fill};border-left:4px solid {border}"'
            tags.append(label)
        tags += [t for t in map(scope_tag, node.scopes) if t]
        tag = f'<span class="tag">   # &lt;- {_e("; ".join(tags))}</span>' if tags else ""
        lines.append(f'<span class="line"{style}>{_e(line)}{tag}</span>')
    return '<pre class="code">' + "".join(lines) + "</pre>"


def _ir_section(graph: GraphTrace) -> str:
    ir = graph.ir
    if ir is None:
        return ""
    unsupported = len(ir.ops_of_type(UNSUPPORTED_OP_TYPE))
    counts = f"{len(ir.ops)} GE ops" + (f", {unsupported} unsupported" if unsupported else "")
    parts = [
        f'<h3 id="{_anchor(graph, ASCEND_IR)}">{ASCEND_IR}: the GE graph, per FX node <span class="dim">({_e(counts)})</span></h3>',
        ir_table(ir),
        _output_reuse_note(graph),
    ]
    return "\n".join(p for p in parts if p)


def ir_table(ir: IrGraph) -> str:
    """FX node | GE ops (type:name) | scope and core-limit attrs | source line."""
    rows = []
    for fx_node, ops in _ops_by_fx_node(ir.ops):
        labels = ", ".join(_op_label(op) for op in ops)
        attrs = sorted({f"{k}={op.attrs[k].value}" for op in ops for k in SCOPE_KEYS_SHOWN if k in op.attrs})
        source = relative_paths(ops[0].source or "")
        rows.append(f'<tr><td>{_e(fx_node)}</td><td>{labels}</td><td>{_e(", ".join(attrs))}</td><td class="dim">{_e(source)}</td></tr>')
    head = "<tr><th>FX node</th><th>GE ops (type:name)</th><th>scope / core attrs</th><th>source</th></tr>"
    return "<table>" + head + "".join(rows) + "</table>"


def _ops_by_fx_node(ops: Iterable[IrOp]) -> list[tuple[str, list[IrOp]]]:
    groups: dict[str, list[IrOp]] = {}
    for op in ops:
        groups.setdefault(op.fx_node or "?", []).append(op)
    return list(groups.items())


def _op_label(op: IrOp) -> str:
    label = op.name if op.name == op.type or op.name.startswith(op.type + "_") else f"{op.type}:{op.name}"
    if op.type == UNSUPPORTED_OP_TYPE:
        reason = op.attr_value("_fxlab_reason", "")
        return f'<span class="unsupported" title="{_e(reason)}">{_e(label)}</span>'
    return _e(label)


def _output_reuse_note(graph: GraphTrace) -> str:
    conversion = graph.conversion
    if conversion is None:
        return ""
    assigns = conversion.assigns_to_outputs
    host = "".join(f"<p>Host output: {_e(note)}.</p>" for note in conversion.host_outputs)
    if not assigns:
        return host
    options = "; ".join(f"{k}={v!r}" for k, v in conversion.ge_options.items())
    return (
        f"<p>{len(assigns)} Assign(s) into graph inputs became graph outputs that GE writes into the inputs' memory ({_e(options)}).</p>"
        + host
    )


# ---------------------------------------------------------------- scopes


def _scope_section(graph: GraphTrace) -> str:
    """Each scope of the functional stage (or the first stage that has scopes): its attrs
    in words, the FX nodes inside, and the GE ops that carry its attrs."""
    stage = _stage_with_scopes(graph)
    if stage is None:
        return ""
    frames: dict[Any, dict[str, Any]] = {}
    members: dict[Any, list[str]] = {}
    for node in stage.nodes:
        for position, frame in enumerate(node.scopes):
            key = frame.get("index", position)
            frames.setdefault(key, frame)
            if node.kind != "scope":
                members.setdefault(key, []).append(node.name)
    ge_ops = graph.ir.ops_by_fx_node() if graph.ir is not None else {}
    rows = [_scope_row(key, frame, members.get(key, []), ge_ops) for key, frame in frames.items()]
    head = "<tr><th>scope</th><th>attrs</th><th>FX nodes inside</th><th>GE ops converted from them</th></tr>"
    return f"<h3>scopes ({_e(stage.name)} stage)</h3>\n<table>" + head + "".join(rows) + "</table>"


def _stage_with_scopes(graph: GraphTrace) -> StageTrace | None:
    ordered = [graph.stages[s] for s in (FUNCTIONAL, *graph.stages) if s in graph.stages]
    return next((s for s in ordered if any(n.scopes for n in s.nodes)), None)


def _scope_row(key: Any, frame: dict[str, Any], nodes: Sequence[str], ge_ops: dict[str, list[str]]) -> str:
    attrs = frame.get("attrs", frame)
    words = "<br>".join(_e(line) for line in scope_attr_lines(attrs)) or "-"
    ops = [name for node in nodes for name in ge_ops.get(node, [])]
    return (
        f'<tr><td>{_e(key)} <span class="dim">{_e(frame.get("enter", ""))}</span></td><td>{words}</td>'
        f"<td>{_listed(nodes)}</td><td>{_listed(ops) if ge_ops else '-'}</td></tr>"
    )


def _listed(names: Sequence[str]) -> str:
    shown = ", ".join(names[:MAX_NODES_LISTED])
    more = f" … (+{len(names) - MAX_NODES_LISTED})" if len(names) > MAX_NODES_LISTED else ""
    return f"{len(names)}: {_e(shown)}{_e(more)}" if names else "0"
