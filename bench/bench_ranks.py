"""``fxlab trace --nproc 2`` on the tensor-parallel decoder layer against tracing one rank
alone, measured in the same run; then ``--nproc 4`` (slower on two cores, and correct).

The anchor is the same command for one rank: ``fxlab trace`` in one process with the
environment ``torchrun`` gives a world of one (no launcher, one rank's capture, checks
and views). The two commands alternate, each in a fresh process, timed from start to
exit (what the user waits for); the figure is the median of the pair ratios.
Goal: ``--nproc 2`` at most 1.5x one rank.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _bytecode import compile_fxlab

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "examples" / "distributed" / "tp_decoder.py"
GOAL_RATIO = 1.5


def _free_port() -> int:
    from torch.distributed.elastic.utils.distributed import get_free_port

    return get_free_port()


def timed(args: list[str], env: dict[str, str] | None = None) -> tuple[float, int, str]:
    """Wall seconds of ``fxlab trace ARGS`` in a fresh process, its exit code and status line."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "fxlab", "trace", *args, "--summary"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "FXLAB_WIDTH": "160", "NO_COLOR": "1", **(env or {})},
        timeout=1800,
    )
    status = next((line for line in reversed(proc.stdout.splitlines()) if line.startswith("status:")), proc.stderr.strip()[-200:])
    return time.perf_counter() - start, proc.returncode, status


def one_rank() -> tuple[float, int, str]:
    env = {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "LOCAL_WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(_free_port())}
    return timed([str(MODEL)], env)


def run(repeats: int) -> dict:
    anchors, twos, pairs = [], [], []
    for _ in range(repeats):
        anchor, code_a, _ = one_rank()
        two, code_2, status_2 = timed(["--nproc", "2", str(MODEL)])
        if code_a or code_2:
            raise SystemExit(f"a run failed (one rank: exit {code_a}; --nproc 2: exit {code_2}, {status_2})")
        anchors.append(anchor)
        twos.append(two)
        pairs.append(two / anchor)
    four, code_4, status_4 = timed(["--nproc", "4", str(MODEL)])
    return {
        "bench": "trace tensor-parallel decoder layer",
        "one_rank_s": statistics.median(anchors),
        "nproc2_s": statistics.median(twos),
        "ratio": statistics.median(pairs),
        "pair_ratios": pairs,
        "nproc4_s": four,
        "nproc4_ratio": four / statistics.median(anchors),
        "nproc4_status": f"exit {code_4}, {status_4}",
    }


def report(row: dict) -> str:
    verdict = "ok" if row["ratio"] <= GOAL_RATIO else "NOT MET"
    return (
        f"{row['bench']}: one rank {row['one_rank_s']:.2f}s, --nproc 2 {row['nproc2_s']:.2f}s, "
        f"ratio {row['ratio']:.2f}x  goal <= {GOAL_RATIO}x ({verdict})\n"
        f"  pair ratios {', '.join(f'{r:.2f}' for r in row['pair_ratios'])}\n"
        f"  --nproc 4 {row['nproc4_s']:.2f}s ({row['nproc4_ratio']:.2f}x one rank), {row['nproc4_status']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="pairs of runs; the median ratio is kept")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    compile_fxlab()
    row = run(args.repeat)
    print(json.dumps(row) if args.json else report(row))


if __name__ == "__main__":
    main()
