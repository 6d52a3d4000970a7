"""Benchmark: printing every ``fxlab trace`` view of the 32-layer decoder (issue 2, "Speed").

``fxlab trace`` prints each stage's code (dynamo, aten, functional, pre_ge: 2,300-3,500
lines each), the Ascend IR table (one row per FX node, 6,501 GE ops) and the summary.
Goal: <= 0.6 s for all of them, next to a capture of about 20 s. "rich" is the same
content through rich's Panel and Table (how it was printed before); "lines" is what
``trace_views`` returns now. Both render into a 160-column console writing to memory,
best of ``--repeat`` runs in CPU time, with the capture's heap frozen as ``fxlab trace``
does; the two outputs are checked to be byte-identical.
Run: ``python bench/bench_views.py [--layers 32]``.
"""
from __future__ import annotations

import argparse
import gc
import io
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GOAL_S = 0.6


def capture(layers: int) -> Any:
    """The decoder's trace, as the public API makes it."""
    import fxlab

    sys.path.insert(0, str(ROOT / "examples"))
    from llama_decoder import build

    model, inputs = build(layers)
    return fxlab.trace(model, inputs, verify=False)


def rendered(make: Callable[[], Any]) -> tuple[float, str]:
    from rich.console import Console

    console = Console(file=io.StringIO(), width=160, force_terminal=True, color_system="standard", highlight=False, soft_wrap=False)
    start = time.process_time()
    console.print(make())
    return time.process_time() - start, console.file.getvalue()  # type: ignore[attr-defined]


def best_of(repeat: int, make: Callable[[], Any]) -> tuple[float, str]:
    runs = [rendered(make) for _ in range(repeat)]
    return min(seconds for seconds, _ in runs), runs[0][1]


def _rich_panel(view: Any) -> Any:
    """The same panel through rich (what large stages were printed with before)."""
    from rich.panel import Panel
    from rich.text import Text

    text = Text()
    for line in view.lines[:-1] if view.lines and not view.lines[-1].text else view.lines:
        piece = Text(line.text)
        piece.stylize(line.style)
        if line.tag:
            piece.append(line.tag, style=line.tag_style)
        text.append_text(piece)
        text.append("\n")
    return Panel(text, title=Text(view.title), title_align="left", border_style=view.border_style)


def views(trace: Any, rich: bool) -> dict[str, Callable[[], Any]]:
    from fxlab.viz import trace_views
    from fxlab.viz.fast_lines import LinesPanel, LinesTable

    def as_rich(view: Any) -> Any:
        if isinstance(view, LinesPanel):
            return _rich_panel(view)
        if isinstance(view, LinesTable):
            return view.rich_table()
        if hasattr(view, "renderables"):  # the IR table with its note
            from rich.console import Group

            return Group(*(as_rich(r) for r in view.renderables))
        return view

    pick = as_rich if rich else (lambda view: view)
    graph = trace.graphs[0]
    made: dict[str, Callable[[], Any]] = {name: (lambda s=stage: pick(trace_views.stage_view(graph, s))) for name, stage in graph.stages.items()}
    made["ascend_ir"] = lambda: pick(trace_views.ir_view(graph))
    made["summary"] = lambda: trace_views.summary_view(trace)
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    trace = capture(args.layers)
    for stage in trace.graphs[0].stages.values():
        _ = stage.code  # generated lazily: not part of printing
    gc.freeze()
    before, after = views(trace, rich=True), views(trace, rich=False)
    total_before = total_after = 0.0
    print(f"{'view':<12} {'rich':>9} {'lines':>9}")
    for name in before:
        old_s, old_text = best_of(args.repeat, before[name])
        new_s, new_text = best_of(args.repeat, after[name])
        assert old_text == new_text, f"{name}: the output changed"
        total_before, total_after = total_before + old_s, total_after + new_s
        print(f"{name:<12} {old_s * 1000:>7.0f}ms {new_s * 1000:>7.0f}ms")
    met = "met" if total_after <= GOAL_S else "NOT met"
    print(f"{'all views':<12} {total_before:>8.2f}s {total_after:>8.2f}s  {total_before / total_after:.1f}x (goal <= {GOAL_S} s: {met})")


if __name__ == "__main__":
    main()
