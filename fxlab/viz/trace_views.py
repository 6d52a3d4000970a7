"""Rich renderables for ``fxlab trace``: each stage as readable code with in-place ops,
``copy_`` epilogues, ``auto_functionalized*`` nodes and scopes highlighted; the Ascend IR
per FX node; and the one-screen summary. Renderers return data; the CLI prints."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from fxlab.capture.serialize import call_to_json
from fxlab.capture.trace import GraphTrace, StageTrace, Trace
from fxlab.viz.call_views import calls_view
from fxlab.viz.fast_lines import Cell, LinesPanel, LinesTable, StyledLine
from fxlab.viz.pass_views import streams_lines
from fxlab.escape import one_line
from fxlab.viz.safe_text import plain, visible
from fxlab.stage_names import ACLGRAPH, ASCEND_IR, ATEN, DYNAMO, FUNCTIONAL, PRE_GE
from fxlab.passes.torchair_options import MAX_AUTOTUNE

KIND_STYLE = {
    "inplace": ("bold yellow", "in-place"),
    "copy_epilogue": ("bold magenta", "copy_ epilogue: writes a graph input"),
    "auto_functionalized": ("bold cyan", "auto_functionalized"),
    "scope": ("bold green", "scope marker"),
}
SCOPE_KEYS_SHOWN = ("_super_kernel_scope", "_op_aicore_num", "_op_vectorcore_num", "_user_stream_label", "_op_exec_never_timeout")
STAGE_TITLES = {
    DYNAMO: "Dynamo graph (torch level)",
    ATEN: "ATen graph before functionalization",
    FUNCTIONAL: "ATen graph after functionalization (what TorchAir converts)",
    PRE_GE: "after TorchAir's passes before conversion (what its converters walk)",
    ACLGRAPH: "after TorchAir's aclgraph passes (what is captured as an ACL graph: reduce-overhead, npugraph_ex)",
}

# Stages longer than this are shown without syntax colouring: highlighting costs about
# 0.2 ms a line, a second for a transformers model's five stages of ~1000 lines each.
SYNTAX_HIGHLIGHT_MAX_LINES = 300
_ASSIGN = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::\s*\"[^\"]*\")?\s*=")


def stage_view(graph: GraphTrace, stage: StageTrace, fast_from_lines: int = SYNTAX_HIGHLIGHT_MAX_LINES) -> RenderableType:
    """A stage's code, syntax-highlighted, with notable lines marked at the end. From
    ``fast_from_lines`` lines on it is shown uncoloured through a cheaper renderable
    (highlighting and rich's per-line wrapping cost seconds on a large graph)."""
    marks = {n.name: n for n in stage.nodes if n.kind or n.scopes}
    code = visible(relative_paths(stage.code.rstrip()))
    title = f"graph {graph.index} · {stage.name}: {STAGE_TITLES.get(stage.name, stage.name)}"
    if code.count("\n") >= fast_from_lines:
        lines = [_styled_line(line, marks) for line in code.split("\n")]
        return LinesPanel([*lines, StyledLine("")], title, "blue")  # the rich path ends in a blank line too
    text = Syntax(code, "python", theme="ansi_dark", background_color="default").highlight(code)
    out = Text()
    for line in text.split("\n", include_separator=False):
        marked = _styled_line(line.plain, marks)
        if marked.style:
            line.stylize(marked.style)
        if marked.tag:
            line.append(marked.tag, style=marked.tag_style)
        out.append_text(line)
        out.append("\n")
    return Panel(out, title=Text(title), title_align="left", border_style="blue")


def _styled_line(line: str, marks: dict[str, Any]) -> StyledLine:
    """A code line with the style and ``# <- ...`` tag of the node it assigns, if marked."""
    match = _ASSIGN.match(line) if "=" in line else None
    node = marks.get(match.group(1)) if match else None
    if node is None:
        return StyledLine(line)
    style, label = KIND_STYLE.get(node.kind, ("", ""))
    tags = [label] if label else []
    tags += [scope_tag(s) for s in node.scopes]
    return StyledLine(line, style, f"   # <- {'; '.join(t for t in tags if t)}", style or "green")


def relative_paths(text: str) -> str:
    """Source paths under the working directory, shown relative to it."""
    cwd = os.getcwd().rstrip(os.sep) + os.sep
    return text.replace(cwd, "")


def scope_tag(scope: dict[str, Any]) -> str:
    attrs = scope.get("attrs", scope)  # a scope frame from annotate_scopes, or bare attrs
    shown = [f"{k.strip('_')}={one_line(str(v))}" for k, v in attrs.items() if k in SCOPE_KEYS_SHOWN]  # a tag ends its line
    return "[" + ", ".join(shown) + "]" if shown else ""


IR_HEADERS = ["FX node", "GE ops (type:name)", "scope / core attrs", "source"]
IR_COLUMN_STYLES = ["", "", "green", "dim"]


def ir_view(graph: GraphTrace) -> RenderableType:
    """Which GE ops each FX node of the functional graph became, with scope attrs."""
    ir = graph.ir
    if ir is None:
        return Text("")
    rows = []
    for fx_node, ops in _ops_by_fx_node(ir.ops):
        labels = tuple((visible(label), style) for label, style in map(_op_label, ops))
        words = tuple((f"{label}," if i < len(labels) - 1 else label, style) for i, (label, style) in enumerate(labels))
        attrs = sorted({f"{k}={op.attrs[k].value}" for op in ops for k in SCOPE_KEYS_SHOWN if k in op.attrs})
        rows.append(
            [
                Cell.plain(visible(fx_node)),
                Cell(words),
                _words(one_line(", ".join(attrs))),
                Cell.plain(visible(_short_source(ops[0].source))),
            ]
        )
    table = LinesTable(f"graph {graph.index} · ascend_ir: {len(ir.ops)} GE ops", IR_HEADERS, rows, IR_COLUMN_STYLES, wrap_column=1)
    conversion = graph.conversion
    notes = []
    if conversion is not None and conversion.assigns_to_outputs:
        options = "; ".join(f"{k}={v!r}" for k, v in conversion.ge_options.items())
        notes.append(
            plain(
                f"{len(conversion.assigns_to_outputs)} Assign(s) into graph inputs became graph outputs "
                f"that GE writes into the inputs' memory ({options})",
                style="magenta",
            )
        )
    # Graph outputs TorchAir makes on the host (views of inputs, sizes): not in NetOutput.
    notes += [plain(f"host output: {note}", style="magenta") for note in (conversion.host_outputs if conversion else [])]
    return Group(table, *notes) if notes else table


def _words(text: str) -> Cell:
    return Cell(tuple((word, "") for word in text.split(" ") if word))


STATUS_STYLE = {
    "converted": "green",
    "auto": "cyan",
    "marker": "dim",
    "unsupported": "bold red",
    "raised": "bold red",
    "refused": "bold red",
}


def conversion_view(graph: GraphTrace) -> RenderableType:
    """Every ATen op of the functional graph: count, conversion status, signatures
    (TorchAir's ``fx_summary``, without compiling anything)."""
    if graph.conversion is None:
        return Text("")
    rows = [r for r in graph.conversion.summary if r.status != "marker"]
    table = Table(title=f"graph {graph.index} · ATen ops and their conversion", title_justify="left")
    for column in ("ATen op", "count", "status", "input signatures", "output signatures"):
        table.add_column(column, justify="right" if column == "count" else "left")
    for row in rows:
        status = row.status + (f": {row.messages[0]}" if row.messages and row.status in ("unsupported", "raised", "refused") else "")
        table.add_row(
            plain(row.target), str(row.count), plain(status, style=STATUS_STYLE.get(row.status, "")), _top(row.inputs), _top(row.outputs)
        )
    return table


def _top(signatures: dict[str, int]) -> Text:
    ordered = sorted(signatures.items(), key=lambda item: -item[1])
    shown = [f"{n}x {sig}" if len(ordered) > 1 else sig for sig, n in ordered[:2]]
    return plain("\n".join(shown) + (f"\n(+{len(ordered) - 2} more)" if len(ordered) > 2 else ""))


def _op_label(op: Any) -> tuple[str, str]:
    """An op's label and style. TorchAir names ops Type, Type_1, ...: the name alone says
    the type then."""
    label = op.name if op.name == op.type or op.name.startswith(op.type + "_") else f"{op.type}:{op.name}"
    return label, "bold red" if op.type == "FxlabUnsupported" else ""


def _ops_by_fx_node(ops: Iterable[Any]) -> list[tuple[str, list[Any]]]:
    groups: dict[str, list[Any]] = {}
    for op in ops:
        groups.setdefault(op.fx_node or "?", []).append(op)
    return list(groups.items())


def _short_source(source: str | None) -> str:
    if not source:
        return ""
    path, _, line = source.rpartition(":")
    return f"{path.rsplit('/', 1)[-1]}:{line}"


SUMMARY_HEADERS = {ASCEND_IR: f"{ASCEND_IR}\nGE ops"}


def summary_view(trace: Trace) -> RenderableType:
    """One screen: ops (call nodes, inputs and outputs aside) per stage and in-place ops before vs after functionalization per
    graph in a table of numbers only (it fits 80 columns with every stage), then each
    graph's mutated inputs, rewrites and graph break as lines, and the eager checks."""
    table = Table(
        title=plain(f"fxlab trace · {relative_paths(trace.model)}", style="table.title"),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    table.add_column("graph", justify="right")
    for stage in trace.stages:
        table.add_column(SUMMARY_HEADERS.get(stage, f"{stage}\nops"), justify="right", no_wrap=True)
    acl = ACLGRAPH in trace.stages
    table.add_column("in-place ops\naten → func." + (" → acl" if acl else ""), justify="center", no_wrap=True)
    for graph in trace.graphs:
        table.add_row(str(graph.index), *_stage_counts(trace, graph), _inplace_change(graph, acl))
    details = [line for graph in trace.graphs for line in _graph_details(graph)]
    return Group(table, *_mode_lines(trace), *details, *calls_view(trace), *_check_lines(trace))


def _mode_lines(trace: Trace) -> list[Text]:
    """The TorchAir mode the trace followed, and every option the user set."""
    lines = [plain(f"mode: {trace.mode}" + (" (TorchAir's aclgraph path)" if trace.mode != MAX_AUTOTUNE else " (GE graph)"))]
    lines += [plain(f"set: {option}", style="cyan") for option in trace.options_set]
    return lines


def _graph_details(graph: GraphTrace) -> list[Text]:
    lines = []
    functional = graph.stages.get(FUNCTIONAL)
    rewrites = [
        f"{functional.count(kind)} {label}"
        for kind, label in (("auto_functionalized", "auto_functionalized"), ("copy_epilogue", "copy_ epilogue(s)"))
        if functional is not None and functional.count(kind)
    ]
    if graph.mutated_inputs or rewrites:
        written = f"inputs written in place: {', '.join(graph.mutated_inputs)}" if graph.mutated_inputs else "no input written in place"
        lines.append(plain(f"graph {graph.index}: {written}" + (f" ({', '.join(rewrites)})" if rewrites else "")))
    for entry in graph.patterns:
        count = len(entry.get("matches", []))
        style = "yellow" if not count else ""
        lines.append(
            plain(
                f"graph {graph.index}: pattern {entry['pattern']}: {count} match(es)" + ("" if count else " (it matched nothing)"),
                style=style,
            )
        )

    lines += streams_lines(graph)
    if graph.torchair_aclgraph is not None:
        same = graph.torchair_aclgraph.get("same")
        verdict = "the same graph as fxlab's" if same else "a different graph (see above)"
        lines.append(plain(f"graph {graph.index}: TorchAir's own aclgraph passes: {verdict}", style="green" if same else "bold yellow"))
    if graph.break_reason:
        where = f" at {_short_source(graph.break_location)}" if graph.break_location else ""
        lines.append(plain(f"graph {graph.index}: graph break{where}: {graph.break_reason.splitlines()[0]}", style="yellow"))
    return lines + conversion_lines(graph)


def conversion_lines(graph: GraphTrace) -> list[Text]:
    """The ops the conversion left out, with why; the ops converted by TorchAir's
    auto-converter rule, with the GE type assumed and whether its prototype was found."""
    conversion = graph.conversion
    if conversion is None:
        return []
    lines = [
        plain(f"graph {graph.index}: {entry['op']} ({_nodes(entry['nodes'])}): {entry['reason'] or entry['status']}", style="red")
        for entry in conversion.not_converted
    ]
    for entry in conversion.auto_converted:
        found = "its Ascend C prototype found" if entry["prototype"] else "no Ascend C prototype found, so the GE op is assumed"
        lines.append(
            plain(
                f"graph {graph.index}: {entry['op']} ({_nodes(entry['nodes'])}), {_definer(entry)}, auto-converted as TorchAir's "
                f"auto converter would: GE op {entry['ge_type']}, {found}",
                style="cyan" if entry["prototype"] else "yellow",
            )
        )
    return lines


def _definer(entry: dict[str, Any]) -> str:
    """Whose custom op it is: an installed library's keeps no assumed GE op (the
    conversion refuses it without its prototype), the user's own does."""
    who = "a custom op of an installed library" if entry.get("defined_by") == "library" else "the user's own custom op"
    where = entry.get("defined_at")
    return f"{who} ({_short_source(where)})" if where else who


def _nodes(count: int) -> str:
    return f"{count} node{'s' if count != 1 else ''}"


def _stage_counts(trace: Trace, graph: GraphTrace) -> list[str | Text]:
    counts = []
    for stage in trace.stages:
        if stage == ASCEND_IR:
            partial = graph.partial
            counts.append(Text.assemble(str(len(graph.ir.ops)), (" (partial)" if partial else "", "red")) if graph.ir else "-")
        else:
            counts.append(str(len(graph.stages[stage].call_nodes())) if stage in graph.stages else "-")
    return counts


def _inplace_change(graph: GraphTrace, aclgraph: bool = False) -> str:
    def count(stage: str) -> str:
        s = graph.stages.get(stage)
        return str(s.count("inplace")) if s else "-"

    return f"{count(ATEN)} → {count(FUNCTIONAL)}" + (f" → {count(ACLGRAPH)}" if aclgraph else "")


def _check_lines(trace: Trace) -> list[RenderableType]:
    lines: list[RenderableType] = []
    # With several calls these are the first call's checks; each later call's are in its block.
    first = " (call 0)" if len(trace.calls) > 1 else ""
    for label, check in trace.checks():
        lines.append(_verdict_line(label + (first if check is not trace.user_pass_check else ""), check))
        lines += [plain(f"  note: {note}", style="dim") for note in check.notes]
    for graph in trace.graphs:
        if graph.error:
            lines.append(plain(f"graph {graph.index}: {graph.error}", style="yellow"))
    lines += [plain(problem, style="yellow") for problem in trace.problems]
    for note in trace.notes:
        lines.append(plain(note, style="dim"))
    status_style = {"ok": "bold green", "unverified": "bold cyan", "partial": "bold yellow"}.get(trace.status, "bold red")
    lines.append(Text.assemble(("status: ", ""), (trace.status, status_style)))
    return lines


def _verdict_line(label: str, check: Any) -> Text:
    style = "bold red" if check.failed else ("yellow" if check.skipped or check.not_run else "green")
    return Text.assemble((f"{label}: ", ""), (visible(check.verdict), style))


def json_summary(trace: Trace, out_dir: str | None = None) -> dict[str, Any]:
    """The machine-readable summary printed by ``fxlab trace --json``."""
    graphs = []
    for graph in trace.graphs:
        stages = {
            name: {
                "nodes": len(stage.nodes),
                "ops": len(stage.call_nodes()),
                "inplace": stage.count("inplace"),
                "auto_functionalized": stage.count("auto_functionalized"),
                "copy_epilogue": stage.count("copy_epilogue"),
            }
            for name, stage in graph.stages.items()
        }
        graphs.append(
            {
                "index": graph.index,
                "break_reason": graph.break_reason,
                "break_location": graph.break_location,
                "stages": stages,
                "mutated_inputs": graph.mutated_inputs,
                ASCEND_IR: _ir_json(graph) if graph.ir else None,
                "passes": {
                    name: [{"pass": r.name, "changed": r.changed, "origin": r.origin} for r in records]
                    for name, records in graph.passes.items()
                },
                "patterns": [{"pattern": p["pattern"], "matches": len(p.get("matches", []))} for p in graph.patterns],
                "torchair_aclgraph": graph.torchair_aclgraph,
                "streams": graph.streams,
                "error": graph.error,
            }
        )
    return {
        "model": trace.model,
        "entry": trace.entry,
        "status": trace.status,
        "torch_version": trace.torch_version,
        "fxlab_version": trace.fxlab_version,
        "mode": trace.mode,
        "options_set": trace.options_set,
        "check": _check_json(trace.check),
        "ir_check": _check_json(trace.ir_check),
        "aclgraph_check": _check_json(trace.aclgraph_check),
        "user_pass_check": _check_json(trace.user_pass_check),
        "notes": trace.notes,
        "problems": trace.problems,
        "graphs": graphs,
        **_calls_json(trace),
        "out": out_dir,
    }


def _ir_json(graph: GraphTrace) -> dict[str, Any]:
    """The GE graph's size and types, and what its conversion said (its summary aside)."""
    assert graph.ir is not None
    conversion = graph.conversion
    said = {k: v for k, v in vars(conversion).items() if k != "summary"} if conversion is not None else {}
    return {"types": graph.ir.types, **said, "ops": len(graph.ir.ops)}


def _calls_json(trace: Trace) -> dict[str, Any]:
    """The compile options the model asked for, and the calls when there was more than
    one (a warm-up, or a dynamic graph checked at a second size)."""
    extra: dict[str, Any] = {}
    if trace.compile_options:
        extra["compile_options"] = dict(trace.compile_options)
    if len(trace.calls) > 1:
        extra["calls"] = [call_to_json(call) for call in trace.calls]
    return extra


def _check_json(check: Any) -> dict[str, Any] | None:
    if check is None:
        return None
    return {
        "ok": check.ok,
        "verdict": check.verdict,
        "compared": check.compared,
        "max_abs_diff": check.max_abs_diff,
        "mismatches": check.mismatches,
        "refused": check.refused,
        "skipped": check.skipped,
        "not_run": check.not_run,
        "approximations": check.approximations,
        "notes": check.notes,
    }
