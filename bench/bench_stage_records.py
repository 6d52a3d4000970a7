"""Benchmark: what ``fxlab trace --out`` does with the captured stages (issue 2, "Speed").

After capture, the pipeline runs the stage analyses (scope annotation) on each stage,
records five stages (the functional one twice: before and after the conversion to
Ascend IR), lists the mutated inputs, and ``save_trace`` writes each stage's ``.py``
and ``.json`` and the manifest. Goal: all of that together <= 0.8 s on the 32-layer
decoder (about 3,500 FX nodes per ATen stage). The Ascend IR dumps are measured in
``bench_ir_dumps.py`` and left out here.

The decoder is captured once (the slow part, not timed); each piece is then timed on
the captured modules, best of ``--repeat`` runs in CPU time of this process.
Run: ``python bench/bench_stage_records.py [--layers 32]``.
"""

from __future__ import annotations

import argparse
import copy
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STAGES = ("dynamo", "aten", "functional", "pre_ge")
GOAL_S = 0.8


def best_of(repeat: int, fn: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def capture(layers: int) -> Any:
    """The decoder's capture: its trace, and the live graph modules the records are made from."""
    from fxlab.session import TraceRequest, capture

    sys.path.insert(0, str(ROOT / "examples"))
    from llama_decoder import build

    model, inputs = build(layers)
    return capture(TraceRequest(model, inputs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    from fxlab.capture.readable import clear_readable_cache, readable_code
    from fxlab.capture.record_graph import STAGE_ANALYSES, mutated_inputs
    from fxlab.capture.records import stage_from_module
    from fxlab.cli.files import save_trace

    captured = capture(args.layers)
    trace = captured.trace
    modules = captured.graphs[0].modules
    without_ir = copy.copy(trace)
    without_ir.graphs = [copy.copy(g) for g in trace.graphs]
    for graph in without_ir.graphs:
        graph.ir, graph.ir_py = None, None

    def analyses() -> None:
        for module in modules.values():
            for analysis in STAGE_ANALYSES:
                analysis(module)

    def records() -> None:
        clear_readable_cache()
        stage_from_module("functional", modules["functional"])
        for name in STAGES:
            stage_from_module(name, modules[name])

    def code() -> None:
        clear_readable_cache()
        for name in ("functional", *STAGES):
            readable_code(modules[name])

    with tempfile.TemporaryDirectory() as tmp:
        pieces = {
            "analyses": best_of(args.repeat, analyses),
            "stage records (5)": best_of(args.repeat, records),
            "  of which code": best_of(args.repeat, code),
            "mutated inputs": best_of(args.repeat, lambda: mutated_inputs(modules)),
            "save without IR": best_of(args.repeat, lambda: save_trace(without_ir, Path(tmp) / "t")),
        }
    nodes = {name: len(modules[name].graph.nodes) for name in STAGES}
    print(f"{args.layers} layers, FX nodes per stage: {nodes}")
    for label, seconds in pieces.items():
        print(f"  {label:18s} {seconds * 1e3:8.1f} ms")
    total = sum(s for label, s in pieces.items() if not label.startswith(" "))
    verdict = "met" if total <= GOAL_S else "not met"
    print(f"after capture, all pieces: {total * 1e3:.1f} ms (goal <= {GOAL_S * 1e3:.0f} ms: {verdict})")


if __name__ == "__main__":
    main()
