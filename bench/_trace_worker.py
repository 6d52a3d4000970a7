"""One timed measurement in a fresh process (so Dynamo caches never carry over).

    python bench/_trace_worker.py aot_eager|fxlab|fxlab_render LAYERS OUT_DIR

Prints one JSON line: {"mode", "layers", "seconds", ...}. Model construction is not timed.
"""
from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "llama_decoder.py"


def time_aot_eager(layers: int) -> dict:
    sys.path.insert(0, str(EXAMPLE.parent))
    from llama_decoder import build

    model, inputs = build(layers)
    with torch.no_grad():
        start = time.perf_counter()
        torch.compile(model, backend="aot_eager")(*inputs)
        return {"seconds": time.perf_counter() - start}


def time_fxlab(layers: int, out: Path, render: bool) -> dict:
    from fxlab.capture import capture_trace
    from fxlab.capture.loader import LoadedModel
    from fxlab.capture.save import prepare_out_dir, save_trace

    sys.path.insert(0, str(EXAMPLE.parent))
    from llama_decoder import build

    model, inputs = build(layers)
    loaded = LoadedModel(fn=model, args=inputs, path=EXAMPLE, entry=f"build({layers})")
    start = time.perf_counter()
    trace = capture_trace(loaded)
    captured = time.perf_counter()
    save_trace(trace, prepare_out_dir(out))
    saved = time.perf_counter()
    result = {"capture_s": captured - start, "save_s": saved - captured, "status": trace.status, "nodes": len(trace.graphs[0].modules["functional"].graph.nodes)}
    if render:
        from rich.console import Console

        from fxlab.viz import trace_views

        console = Console(file=io.StringIO(), width=160)
        for graph in trace.graphs:
            for stage in graph.stages.values():
                console.print(trace_views.stage_view(graph, stage))
            console.print(trace_views.ir_view(graph))
        console.print(trace_views.summary_view(trace))
        result["render_s"] = time.perf_counter() - saved
    result["seconds"] = time.perf_counter() - start
    return result


def main() -> None:
    mode, layers, out = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    if mode == "aot_eager":
        result = time_aot_eager(layers)
    else:
        result = time_fxlab(layers, out, render=mode == "fxlab_render")
    print(json.dumps({"mode": mode, "layers": layers, **result}))


if __name__ == "__main__":
    main()
