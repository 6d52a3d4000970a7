"""Rich renderables for ``fxlab diff``: an FX stage diff grouped by source line, an
Ascend IR diff grouped by FX node, and a whole trace diff. Returns renderables; the CLI
prints."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from fxlab.diff.fx_diff import LineGroup, NodeChange, NodeRef, StageDiff
from fxlab.diff.trace_diff import GraphDiff, TraceDiff
from fxlab.viz.safe_text import plain, visible
from fxlab.viz.trace_views import relative_paths

MARKS = {"same": ("=", "dim"), "changed": ("~", "yellow"), "added": ("+", "green"), "removed": ("-", "red")}
IR_MARKS = {"same": ("=", "dim"), "changed": ("~", "yellow"), "only_right": ("+", "green"), "only_left": ("-", "red")}
# How the per-change counts read in a graph's summary line.
CHANGE_WORDS = {
    "functionalized": "in-place op(s) became functional",
    "auto_functionalized": "in-place custom op(s) wrapped in auto_functionalized",
    "reinplaced": "re-inplaced",
    "copy_epilogue_added": "copy_ epilogue(s) added",
    "copy_epilogue_removed": "copy_ epilogue(s) removed",
    "target_changed": "with another target",
    "inputs_changed": "with other inputs",
    "outputs_changed": "with another output shape/dtype",
    "scopes_changed": "in other scopes",
    "moved": "moved to another source line",
}
UNCHANGED_NAMES_SHOWN = 6


def trace_diff_view(diff: TraceDiff) -> RenderableType:
    """Every graph's diff, then the notes and a closing verdict."""
    parts: list[RenderableType] = [graph_diff_view(g) for g in diff.graphs]
    parts += [plain(f"note: {relative_paths(note)}", style="dim") for note in diff.notes]
    verdict = "no differences" if diff.identical else "differences found (above)"
    parts.append(
        Text.assemble(
            (visible(f"{diff.left_label} → {diff.right_label}: "), "bold"), (visible(verdict), "green" if diff.identical else "yellow")
        )
    )
    return Group(*parts)


def graph_diff_view(diff: GraphDiff) -> RenderableType:
    # Two traces compare one stage with itself: the title names it.
    title = f"graph {diff.graph} · " + (f"{diff.left_stage}: " if diff.left_stage == diff.right_stage else "")
    if diff.fx is not None:
        return stage_diff_view(diff.fx, title)
    if diff.ir is not None:
        return ir_diff_view(diff.ir, title)
    return plain(f"{title}{diff.left_stage} → {diff.right_stage}: {diff.missing}", style="yellow")


# -- FX stages ------------------------------------------------------------------------------
def stage_diff_view(diff: StageDiff, title: str = "graph 0 · ") -> RenderableType:
    """Header with counts, then each source line's nodes side by side with what changed;
    a line whose nodes are all unchanged shows as one dim row; an identical stage shows
    as its header alone."""
    if diff.identical:
        return _stage_header(diff, title)
    width = _left_width(diff.entries)
    parts: list[RenderableType] = [_stage_header(diff, title)]
    for group in diff.groups:
        parts.append(_line_header(group))
        parts.append(_unchanged_line(group) if group.same else _group_lines(group, width))
    parts += _input_output_lines(diff)
    parts.append(Text(""))
    return Group(*parts)


def _stage_header(diff: StageDiff, title: str) -> Text:
    counts = diff.summary()
    head = plain(f"{title}{diff.left_label} → {diff.right_label}: ", style="bold blue")
    head.append(f"{counts['changed']} changed, {counts['added']} added, {counts['removed']} removed, {counts['same']} same")
    words = [f"{counts[code]} {text}" for code, text in CHANGE_WORDS.items() if counts.get(code)]
    if words:
        head.append("\n  " + "; ".join(words), style="dim")
    if diff.identical:
        head.append("  (identical)", style="green")
    return head


def _line_header(group: LineGroup) -> Text:
    where = relative_paths(group.location) if group.location else "(no source line)"
    text = plain(f"  {where}", style="bold cyan")
    if group.code:
        text.append(visible(f"  {group.code}"), style="cyan")
    return text


def _unchanged_line(group: LineGroup) -> Text:
    names = [e.left.name for e in group.entries if e.left is not None]
    shown = ", ".join(names[:UNCHANGED_NAMES_SHOWN]) + (", …" if len(names) > UNCHANGED_NAMES_SHOWN else "")
    return plain(f"    = {len(names)} unchanged: {shown}", style="dim")


def _left_width(entries: Sequence[NodeChange]) -> int:
    """One width for the left side across all groups, so the arrows line up."""
    return min(max((len(_node_label(e.left)) for e in entries if e.left), default=1), 56)


def _group_lines(group: LineGroup, width: int) -> Text:
    """Each entry as ``mark left → right``, what changed indented below it."""
    text = Text()
    for entry in group.entries:
        mark, style = MARKS[entry.kind]
        text.append(f"    {mark}  ", style=style)
        left = _node_label(entry.left)
        text.append(visible(left.ljust(width) if entry.right else left), style=style)
        if entry.right:
            text.append("  →  " if entry.left else "     ", style="dim")
            text.append(visible(_node_label(entry.right)), style=style)
        text.append("\n")
        for line, line_style in _change_lines(entry):
            text.append(visible(f"         {line}") + "\n", style=line_style)
    text.rstrip()
    return text


