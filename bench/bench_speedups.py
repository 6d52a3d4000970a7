"""Each speed-up fxlab keeps, on and off, on the whole 32-layer trace.

A speed-up stays in the tree only if it saves at least 2% of the wall time of
``fxlab trace examples/llama_decoder.py --entry layers_32 --out DIR`` (the command, as
bench/_trace_worker.py runs it). Each variant turns one speed-up off by patching it in
the worker process before the command runs; the variants run in turn, round after
round, each in a fresh process, so machine load hits them alike. Printed per variant:
the median wall and CPU seconds, and the change against "all on".

    python bench/bench_speedups.py [--rounds 3] [--layers 32] [--only stack_room ...]
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
BAR = 0.02  # the share of the wait a speed-up must save to stay
VARIANTS = ("all on", "readable_fast", "fast_lines", "heap", "stack_room", "progress_line")


def measure(layers: int, out: Path, off: str) -> dict:
    args = [sys.executable, str(WORKER), "fxlab", str(layers), str(out)]
    if off != "all on":
        args += ["--off", off]
    proc = subprocess.run(args, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(layers: int, rounds: int, variants: tuple[str, ...] = VARIANTS) -> dict[str, list[dict]]:
    results: dict[str, list[dict]] = {v: [] for v in variants}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for variant in variants:
                results[variant].append(measure(layers, Path(tmp) / f"{variant.replace(' ', '_')}_{r}", variant))
                print(f"round {r + 1}: {variant:<18} {results[variant][-1]['seconds']:6.2f} s", file=sys.stderr)
    return results


def report(results: dict[str, list[dict]]) -> list[str]:
    base_wall = statistics.median(r["seconds"] for r in results["all on"])
    base_cpu = statistics.median(r["cpu_s"] for r in results["all on"])
    lines = [f"{'off':<18} {'wall (median)':>14} {'cpu (median)':>13} {'saves (wall)':>13} {'saves (cpu)':>12}  verdict"]
    for variant, runs in results.items():
        wall = statistics.median(r["seconds"] for r in runs)
        cpu = statistics.median(r["cpu_s"] for r in runs)
        saves_wall, saves_cpu = (wall - base_wall) / wall, (cpu - base_cpu) / cpu
        verdict = "" if variant == "all on" else ("keep" if saves_cpu >= BAR else "under the 2% bar")
        lines.append(f"{variant:<18} {wall:13.2f}s {cpu:12.2f}s {saves_wall:12.1%} {saves_cpu:11.1%}  {verdict}")
        walls = ", ".join(f"{r['seconds']:.2f}" for r in runs)
        cpus = ", ".join(f"{r['cpu_s']:.2f}" for r in runs)
        faults = statistics.median(r["page_faults"] for r in runs)
        lines.append(f"{'':<18} walls {walls}; cpus {cpus}; page faults {faults:,.0f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", nargs="+", choices=VARIANTS[1:], help="measure only these speed-ups off (and all on)")
    args = parser.parse_args()
    compile_fxlab()  # as torch's modules are (bench/_bytecode.py)
    variants = ("all on", *args.only) if args.only else VARIANTS
    print("\n".join(report(run(args.layers, args.rounds, variants))))


if __name__ == "__main__":
    main()
