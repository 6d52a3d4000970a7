"""Rich renderables of what TorchAir's passes did to a graph: the pass list of the
``pre_ge`` or ``aclgraph`` stage (each pass's removed, added and rewritten nodes, the
user's passes marked as theirs), users' ``register_replacement`` patterns with every match
(the nodes replaced and added, with source lines), and, with ``--converter torchair`` on
the aclgraph path, whether TorchAir's own passes gave the same graph. Renderers return
data; the CLI prints."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from fxlab.capture.trace import GraphTrace
from fxlab.passes.infra import PassRecord
from fxlab.stage_names import ACLGRAPH, GE_GRAPH_PASSES, PRE_GE
from fxlab.viz.safe_text import plain, visible

PASS_LIST_TITLES = {
    PRE_GE: "TorchAir's passes before conversion, in its order",
    GE_GRAPH_PASSES: "TorchAir's GE-graph passes after conversion, in its order (what each did to the GE ops)",
    ACLGRAPH: "TorchAir's aclgraph passes (_optimize_fx, then optimize_graph_without_runtime), in its order",
}


def passes_view(graph: GraphTrace, pass_list: str, shown_names: int = 6) -> Text:
    """What each pass of ``pass_list`` did to ``graph``, in order."""
    out = Text(f"graph {graph.index} · {PASS_LIST_TITLES.get(pass_list, pass_list)}:\n")
    for record in graph.pass_records(pass_list):
        user = record.origin == "user"
        out.append(f"  {visible(record.name)}{' (user)' if user else ''}: ", style="bold magenta" if user else "bold")
        out.append_text(_what_changed(record, shown_names))
        for note in record.notes[:shown_names]:
            out.append(f"      {visible(str(note))}\n", style="dim")
    return out


def _what_changed(record: PassRecord, shown_names: int) -> Text:
    if not record.changed:
        return Text("no change\n", style="dim")
    parts = []
    for sign, key in (("-", "removed"), ("+", "added"), ("~", "changed_nodes")):
        names = getattr(record, key)
        if names:
            more = f", ... ({len(names)})" if len(names) > shown_names else ""
            parts.append(f"{sign}{len(names)} node(s) ({', '.join(visible(n) for n in names[:shown_names])}{more})")
    return Text(("; ".join(parts) or "changed nodes in place") + "\n")


def patterns_view(graph: GraphTrace, shown_matches: int = 4) -> RenderableType:
    """Every registered pattern with its matches; a pattern that matched nothing is named."""
    lines: list[RenderableType] = []
    for entry in graph.patterns:
        matches = entry.get("matches", [])
        head = f"graph {graph.index} · pattern {entry['pattern']} -> {entry['replacement']} (registered at {entry['registered_at']}): "
        if not matches:
            lines.append(plain(head + "matched nothing", style="yellow"))
            continue
        lines.append(plain(head + f"{len(matches)} match(es)", style="bold"))
        for i, match in enumerate(matches[:shown_matches]):
            lines.append(plain(f"  match {i + 1}: replaced {_nodes(match['replaced'])}"))
            lines.append(plain(f"           added {_nodes(match['added'])}", style="green"))
        if len(matches) > shown_matches:
            lines.append(plain(f"  ... {len(matches) - shown_matches} more match(es)", style="dim"))
    return Group(*lines)


def _nodes(records: list[dict[str, str]]) -> str:
    shown = [f"{r['name']} ({r['target']}{', ' + _short(r['source']) if r.get('source') else ''})" for r in records]
    return ", ".join(shown) if shown else "nothing"


def _short(source: str) -> str:
    path, _, line = source.rpartition(":")
    return f"{path.rsplit('/', 1)[-1]}:{line}"


def torchair_aclgraph_line(graph: GraphTrace) -> Text | None:
    """With ``--converter torchair``: whether TorchAir's own passes gave fxlab's graph."""
    found = graph.torchair_aclgraph
    if not found:
        return None
    if found.get("same"):
        return plain(f"graph {graph.index}: TorchAir's own aclgraph passes give the same graph as fxlab's (node for node)", style="green")
    lines = "; ".join(found.get("differences", [])[:4])
    return plain(
        f"graph {graph.index}: TorchAir's own aclgraph passes give another graph than fxlab's (the stage shows TorchAir's): {lines}",
        style="bold yellow",
    )


def streams_lines(graph: GraphTrace) -> list[Text]:
    """The graph's streams, events and stream core limits on the aclgraph path, and the
    concurrent core demands that exceed the SoC."""
    found = graph.streams
    if not found:
        return []
    streams = ", ".join(
        f"{name} ({count} op(s), core limit {' / '.join(found['limits'].get(name, []))})" for name, count in found["streams"].items()
    )
    lines = [plain(f"graph {graph.index}: streams: {streams}")]
    events = found.get("events", [])
    if events:
        shown = ", ".join(f"{e['kind']}({e['tag']}) on {e['stream']}" for e in events[:6]) + (
            f", ... ({len(events)})" if len(events) > 6 else ""
        )
        lines.append(plain(f"graph {graph.index}: events: {shown}", style="dim"))
    calls = found.get("core_limit_calls", [])
    if calls:
        shown = ", ".join(f"{c['node']}({c['stream']}: {c['limit']})" for c in calls[:6]) + (
            f", ... ({len(calls)})" if len(calls) > 6 else ""
        )
        lines.append(plain(f"graph {graph.index}: stream core limits set and restored: {shown}", style="dim"))
    lines += [plain(f"graph {graph.index}: {w}", style="bold yellow") for w in found.get("warnings", [])]
    lines += [plain(f"graph {graph.index}: note: {n}", style="dim") for n in found.get("notes", [])[:3]]
    return lines


ACLGRAPH_SCOPES_NOTE = (
    "On the aclgraph path a limit_core_num scope is a stream core limit (torch.npu.set_stream_limit), set before "
    "its ops and restored after them, and a stream switched to inside it gets the same limit; npu_stream_switch "
    "regions run on their own streams, closed by events with the default stream. SuperKernel scopes are GE-graph "
    "attrs: in this mode their markers only run at capture."
)


def aclgraph_scopes_view(trace: Any) -> RenderableType:
    """``fxlab scopes`` on the aclgraph path: every graph's streams and core limits."""
    lines: list[RenderableType] = [
        plain(f"mode: {trace.mode} (TorchAir's aclgraph path)", style="bold"),
        plain(ACLGRAPH_SCOPES_NOTE, style="dim"),
    ]
    for graph in trace.graphs:
        found = streams_lines(graph)
        if graph.error and not found:  # the passes stopped: what they would have found is not known
            lines.append(plain(f"graph {graph.index}: not known, TorchAir's aclgraph passes stopped on it (below)", style="red"))
            continue
        lines += found or [plain(f"graph {graph.index}: one stream, no core limit, no event", style="dim")]
    return Group(*lines)
