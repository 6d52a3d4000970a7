"""fxlab trace (all stages, --out, no pictures) on the Llama-style decoder at 8 and 32
layers, against torch.compile(backend="aot_eager") compile + first call on the same
model, measured in the same run. Each measurement runs in a fresh process; the anchor and
fxlab alternate so machine load hits both alike. Goal: <= 1.25x at 32 layers.
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

WORKER = Path(__file__).with_name("_trace_worker.py")


def measure(mode: str, layers: int, out: Path) -> dict:
    proc = subprocess.run([sys.executable, str(WORKER), mode, str(layers), str(out)], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(layer_counts: tuple[int, ...] = (8, 32), repeats: int = 2) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for layers in layer_counts:
            anchor, fxlab, render = [], [], []
            for i in range(repeats):
                anchor.append(measure("aot_eager", layers, Path(tmp))["seconds"])
                result = measure("fxlab_render" if i == 0 else "fxlab", layers, Path(tmp) / f"out{layers}")
                fxlab.append(result["seconds"] - result.get("render_s", 0.0))
                if "render_s" in result:
                    render.append(result["render_s"])
            a, f = statistics.median(anchor), statistics.median(fxlab)
            rows.append({"bench": f"trace decoder {layers} layers", "anchor_s": a, "fxlab_s": f, "ratio": f / a, "render_s": render[0] if render else None, "nodes": result["nodes"]})
    return rows


def main() -> None:
    for row in run():
        print(
            f"{row['bench']:<28} aot_eager {row['anchor_s']:6.2f}s  fxlab trace --out {row['fxlab_s']:6.2f}s  "
            f"ratio {row['ratio']:.2f}x  (functional graph {row['nodes']} nodes; printing all views +{row['render_s']:.2f}s)"
        )


if __name__ == "__main__":
    main()
