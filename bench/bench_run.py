"""``fxlab run -- python PROGRAM`` against the same program with ``backend="aot_eager"``:
what running a program under fxlab adds to it.

The program (bench/_run_program.py) builds the Llama-style decoder at 8 and 32 layers,
compiles it as serving code does, one static graph per prompt length (``dynamic=False``),
and calls it as a warm-up does (lengths 4 and 8, then steps at 8): two compiles, so
fxlab saves two traces, each with every stage, the Ascend IR, the checks (eager against
compiled on the call's snapshot, the Ascend IR on CPU), and prints its table. The anchor
runs the same program with ``torch.compile(backend="aot_eager")`` and no fxlab. Each side
is the whole command in a fresh process (the interpreter, torch's import, the program),
which is what the user waits for; the sides alternate, each pair (anchor, then fxlab)
gives a ratio, and the figure is the median of those ratios. Goal: <= 1.3x at 32 layers
(at 8, fxlab's own start and end, about 0.7 s, weigh more).

``--dynamic`` compiles with Dynamo's default instead: the recompile makes the length
symbolic, and fxlab traces that graph's ``aten`` stage with a second ``make_fx`` trace
(its recorder of aot's own trace takes static shapes only), which this figure shows.

    python bench/bench_run.py [--layers 8 32] [--repeat 3] [--dynamic] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bytecode import compile_fxlab

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "bench" / "_run_program.py"
GOAL_RATIO = 1.3


def command(side: str, layers: int, out: Path, dynamic: bool = False) -> list[str]:
    program = [sys.executable, str(PROGRAM), "aot_eager" if side == "aot_eager" else "npu", str(layers), *(["dynamic"] if dynamic else [])]
    return program if side == "aot_eager" else [sys.executable, "-m", "fxlab", "run", "--out", str(out), "--", *program]


def measure(side: str, layers: int, out: Path, dynamic: bool = False) -> float:
    """Seconds the whole command took, in a fresh process."""
    start = time.perf_counter()
    done = subprocess.run(command(side, layers, out, dynamic), capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{side} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return seconds


def run(layer_counts: tuple[int, ...] = (8, 32), repeats: int = 3, dynamic: bool = False) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for layers in layer_counts:
            anchor, fxlab = [], []
            for i in range(repeats):
                anchor.append(measure("aot_eager", layers, Path(tmp), dynamic))
                fxlab.append(measure("fxlab", layers, Path(tmp) / f"run{layers}_{i}", dynamic))
            pairs = [f / a for a, f in zip(anchor, fxlab)]
            status = json.loads((Path(tmp) / f"run{layers}_{repeats - 1}" / "manifest.json").read_text())
            rows.append(
                {
                    "bench": f"run decoder {layers} layers{' dynamic' if dynamic else ''}",
                    "anchor_s": statistics.median(anchor),
                    "fxlab_s": statistics.median(fxlab),
                    "ratio": statistics.median(pairs),
                    "pair_ratios": pairs,
                    "traces": [(row["folder"], row["status"]) for row in status["traces"]],
                }
            )
    return rows


def report(row: dict) -> str:
    verdict = "ok" if row["ratio"] <= GOAL_RATIO else "NOT MET"
    goal = f"  goal <= {GOAL_RATIO}x ({verdict})" if row["bench"] == "run decoder 32 layers" else ""
    return (
        f"{row['bench']:<32} aot_eager {row['anchor_s']:6.2f}s  fxlab run {row['fxlab_s']:6.2f}s  ratio {row['ratio']:.2f}x{goal}\n"
        f"{'':<32} pair ratios {', '.join(f'{r:.2f}' for r in row['pair_ratios'])}; traces {row['traces']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--repeat", type=int, default=3, help="pairs of runs; the median ratio is kept")
    parser.add_argument("--dynamic", action="store_true", help="compile with Dynamo's default: the recompile is dynamic")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON lines")
    args = parser.parse_args()
    compile_fxlab()  # as torch's modules are (bench/_bytecode.py)
    for row in run(tuple(args.layers), args.repeat, args.dynamic):
        print(json.dumps(row) if args.json else report(row))


if __name__ == "__main__":
    main()
