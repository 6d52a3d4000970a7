"""``fxlab trace`` on each model of examples/models/ against ``torch.compile(backend=
"aot_eager")`` compile + first call on the same model, measured in the same run, each
measurement in a fresh process (bench/_model_worker.py), anchor and fxlab alternating.
The figure per model is the median of the pair ratios. Goal: <= 1.5x on each (small
graphs, where fixed costs dominate). Skips every model when transformers is missing.

    python bench/bench_models.py [--repeat N] [--only NAME ...]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
from pathlib import Path

from _bytecode import compile_fxlab

ROOT = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).with_name("_model_worker.py")
MODELS = ROOT / "examples" / "models"
GOAL_RATIO = 1.5
CASES = [
    ("gpt2", None), ("bert", None), ("llama_static_cache", None), ("llama_static_cache", "decode_step"), ("qwen2", None),
    ("mixtral_moe", None), ("t5", None), ("vit", None), ("resnet18", None), ("ascend_decoder_layer", None),
]


def measure(mode: str, name: str, entry: str | None) -> dict:
    args = [sys.executable, str(WORKER), mode, str(MODELS / f"{name}.py")] + ([entry] if entry else [])
    proc = subprocess.run(args, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(cases: list[tuple[str, str | None]], repeats: int) -> list[dict]:
    rows = []
    for name, entry in cases:
        pairs, anchor, fxlab = [], [], []
        for _ in range(repeats):
            a, f = measure("aot_eager", name, entry), measure("fxlab", name, entry)
            anchor.append(a["seconds"])
            fxlab.append(f)
            pairs.append(f["seconds"] / a["seconds"])
        label = name + (f" --entry {entry}" if entry else "")
        rows.append({
            "bench": label, "anchor_s": statistics.median(anchor), "fxlab_s": statistics.median(r["seconds"] for r in fxlab),
            "ratio": statistics.median(pairs), "pair_ratios": pairs, "status": fxlab[-1]["status"],
        })
    return rows


def report(row: dict) -> str:
    verdict = "ok" if row["ratio"] <= GOAL_RATIO else "NOT MET"
    return (
        f"{row['bench']:<38} aot_eager {row['anchor_s']:6.2f}s  fxlab trace {row['fxlab_s']:6.2f}s  "
        f"ratio {row['ratio']:.2f}x  goal <= {GOAL_RATIO}x ({verdict})  [{row['status']}]"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="pairs of runs per model; the median ratio is kept")
    parser.add_argument("--only", nargs="*", default=[], help="model names to run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    compile_fxlab()  # as torch's modules are (bench/_bytecode.py)
    if importlib.util.find_spec("transformers") is None:
        print("bench_models: skipped, transformers is not installed (pip install fxlab[models])")
        return
    cases = [c for c in CASES if not args.only or c[0] in args.only]
    rows = run(cases, args.repeat)
    print(json.dumps(rows, indent=2) if args.json else "\n".join(report(r) for r in rows))


if __name__ == "__main__":
    main()
