"""Rich renderables for scopes: coloured scope tags for node listings, and the
``fxlab scopes`` report. Returns renderables; never prints."""

from __future__ import annotations

from typing import Any
from collections.abc import Mapping, Sequence

from fxlab.escape import one_line
from fxlab.viz.safe_text import plain, visible
from fxlab.viz.trace_views import relative_paths
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from fxlab.reports.scope_report import Finding, ScopeReport, Segment, SuperKernelScope

_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_SCOPE_COLOURS = ("magenta", "green", "blue", "cyan", "yellow", "bright_magenta")


def _colour(name: str) -> str:
    return _SCOPE_COLOURS[sum(map(ord, name)) % len(_SCOPE_COLOURS)]


def scope_tag(frames: Sequence[Mapping[str, Any]]) -> Text:
    """Tags for a node's scope stack (``node.meta["fxlab.scopes"]``), outer first:
    ``sk:name``, ``sk:-`` (a None hole), ``cores 8|16``, ``never-timeout``, ``stream:s1``."""
    tag = Text()
    for frame in frames:
        attrs = frame.get("attrs", frame)
        for label, style in _frame_labels(attrs):
            if tag:
                tag.append(" ")
            tag.append(f"[{one_line(label)}]", style=style)
    return tag


def _frame_labels(attrs: Mapping[str, str]) -> list[tuple[str, str]]:
    labels = []
    if "_super_kernel_scope" in attrs:
        name = attrs["_super_kernel_scope"]
        labels.append((f"sk:{name}" if name else "sk:-", _colour(name) if name else "dim"))
    if "_op_aicore_num" in attrs or "_op_vectorcore_num" in attrs:
        labels.append((f"cores {attrs.get('_op_aicore_num', '?')}|{attrs.get('_op_vectorcore_num', '?')}", "bold"))
    if attrs.get("_op_exec_never_timeout") == "True":
        labels.append(("never-timeout", "dim"))
    if "_user_stream_label" in attrs:
        labels.append((f"stream:{attrs['_user_stream_label']}", "blue"))
    known = {
        "_super_kernel_scope",
        "_super_kernel_options",
        "_op_aicore_num",
        "_op_vectorcore_num",
        "_op_exec_never_timeout",
        "_user_stream_label",
        "_user_stream_priority",
        "_enable_inner_parallel",
    }
    labels.extend((f"{k}={v}", "dim") for k, v in attrs.items() if k not in known)
    return labels


def render_scope_report(report: ScopeReport) -> RenderableType:
    parts: list[RenderableType] = [_header(report)]
    if not report.super_kernels and not report.core_limits and not any(g.annotation.spans for g in report.graphs):
        parts.append(Text("No scopes in this model (no torchair.scope / fxlab.scope markers were traced).", style="dim"))
    for scope in report.super_kernels:
        parts.append(_super_kernel_table(scope))
    if report.empty_scopes:
        parts.append(_empty_scopes_table(report))
    if report.core_limits or report.global_limit:
        parts.append(_core_limit_table(report))
    parts.append(_findings(report.findings))
    return Group(*parts)


def _header(report: ScopeReport) -> Text:
    text = Text("SoC: ", style="bold")
    if report.soc is None:
        text.append("not given (core counts checked for sign and type only; pass --soc or --soc-ini)", style="dim")
    else:
        soc = report.soc
        text.append(visible(f"{soc.name}  AI Cores {soc.ai_core_cnt}, Vector Cores {soc.vector_core_cnt}  ({soc.source})"))
    text.append("\nGlobal core limit: ", style="bold")
    limit = report.global_limit
    text.append(visible(f"{limit.aicore}|{limit.vectorcore} from {limit.origin}") if limit else "none (ops use all cores unless limited)")
    text.append(f"\nGraphs: {len(report.graphs)}, SuperKernel scopes: {len(report.super_kernels)}")
    if report.empty_scopes:
        text.append(f", scopes no GE op carries: {len(report.empty_scopes)}")
    return text


def _empty_scopes_table(report: ScopeReport) -> Table:
    """The scopes no GE op carries, graph by graph as TorchAir checks them."""
    title = Text("Scopes no GE op carries (each graph as TorchAir checks it)", style="bold")
    table = Table(title=title, title_justify="left")
    for column in ("graph", "scope", "options", "opened at", "scope_exit in the graph"):
        table.add_column(column, overflow="fold")
    for empty in report.empty_scopes:
        options = empty.attrs.get("_super_kernel_options", "")
        table.add_row(
            str(empty.graph),
            plain(empty.scope),
            plain(options),
            plain(relative_paths(empty.opened_at)),
            Text("yes") if empty.closed else Text("no", style="red"),
        )
    return table


def _super_kernel_table(scope: SuperKernelScope) -> Table:
    options = scope.options.text or "(defaults)"
    title = Text.assemble(("SuperKernel ", "bold"), (one_line(scope.name), f"bold {_colour(scope.name)}"), f"  graph {scope.graph}")
    if scope.stream:
        title.append(one_line(f"  stream {scope.stream}"))
    title.append(one_line(f"  options: {options}"), style="dim")
    table = Table(title=title, title_justify="left", show_lines=False)
    for column in ("segment", "GE op", "type", "FX node", "source"):
        table.add_column(column, overflow="fold")  # a narrow terminal wraps a name, never cuts it
    segment_no = 0
    for item in scope.timeline:
        if isinstance(item, Segment):
            segment_no += 1
            for op in item.ops:
                table.add_row(str(segment_no), *_op_cells(op), plain(relative_paths(op.source or "")))
        else:
            table.add_row(Text("cut", style="bold red"), *_op_cells(item.op), plain(item.reason, style="red"))
    table.caption = _segments_caption(scope)
    return table


def _op_cells(op: Any) -> tuple[Text, Text, Text]:
    """An op's name, type and FX node: user text, shown as it is."""
    return plain(op.name), plain(op.type), plain(op.fx_node or "")


def _segments_caption(scope: SuperKernelScope) -> str:
    count = len(scope.segments)
    if not scope.breaks:
        return f"{len(scope.ops)} op(s), fused as one SuperKernel"
    return f"{len(scope.ops)} op(s) in {count} segment(s): GE fuses each segment separately"


def _core_limit_table(report: ScopeReport) -> Table:
    table = Table(title=Text("Core limits (op-level limit_core_num wins over the global aicore_num)", style="bold"), title_justify="left")
    for column in ("graph", "GE op", "type", "op-level", "runs with", "decided by", "source"):
        table.add_column(column, overflow="fold")
    for row in report.core_limits:
        op_level = "|".join(row.op_level) if row.op_level else ""
        table.add_row(
            str(row.graph),
            plain(row.op.name),
            plain(row.op.type),
            plain(op_level),
            plain(f"{row.aicore}|{row.vectorcore}"),
            plain(row.winner),
            plain(relative_paths(row.op.source or row.op.fx_node or "")),
        )
    if report.global_limit is not None:
        limit = report.global_limit
        table.caption = f"{report.ops_under_global_limit} other op(s) run with the global {limit.aicore}|{limit.vectorcore}"
    return table


def _findings(findings: Sequence[Finding]) -> Text:
    if not findings:
        return Text("No problems found.", style="green")
    text = Text()
    for finding in findings:
        if text:
            text.append("\n")
        text.append(f"{finding.severity}: ", style=_SEVERITY_STYLE.get(finding.severity, ""))
        text.append(f"[{finding.code}] ", style="dim")
        text.append(visible(finding.message))
    return text
