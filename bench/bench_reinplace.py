"""The ``reinplaced`` stage on the Llama-style decoder's functional graph (32 layers):
``reinplace(gm)`` timed in a fresh process, imports included (what a ``fxlab trace`` run
pays), fxlab's path against Inductor's reference path (``inductor_only=True``, what the
stage did before), alternating. Goal: <= 0.3 s. Each measurement is its own process;
best-of-N against noise.

    python bench/bench_reinplace.py [layers] [repeats]
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "llama_decoder.py"


def _worker(layers: int, mode: str) -> None:
    from fxlab.capture.loader import load_python_file, LoadedModel
    from fxlab.capture.pipeline import capture_trace

    module = load_python_file(EXAMPLE)
    model, args = module.build(layers)
    trace = capture_trace(LoadedModel(fn=model, args=args, path=EXAMPLE, entry="build"), stages=("functional",), verify=False)
    gm = trace.graphs[0].modules["functional"]
    loaded_before = "torch._inductor.fx_passes.reinplace" in sys.modules
    wall, cpu = time.perf_counter(), time.process_time()
    from fxlab.passes.reinplace import reinplace

    reinplace(gm, inductor_only=mode == "inductor")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    nodes = len(gm.graph.nodes)
    print(json.dumps({"seconds": wall, "cpu_s": cpu, "nodes": nodes, "inductor_preloaded": loaded_before}))


def measure(layers: int, mode: str) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--worker", str(layers), mode], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        _worker(int(sys.argv[2]), sys.argv[3])
        return
    layers = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    runs: dict[str, list[dict]] = {"inductor": [], "fxlab": []}
    for _ in range(repeats):
        for mode in runs:
            runs[mode].append(measure(layers, mode))
    for mode, rows in runs.items():
        wall, cpu = min(r["seconds"] for r in rows), min(r["cpu_s"] for r in rows)
        goal = "  (goal <= 0.3 s)" if mode == "fxlab" else "  (Inductor's passes: the reference, and the stage before)"
        print(f"reinplace decoder {layers} layers ({rows[0]['nodes']} nodes), {mode:<8}: best wall {wall:.3f}s  best cpu {cpu:.3f}s  over {repeats} fresh processes{goal}")


if __name__ == "__main__":
    main()