def _node_label(ref: NodeRef | None) -> str:
    if ref is None:
        return ""
    if ref.kind == "auto_functionalized":  # the name says the wrapper; show what it wraps
        label = f"{ref.name}({ref.args.split(',', 1)[0]})"
    else:
        label = f"{ref.name}: {ref.target}"
    return f"{label} + {', '.join(ref.attached)}" if ref.attached else label


def _change_lines(entry: NodeChange) -> list[tuple[str, str]]:
    lines = []
    for change in entry.changes:
        if change.code in ("added", "removed"):  # the node is named already: show what it reads
            lone = entry.left or entry.right
            lines.append((f"reads ({lone.args})", "dim"))  # type: ignore[union-attr]
        else:
            lines.append((change.detail, "dim" if change.code in ("inputs_changed", "moved") else ""))
    return lines


def _input_output_lines(diff: StageDiff) -> list[Text]:
    lines = []
    for index, entry in enumerate(diff.inputs):
        if entry.kind != "same":
            detail = "; ".join(c.detail for c in entry.changes) or entry.kind
            names = [side.name for side in (entry.left, entry.right) if side is not None]
            name = " → ".join(dict.fromkeys(names))  # both, where the two compiles name it apart
            lines.append(plain(f"  graph input {index} ({name}): {detail}", style=MARKS[entry.kind][1]))
    if not diff.outputs_same:
        lines.append(plain(f"  graph outputs: ({diff.outputs[0]}) → ({diff.outputs[1]})", style="yellow"))
    return lines


# -- Ascend IR ------------------------------------------------------------------------------
def ir_diff_view(diff: Any, title: str = "graph 0 · ") -> RenderableType:
    """An :class:`~fxlab.diff.ir_diff.IrDiff`: per FX node, the GE ops on each side and
    every op that differs; FX nodes whose ops all agree are counted, not listed."""
    counts = diff.summary()
    head = plain(f"{title}{diff.left_label} → {diff.right_label}: ", style="bold blue")
    head.append(
        f"{counts['same']} GE ops same, {counts['changed']} changed, {counts['only_left']} only in {diff.left_label}, "
        f"{counts['only_right']} only in {diff.right_label}; {counts['nodes_differing']} FX node(s) differ"
    )
    if diff.identical:
        return head.append("  (identical)", style="green")
    parts: list[RenderableType] = [head]
    same_nodes = [n.fx_node for n in diff.nodes if n.same]
    for node in diff.nodes:
        if not node.same:
            parts.append(_ir_node_view(node, diff.left_label, diff.right_label))
    if same_nodes:
        shown = ", ".join(same_nodes[:UNCHANGED_NAMES_SHOWN]) + (", …" if len(same_nodes) > UNCHANGED_NAMES_SHOWN else "")
        parts.append(plain(f"  = {len(same_nodes)} FX node(s) convert alike: {shown}", style="dim"))
    parts += _ir_graph_lines(diff)
    parts.append(Text(""))
    return Group(*parts)


def _ir_node_view(node: Any, left_label: str, right_label: str) -> RenderableType:
    header = plain(f"  {node.fx_node}", style="bold cyan")
    header.append(
        visible(f"  {left_label}: {' '.join(node.left_types) or '-'}  |  {right_label}: {' '.join(node.right_types) or '-'}"), style="cyan"
    )
    if node.moved:
        header.append("  (moved)", style="yellow")
    table = Table.grid(padding=(0, 2))
    table.add_column(width=5)
    for _ in range(3):
        table.add_column()
    table.add_column(ratio=1)
    for op in node.ops:
        if op.kind == "same" and not op.moved:
            continue
        mark, style = IR_MARKS[op.kind]
        left = _op_label(op.left, op.left_type)
        right = _op_label(op.right, op.right_type)
        table.add_row(
            plain(f"    {mark}", style=style),
            plain(left, style=style),
            Text("→" if op.left and op.right else "", style="dim"),
            plain(right, style=style),
            _op_details(op),
        )
    return Group(header, table)


def _op_label(name: str | None, op_type: str | None) -> str:
    # GE names ops Type, Type_1, ...: then the name alone says the type.
    if not name:
        return ""
    return name if name == op_type or name.startswith(f"{op_type}_") else f"{name} ({op_type})"


def _op_details(op: Any) -> Text:
    lines = []
    if op.left_type and op.right_type and op.left_type != op.right_type:
        lines.append(f"type {op.left_type} → {op.right_type}")
    lines += [f"attr {key}: {_short(a)} → {_short(b)}" for key, (a, b) in op.attrs.items()]
    lines += [f"input {slot}: {a} → {b}" for slot, a, b in op.inputs]
    lines += [f"output {slot}: {_desc(a)} → {_desc(b)}" for slot, a, b in op.outputs]
    if op.moved:
        lines.append("runs at another place relative to the other ops")
    return plain("\n".join(lines))


def _short(value: Any, limit: int = 80) -> str:
    """An attr value on one line (JSON text is folded), cut at ``limit`` characters."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _desc(value: Any) -> str:
    if not isinstance(value, dict):
        return str(value)
    shape = value.get("shape")
    return f"{value.get('dtype')}{list(shape) if shape is not None else ''}"


def _ir_graph_lines(diff: Any) -> list[Text]:
    lines = []
    if diff.outputs[0] != diff.outputs[1]:
        lines.append(plain(f"  graph outputs: {diff.outputs[0]} → {diff.outputs[1]}", style="yellow"))
    for key, (a, b) in diff.graph_attrs.items():
        lines.append(plain(f"  graph attr {key}: {a} → {b}", style="yellow"))
    return lines
