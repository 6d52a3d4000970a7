"""Benchmark: Ascend IR conversion of the 32-layer Llama-style decoder, and its dumps
(issue 4, "Speed").

The decoder (``examples/llama_decoder.py``, ``build(32)``) is captured once with
``fxlab.capture.capture_trace`` (functional stage and Ascend IR, no CPU check). Then, in
the same run:

- conversion alone: ``convert_to_ascend_ir`` on the functional graph, best of
  ``--repeat``, in FX nodes per second. Goal: >= 100k nodes/s. Each run starts with an
  empty replay cache (templates live in one conversion); the same conversion with
  ``replay=False`` (every converter runs) is timed too, so the converters' own cost
  stays visible.
- all four dumps: ``write_ir_dumps`` (JSON, pb, pbtxt, py, with files) of the converted
  graph into a new folder, as a trace writes into a new ``--out`` folder, best of
  ``--repeat``. Goal: <= 2x the conversion time. Each round's folder is deleted after
  it is timed. The same dumps over the files of an earlier dump (a trace written again
  into the same ``--out``) are timed too: replacing a file makes the kernel free the old
  file's pages at once, in this process, which adds several ms.
- the conversion step of a trace (conversion + the output-reuse pass, as
  ``capture_trace`` records it in ``ir_summary["seconds"]``), from the one capture; the
  converters are imported before it, and that import is reported apart.

The conversions and the dumps run in turn, once per round (``--repeat`` rounds), so
that the ratio compares runs made under the same machine load. The ratio of the best
runs is the goal's figure; the median of each round's own dumps / conversion ratio is
printed beside it, a steadier figure when the machine's speed drifts.

The conversion's template replay and the dumps' per-op loops run in C when fxlab's C
loops are built (``fxlab/ir/speedups.py``; the first line says which); ``--python-loops``
measures the same code without them.

Times are CPU time of this process (steadier than wall time on a shared machine); the
best of several runs is reported. Run: ``python bench/bench_convert.py [--layers 32]``.
``--json`` prints one JSON line of the figures (``bench/run.py`` reads it).
"""
from __future__ import annotations

import argparse
import gc
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "llama_decoder.py"

GOAL_NODES_PER_S = 100_000
GOAL_DUMP_RATIO = 2.0


def import_converters() -> float:
    """Seconds to import fxlab's converters (once per process, on the first conversion);
    timed apart so the trace's conversion step shows the conversion alone."""
    start = time.perf_counter()
    import fxlab.passes.converters  # noqa: F401

    return time.perf_counter() - start


def capture_decoder(layers: int) -> tuple[Any, float]:
    """The decoder's functional graph module and the trace's own conversion seconds."""
    from fxlab.capture import LoadedModel, capture_trace

    sys.path.insert(0, str(EXAMPLE.parent))
    from llama_decoder import build

    model, inputs = build(layers)
    loaded = LoadedModel(fn=model, args=inputs, path=EXAMPLE, entry=f"build({layers})")
    trace = capture_trace(loaded, stages=("functional", "ascend_ir"), verify=False)
    if len(trace.graphs) != 1:
        raise RuntimeError(f"expected one Dynamo graph, got {len(trace.graphs)}")
    graph = trace.graphs[0]
    return graph.modules["functional"], graph.ir_summary["seconds"]


