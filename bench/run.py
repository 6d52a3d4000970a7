"""Run every benchmark in ``bench/`` (each ``bench_*.py``, in a fresh process) and print
their outputs, then one summary of the figures measured against a goal or an anchor.

    python bench/run.py                   # all of them
    python bench/run.py --only convert    # those whose name contains "convert"
    python bench/run.py --skip trace      # all but the trace benchmark (the slowest)

Benchmarks are not tests: on a shared machine figures vary from run to run, so each
benchmark reports the best (or median) of several runs itself.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
# A figure worth a summary line: a ratio ("1.23x") or a rate against a goal ("goal >=").
_FIGURE = re.compile(r"\d[\d.,]*x\b|goal|nodes/s")


def benchmarks(only: list[str], skip: list[str]) -> list[Path]:
    found = sorted(BENCH_DIR.glob("bench_*.py"))
    if only:
        found = [p for p in found if any(word in p.stem for word in only)]
    return [p for p in found if not any(word in p.stem for word in skip)]


def run_one(path: Path) -> tuple[int, str, float]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, cwd=BENCH_DIR.parent)
    output = proc.stdout + (proc.stderr if proc.returncode else "")
    return proc.returncode, output, time.perf_counter() - start


def summary_lines(name: str, output: str) -> list[str]:
    lines = []
    for line in output.splitlines():
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except ValueError:
                data = None
            if isinstance(data, dict):
                lines.append(f"{name}: {data}")
                continue
        if _FIGURE.search(line):
            lines.append(f"{name}: {line.strip()}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], help="run benchmarks whose name contains this (repeatable)")
    parser.add_argument("--skip", action="append", default=[], help="skip benchmarks whose name contains this (repeatable)")
    args = parser.parse_args()
    failed, summary = 0, []
    for path in benchmarks(args.only, args.skip):
        print(f"== {path.name}", flush=True)
        code, output, seconds = run_one(path)
        print(output.rstrip())
        print(f"   ({seconds:.0f} s{'' if code == 0 else f', FAILED with exit code {code}'})\n", flush=True)
        failed += code != 0
        summary += summary_lines(path.stem, output)
    print("== summary")
    print("\n".join(summary) if summary else "(no figures)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
