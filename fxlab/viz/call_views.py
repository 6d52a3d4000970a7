"""The calls of the compiled model, for ``fxlab trace``: each input set (a warm-up, or a
second size fxlab derived for a dynamic graph), the graphs it ran (reused or compiled on
it), why each recompile happened (Dynamo's guard failure, in plain words and as Dynamo
wrote it), and the call's checks against eager."""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType
from rich.text import Text

from fxlab.capture.trace import Trace
from fxlab.stage_names import ACLGRAPH
from fxlab.viz.safe_text import plain, visible


def calls_view(trace: Trace) -> list[RenderableType]:
    """Lines for the summary: one block per call, when the model was called more than once."""
    if len(trace.calls) < 2:
        return []
    lines: list[RenderableType] = [plain(f"calls of the compiled model ({len(trace.calls)}, in order):", style="bold")]
    graph_check = "aclgraph graph on CPU vs compiled" if ACLGRAPH in trace.stages else "Ascend IR on CPU vs compiled"
    for call in trace.calls:
        lines.extend(_call_lines(call, graph_check))
    return lines


def _call_lines(call: Any, graph_check: str) -> list[RenderableType]:
    origin = "" if call.origin in ("given", "") else f" [{call.origin}]"
    lines: list[RenderableType] = [plain(f"call {call.index}: {call.inputs}{origin}")]
    ran = [f"graph {g} ({'compiled on this call' if g in call.compiled else 'reused'})" for g in call.graphs]
    lines.append(plain(f"  ran {', '.join(ran) if ran else 'no graph'}"))
    for recompile in call.recompiles:
        if not recompile.reasons:
            lines.append(plain(f"  graph {recompile.graph}: compiled for code no earlier graph covers (no guard failed)", style="yellow"))
        for words, reason in zip(recompile.words, recompile.reasons):
            lines.append(plain(f"  graph {recompile.graph} compiled because {words}", style="yellow"))
            lines.append(plain(f"    Dynamo's reason: {reason.splitlines()[0]}", style="dim"))
    if call.index == 0:
        lines.append(plain("  its checks: the lines below marked (call 0)", style="dim"))
    for label, check in (("eager vs compiled", call.check), (graph_check, call.ir_check)):
        if check is not None and call.index > 0:
            style = "bold red" if check.failed else ("yellow" if check.skipped or check.not_run else "green")
            lines.append(Text.assemble((f"  {label}: ", ""), (visible(check.verdict), style)))
    return lines
