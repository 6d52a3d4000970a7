"""``fxlab trace --out`` (all stages, no pictures, every view printed) on the Llama-style
decoder at 8 and 32 layers, against ``torch.compile(backend="aot_eager")`` compile +
first call on the same model, measured in the same run. Each measurement runs in a
fresh process (bench/_trace_worker.py); the anchor and fxlab alternate so machine load
hits both alike. Each pair (anchor, then fxlab) gives a ratio; the figure is the median
of those ratios, which follows the load better than a ratio of medians (also printed).
The CPU-time ratio (process time, same pairs) is printed beside it: on a machine shared
with other work it moves far less than wall time.
Goal: <= 1.15x at 32 layers, median of 5 pairs (``--repeat 5``): the issue that rebuilt the
house asked that ``fxlab trace`` be no slower than this (it was <= 1.25x before).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _bytecode import compile_fxlab

WORKER = Path(__file__).with_name("_trace_worker.py")
GOAL_RATIO = 1.15
PHASES = ("capture_s", "save_s", "print_s")


def measure(mode: str, layers: int, out: Path) -> dict:
    proc = subprocess.run([sys.executable, str(WORKER), mode, str(layers), str(out)], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(layer_counts: tuple[int, ...] = (8, 32), repeats: int = 3) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for layers in layer_counts:
            anchor, anchor_runs, fxlab = [], [], []
            for i in range(repeats):
                anchor_runs.append(measure("aot_eager", layers, Path(tmp)))
                anchor.append(anchor_runs[-1]["seconds"])
                fxlab.append(measure("fxlab", layers, Path(tmp) / f"out{layers}_{i}"))
            a = statistics.median(anchor)
            f = statistics.median(r["seconds"] for r in fxlab)
            pairs = [r["seconds"] / s for s, r in zip(anchor, fxlab)]
            cpu_pairs = [r["cpu_s"] / a["cpu_s"] for a, r in zip(anchor_runs, fxlab)]
            phases = {p: statistics.median(r[p] for r in fxlab) for p in PHASES}
            faults = {"anchor_page_faults": statistics.median(r["page_faults"] for r in anchor_runs), "fxlab_page_faults": statistics.median(r["page_faults"] for r in fxlab)}
            rows.append({
                "bench": f"trace decoder {layers} layers", "anchor_s": a, "fxlab_s": f, "ratio": statistics.median(pairs),
                "ratio_of_medians": f / a, "pair_ratios": pairs, "cpu_ratio": statistics.median(cpu_pairs), **phases, **faults, "status": fxlab[-1]["status"],
            })
    return rows


def report(row: dict) -> str:
    goal = f"  goal <= {GOAL_RATIO}x ({'ok' if row['ratio'] <= GOAL_RATIO else 'NOT MET'})" if row["bench"].endswith("32 layers") else ""
    return (
        f"{row['bench']:<26} aot_eager {row['anchor_s']:6.2f}s  fxlab trace --out {row['fxlab_s']:6.2f}s  ratio {row['ratio']:.2f}x{goal}\n"
        f"{'':<26} pair ratios {', '.join(f'{r:.2f}' for r in row['pair_ratios'])}; ratio of the medians {row['ratio_of_medians']:.2f}x; CPU-time ratio {row['cpu_ratio']:.2f}x\n"
        f"{'':<26} fxlab: capture {row['capture_s']:.2f}s, save {row['save_s']:.2f}s, print {row['print_s']:.2f}s; status {row['status']}\n"
        f"{'':<26} minor page faults (median): aot_eager {row['anchor_page_faults']:,.0f}, fxlab {row['fxlab_page_faults']:,.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--repeat", type=int, default=3, help="pairs of runs; the median ratio is kept")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON lines")
    args = parser.parse_args()
    compile_fxlab()  # as torch's modules are (bench/_bytecode.py)
    for row in run(tuple(args.layers), args.repeat):
        print(json.dumps(row) if args.json else report(row))


if __name__ == "__main__":
    main()
