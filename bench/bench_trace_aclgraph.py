"""``fxlab trace --mode reduce-overhead --out`` (the aclgraph path: TorchAir's _optimize_fx
and aclgraph passes, the capture code, every view printed) on the Llama-style decoder at
32 layers, against ``torch.compile(backend="aot_eager")`` compile + first call on the same
model, measured as bench/bench_trace.py measures the default mode: each side in a fresh
process, anchor and fxlab alternating, the figure the median of the pairs' ratios. Each
round also runs the default mode (max-autotune), so the two modes are compared under the
same load. Goal: <= 1.25x at 32 layers.

    python bench/bench_trace_aclgraph.py [--layers 32] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from _bytecode import compile_fxlab
from bench_trace import GOAL_RATIO, PHASES, measure

MODE = "reduce-overhead"


def run(layer_counts: tuple[int, ...] = (32,), repeats: int = 3) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for layers in layer_counts:
            anchor, fxlab, default = [], [], []
            for i in range(repeats):
                anchor.append(measure("aot_eager", layers, Path(tmp)))
                fxlab.append(measure(f"fxlab:{MODE}", layers, Path(tmp) / f"out{layers}_{i}"))
                default.append(measure("fxlab", layers, Path(tmp) / f"default{layers}_{i}"))
            pairs = [f["seconds"] / a["seconds"] for a, f in zip(anchor, fxlab)]
            default_pairs = [d["seconds"] / a["seconds"] for a, d in zip(anchor, default)]
            rows.append(
                {
                    "bench": f"trace --mode {MODE} decoder {layers} layers",
                    "anchor_s": statistics.median(a["seconds"] for a in anchor),
                    "fxlab_s": statistics.median(f["seconds"] for f in fxlab),
                    "ratio": statistics.median(pairs),
                    "pair_ratios": pairs,
                    "cpu_ratio": statistics.median(f["cpu_s"] / a["cpu_s"] for a, f in zip(anchor, fxlab)),
                    "default_s": statistics.median(d["seconds"] for d in default),
                    "default_ratio": statistics.median(default_pairs),
                    "default_pair_ratios": default_pairs,
                    "default_cpu_ratio": statistics.median(d["cpu_s"] / a["cpu_s"] for a, d in zip(anchor, default)),
                    **{p: statistics.median(f[p] for f in fxlab) for p in PHASES},
                    "status": fxlab[-1]["status"],
                    "goal_met": statistics.median(pairs) <= GOAL_RATIO if layers == 32 else None,
                }
            )
    return rows


def report(row: dict) -> str:
    goal = f"  goal <= {GOAL_RATIO}x ({'ok' if row['goal_met'] else 'NOT MET'})" if row["goal_met"] is not None else ""
    return (
        f"{row['bench']:<44} aot_eager {row['anchor_s']:6.2f}s  fxlab {row['fxlab_s']:6.2f}s  ratio {row['ratio']:.2f}x{goal}\n"
        f"{'':<44} pair ratios {', '.join(f'{r:.2f}' for r in row['pair_ratios'])}; CPU-time ratio {row['cpu_ratio']:.2f}x\n"
        f"{'':<44} fxlab: capture {row['capture_s']:.2f}s, save {row['save_s']:.2f}s, print {row['print_s']:.2f}s; status {row['status']}\n"
        f"{'':<44} default mode, same rounds: fxlab {row['default_s']:6.2f}s  ratio {row['default_ratio']:.2f}x "
        f"(pairs {', '.join(f'{r:.2f}' for r in row['default_pair_ratios'])}); CPU-time ratio {row['default_cpu_ratio']:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, nargs="+", default=[32])
    parser.add_argument("--repeat", type=int, default=3, help="pairs of runs; the median ratio is kept")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON lines")
    args = parser.parse_args()
    compile_fxlab()
    for row in run(tuple(args.layers), args.repeat):
        print(json.dumps(row) if args.json else report(row))


if __name__ == "__main__":
    main()
