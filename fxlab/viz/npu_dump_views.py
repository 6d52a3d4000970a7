"""``fxlab dumps``'s console view: per graph, its phases in order with what each fused,
renamed (said only when it renamed any), inserted and removed, then a table of the ops of
one phase (the last by default) with what GE made of each and, once joined, the FX nodes
and source lines it came from.
Returns renderables; never prints. User text (op names, paths) goes in as ``Text``."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from fxlab.diff.npu_diff import KINDS, NpuPhaseDiff
from fxlab.npu_dumps.dump_model import DumpGraph, DumpOp, DumpSet, FusionResult
from fxlab.npu_dumps.phases import PhaseStep, phase_chains, phase_steps
from fxlab.reports.ge_superkernels import SegmentVerdict
from fxlab.viz.safe_text import plain_line
from fxlab.viz.trace_views import relative_paths

MAX_LISTED = 6


def what_ge_did(op: DumpOp) -> str:
    """One line: fused from what (and by which passes), renamed from what, inserted, UB
    scope, SuperKernel, stream and core limit, format and dtype changes."""
    parts = []
    if op.inserted:
        parts.append("inserted by GE")
    elif op.super_kernel_members:
        parts.append(f"SuperKernel of {_listed(op.super_kernel_members)}")
    elif op.fused:
        parts.append(f"fused from {_listed(op.originals)}")
    elif op.renamed:
        parts.append(f"renamed from {op.originals[0]}")
    if op.retyped and not op.fused:
        parts.append(f"type {op.retyped} -> {op.type}")
    if op.passes:
        parts.append(f"by {_listed(op.passes)}")
    if op.fusion_scope is not None:
        parts.append(f"UB fusion scope {op.fusion_scope}")
    if op.super_kernel_parent:
        parts.append(f"in {op.super_kernel_parent}")
    if op.stream_label:
        parts.append(f"stream {op.stream_label}")
    if op.core_limit:
        parts.append(f"cores {op.core_limit}")
    parts += op.changes()
    return "; ".join(parts)


def _listed(names: Sequence[str]) -> str:
    shown = list(names[:MAX_LISTED])
    more = len(names) - len(shown)
    return ", ".join(shown) + (f" (+{more})" if more > 0 else "")


def _step_line(step: PhaseStep, graph: DumpGraph) -> Text:
    line = Text("  ")
    line.append_text(plain_line(step.after, "bold"))
    line.append(f" ({len(graph.ops)} ops): {len(step.fused)} fused")
    if step.renamed:  # said only when there are any: most phases rename nothing
        line.append(f", {len(step.renamed)} renamed")
    if step.before is None:
        line.append(f", {len(step.inserted)} inserted by GE")
    else:
        line.append(f", {len(step.inserted)} inserted, {len(step.removed)} removed")
    renamed = [f"{op} (from {original})" for op, original in step.renamed]
    listed = (("fused", [op for op, _ in step.fused]), ("renamed", renamed), ("inserted", step.inserted), ("removed", step.removed))
    for label, names in listed:
        if names:
            line.append(f"\n      {label}: ")
            line.append_text(plain_line(_listed(names), "dim"))
    return line


def ops_table(graph: DumpGraph, every_op: bool = False) -> RenderableType:
    """The ops of one phase: every op GE fused, inserted, cut into a SuperKernel or
    changed (``every_op``: all of them); a sentence instead of an empty table when GE
    did none of that."""
    title = Text.assemble(plain_line(graph.phase, "bold"), " · ", plain_line(graph.name))
    rows = [(op, did) for op in graph.ops if (did := what_ge_did(op)) or every_op]
    if not graph.ops:
        return Text.assemble(title, ": the dump holds no op (an empty graph, or a dump cut short).")
    if not rows:
        return Text.assemble(title, f": GE fused, renamed, inserted and changed none of its {len(graph.ops)} ops (--all-ops lists them).")
    table = Table(title=title, title_justify="left", show_lines=False)
    for header in ("GE op", "type", "what GE did", "FX node(s)", "source"):
        table.add_column(header, overflow="fold")
    for op, did in rows:
        table.add_row(
            plain_line(op.name),
            plain_line(op.type),
            plain_line(did),
            plain_line(", ".join(op.fx_nodes)),
            plain_line(relative_paths(", ".join(op.source)), "dim"),
        )
    return table


def dumps_view(dumps: DumpSet, phase: str | None = None, every_op: bool = False) -> RenderableType:
    parts: list[RenderableType] = []
    steps = {(s.graph, s.format, s.after): s for s in phase_steps(dumps.graphs)}
    for (key, fmt), chain in phase_chains(dumps.graphs).items():
        parts.append(Text.assemble(plain_line(key, "bold"), f" ({fmt}): {len(chain)} phase(s) in order"))
        parts += [_step_line(steps[(key, fmt, graph.phase)], graph) for graph in chain]
        shown = next((g for g in chain if g.phase == phase), None) if phase else chain[-1]
        if shown is not None:
            parts.append(ops_table(shown, every_op))
    subgraphs = [g for g in dumps.graphs if g.parent is None and g.phase.startswith("super_kernel_sub_graph")]
    if subgraphs:
        parts.append(Text(f"SuperKernel sub-graphs: {len(subgraphs)} (members listed with their SuperKernel above)", style="dim"))
    parts += [_fusion_result_line(result) for result in dumps.fusion_results]
    if dumps.torchair:
        parts.append(plain_line(relative_paths(f"TorchAir graph dumps: {', '.join(g.file for g in dumps.torchair)}"), "dim"))
    parts += [Text.assemble(("note: ", "dim"), plain_line(note)) for note in dumps.notes]
    return Group(*parts)


def _fusion_result_line(result: FusionResult) -> Text:
    line = Text("fusion_result.json session ")
    line.append_text(plain_line(result.session))
    line.append(f" graph {result.graph_id}: ")
    if not result.passes:
        line.append("records no fusion pass")
        return line
    effective = [p for p in result.passes if p.effect_times]
    line.append(f"{len(result.passes)} pass(es) matched, {len(effective)} took effect")
    if effective:
        line.append(": ")
        line.append_text(plain_line(_listed([f"{p.name} x{p.effect_times}" for p in effective])))
    return line


def super_kernel_lines(verdicts: Sequence[SegmentVerdict]) -> RenderableType:
    """Each SuperKernel segment fxlab predicted, and what GE made of it."""
    lines: list[RenderableType] = [Text("SuperKernel scopes: fxlab's prediction (fxlab scopes) vs GE's sk_* ops", style="bold")]
    for verdict in verdicts:
        line = Text(f"  graph {verdict.graph} scope ")
        line.append_text(plain_line(verdict.scope, "bold"))
        line.append(f" segment {verdict.segment} ({len(verdict.predicted)} op(s)): ")
        if verdict.as_predicted:
            line.append("one SuperKernel, as predicted: ", style="green")
        else:
            line.append(
                f"GE made {len(verdict.super_kernels)} SuperKernel(s)"
                + (f", {len(verdict.outside)} op(s) in none" if verdict.outside else "")
                + ": ",
                style="yellow",
            )
        line.append_text(plain_line(", ".join(verdict.super_kernels) or "-"))
        lines.append(line)
        lines += [Text.assemble("      ", plain_line(cut, "dim")) for cut in verdict.cuts]
    return Group(*lines)


_KIND_MARKS = {
    "same": ("=", "dim"),
    "fused": ("~", "yellow"),
    "renamed": ("~", "magenta"),
    "changed": ("~", "cyan"),
    "inserted": ("+", "green"),
    "removed": ("-", "red"),
}


def npu_diff_view(diffs: Sequence[NpuPhaseDiff]) -> RenderableType:
    """``fxlab diff TRACE NPU_DUMP``: per source line, what GE did to TorchAir's ops."""
    parts: list[RenderableType] = []
    for diff in diffs:
        counts = ", ".join(f"{diff.count(k)} {k}" for k in KINDS)
        parts.append(
            Text.assemble(
                (f"graph {diff.graph} · ascend_ir → ", "bold"), plain_line(f"{diff.ge_graph} {diff.phase}", "bold"), f": {counts}"
            )
        )
        for line in diff.lines:
            if all(e.kind == "same" for e in line.entries):
                continue
            parts.append(Text.assemble("  ", plain_line(relative_paths(line.source) or "(no source line)", "bold")))
            for entry in line.entries:
                if entry.kind == "same":
                    continue
                mark, style = _KIND_MARKS[entry.kind]
                row = Text(f"    {mark} {entry.kind:<8} ", style=style)
                row.append_text(plain_line(", ".join(entry.torchair_ops) or "-"))
                row.append(" → ")
                row.append_text(plain_line(entry.ge_op or "-"))
                if entry.detail:
                    row.append("  ")
                    row.append_text(plain_line(entry.detail, "dim"))
                parts.append(row)
    return Group(*parts)