def best_cpu_seconds(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The smallest CPU time of ``repeat`` calls (garbage collected before each)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        result = None
        gc.collect()
        start = time.process_time()
        result = fn()
        best = min(best, time.process_time() - start)
    return best, result


def best_of_all(gm: Any, repeat: int, folder: Path) -> tuple[dict[str, float], list[float], Any]:
    """Best CPU seconds of the conversion with and without replay and of the four dumps
    (into a new folder, and over an earlier dump's files), run in turn in each of
    ``repeat`` rounds so that all see the same machine load (its speed drifts within
    minutes); each round's dumps / conversion ratio; and a conversion result (with
    replay)."""
    from fxlab.ir.dumps import write_ir_dumps
    from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir

    best = dict.fromkeys(("replay", "no_replay", "dumps", "dumps_over"), float("inf"))
    result = convert_to_ascend_ir(gm, "graph_0")
    earlier = folder / "earlier"
    write_ir_dumps(result.graph, earlier, fx_graph=gm)  # the files the "over" runs replace
    ratios = []
    for k in range(repeat):
        new = folder / f"round_{k}"  # made by write_ir_dumps, as a new --out folder is
        jobs = {
            "replay": lambda: convert_to_ascend_ir(gm, "graph_0"),
            "no_replay": lambda: convert_to_ascend_ir(gm, "graph_0", replay=False),
            "dumps": lambda: write_ir_dumps(result.graph, new, fx_graph=gm),
            "dumps_over": lambda: write_ir_dumps(result.graph, earlier, fx_graph=gm),
        }
        seconds = {name: best_cpu_seconds(job, 1)[0] for name, job in jobs.items()}
        shutil.rmtree(new)  # not timed: deleting a dump is no part of making one
        for name, value in seconds.items():
            best[name] = min(best[name], value)
        ratios.append(seconds["dumps"] / seconds["replay"])
    return best, ratios, result


def measure(layers: int, repeat: int) -> dict[str, Any]:
    from fxlab.ir import speedups
    from fxlab.passes.convert_to_ascend_ir import Status

    import_s = import_converters()
    gm, trace_step = capture_decoder(layers)
    nodes = len(gm.graph.nodes)
    with tempfile.TemporaryDirectory() as tmp:
        best, ratios, result = best_of_all(gm, repeat, Path(tmp))
    placeholders = sum(n.status in (Status.UNSUPPORTED, Status.RAISED) for n in result.nodes)
    return {
        "bench": f"convert decoder {layers} layers",
        "loops": speedups.describe(),
        "fx_nodes": nodes,
        "ge_ops": len(result.graph.ops),
        "placeholders": placeholders,
        "convert_s": best["replay"],
        "nodes_per_s": nodes / best["replay"],
        "convert_no_replay_s": best["no_replay"],
        "nodes_per_s_no_replay": nodes / best["no_replay"],
        "dumps_s": best["dumps"],
        "dump_ratio": best["dumps"] / best["replay"],
        "dump_ratio_median_round": statistics.median(ratios),
        "dumps_over_s": best["dumps_over"],
        "dump_over_ratio": best["dumps_over"] / best["replay"],
        "trace_step_s": trace_step,
        "import_s": import_s,
    }


def report(row: dict[str, Any]) -> str:
    speed_ok = "ok" if row["nodes_per_s"] >= GOAL_NODES_PER_S else "BELOW GOAL"
    ratio_ok = "ok" if row["dump_ratio"] <= GOAL_DUMP_RATIO else "ABOVE GOAL"
    return "\n".join([
        f"{row['bench']}: {row['fx_nodes']} FX nodes -> {row['ge_ops']} GE ops ({row['placeholders']} placeholders), {row['loops']}",
        f"  conversion   {row['convert_s'] * 1e3:8.1f} ms  {row['nodes_per_s']:10,.0f} FX nodes/s   goal >= {GOAL_NODES_PER_S:,} ({speed_ok})",
        f"  no replay    {row['convert_no_replay_s'] * 1e3:8.1f} ms  {row['nodes_per_s_no_replay']:10,.0f} FX nodes/s   every converter runs",
        f"  four dumps   {row['dumps_s'] * 1e3:8.1f} ms  {row['dump_ratio']:10.2f}x conversion    goal <= {GOAL_DUMP_RATIO:.0f}x ({ratio_ok}), into a new folder",
        f"                            {row['dump_ratio_median_round']:10.2f}x median of the rounds' own ratios",
        f"  over earlier {row['dumps_over_s'] * 1e3:8.1f} ms  {row['dump_over_ratio']:10.2f}x conversion    "
        "the same dumps replacing an earlier dump's files",
        f"  in a trace   {row['trace_step_s'] * 1e3:8.1f} ms  conversion + output reuse, first run, wall time "
        f"(+ {row['import_s'] * 1e3:.0f} ms once per process to import the converters)",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=32)
    # Many rounds: the machine's speed drifts by up to 1.5x within minutes, and the best
    # of a few rounds often holds none from a quiet moment.
    parser.add_argument("--repeat", type=int, default=25, help="rounds; the best run of each figure is kept")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    parser.add_argument("--python-loops", action="store_true", help="leave out fxlab's C loops (fxlab/ir/speedups.py)")
    args = parser.parse_args()
    if args.python_loops:
        from fxlab.ir import speedups

        speedups.native = None
    row = measure(args.layers, args.repeat)
    print(json.dumps(row) if args.json else report(row))


if __name__ == "__main__":
    main()
