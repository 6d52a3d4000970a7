"""Benchmark: pictures and the HTML report of the 32-layer decoder (issue: pictures).

- ``--graphviz svg``: what it adds to ``fxlab trace`` (folding, DOT text and ``dot`` for
  every stage, in parallel as the command runs it). Goal <= 10 s, and every stage gets
  a picture. Anchor: 431 s or more before folding.
- ``--html``: the report written (goal <= 5 s); opened in headless chromium, the first
  view rendered (goal <= 3 s, from navigation start) and one layer expanded (goal <=
  0.5 s), as the viewer's self-test measures them.
- DOT text of the whole functional stage (every node, no folding) against torch's
  ``FxGraphDrawer`` on the same GraphModule (its pydot graph and text): goal >= 10x.

Run: ``python bench/bench_pictures.py [--layers 32]``.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
GOALS = {"graphviz_s": 10.0, "html_s": 5.0, "first_view_ms": 3000.0, "expand_layer_ms": 500.0, "dot_ratio": 10.0}


def capture(layers: int) -> Any:
    """The decoder's capture: its trace, and the live graph modules torch's drawer needs."""
    from fxlab.session import TraceRequest, capture

    sys.path.insert(0, str(ROOT / "examples"))
    from llama_decoder import build

    model, inputs = build(layers)
    return capture(TraceRequest(model, inputs, verify=False))


def pictures(trace: Any, folder: Path) -> dict[str, Any]:
    from fxlab.cli.picture_files import write_pictures

    each: dict[str, float] = {}
    start = time.perf_counter()
    files, messages = write_pictures(trace, folder, "svg", progress=lambda done, total, path, s, err: each.__setitem__(path.stem, round(s, 2)))
    seconds = time.perf_counter() - start
    svgs = sorted(p.stem for p in files if p.suffix == ".svg")
    return {"graphviz_s": round(seconds, 2), "pictures": svgs, "dot_s_each": each, "messages": messages}


def report_and_browser(trace: Any, folder: Path) -> dict[str, Any]:
    from fxlab.cli.picture_files import write_html_report
    from tests.viz.headless import selftest

    start = time.perf_counter()
    page = write_html_report(trace, folder / "report.html")
    html_s = time.perf_counter() - start
    result = selftest(page)
    layer = next((e for e in result["expand"] if e["kind"] == "layer"), None)
    return {
        "html_s": round(html_s, 2), "html_mb": round(page.stat().st_size / 1e6, 1),
        "first_view_ms": round(result["first_view_ms"]), "expand_layer_ms": round(layer["ms"]) if layer else None,
        "expand_all": [(e["kind"], round(e["ms"])) for e in result["expand"]], "errors": result["errors"] + result["console_errors"],
    }


def _best(repeat: int, make: Any) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        make()
        times.append(time.process_time() - start)
    return min(times)


def dot_text_ratio(captured: Any, repeat: int = 3) -> dict[str, Any]:
    """Best of ``repeat`` in CPU time: fxlab's DOT text of every node of the functional
    stage, from the recorded stage (what a trace keeps), against FxGraphDrawer's DOT text
    (its pydot graph, as text) of the live GraphModule the stage was recorded from."""
    from torch.fx.passes.graph_drawer import FxGraphDrawer

    from fxlab.viz.fold import FoldOptions
    from fxlab.viz.pictures import stage_picture

    gm, recorded = captured.graphs[0].modules["functional"], captured.trace.graphs[0]
    every_node = FoldOptions(cap=len(gm.graph.nodes) + 1)  # nothing folded, as FxGraphDrawer draws it
    records_s = _best(repeat, lambda: stage_picture(recorded, "functional", options=every_node))
    torch_s = _best(repeat, lambda: FxGraphDrawer(gm, "functional").get_dot_graph().to_string())
    return {
        "nodes": len(gm.graph.nodes), "fxlab_dot_records_s": round(records_s, 3),
        "fxgraphdrawer_s": round(torch_s, 3), "dot_ratio": round(torch_s / records_s, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=32)
    args = parser.parse_args()
    start = time.perf_counter()
    captured = capture(args.layers)
    print(f"capture of {args.layers} layers: {time.perf_counter() - start:.1f} s", flush=True)
    trace = captured.trace
    with tempfile.TemporaryDirectory() as tmp:
        figures = {**pictures(trace, Path(tmp)), **report_and_browser(trace, Path(tmp)), **dot_text_ratio(captured)}
    print(json.dumps(figures))
    for key, goal in GOALS.items():
        value = figures[key]
        met = value is not None and (value >= goal if key == "dot_ratio" else value <= goal)
        unit = "x" if key == "dot_ratio" else ""
        print(f"{key}: {value}{unit} (goal {'>=' if key == 'dot_ratio' else '<='} {goal}{unit}: {'ok' if met else 'NOT MET'})")


if __name__ == "__main__":
    main()
