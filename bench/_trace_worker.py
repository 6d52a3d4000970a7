"""One timed measurement in a fresh process (so Dynamo caches never carry over).

    python bench/_trace_worker.py aot_eager|fxlab LAYERS OUT_DIR

Prints one JSON line: {"mode", "layers", "seconds", ...}.

``aot_eager``: ``torch.compile(model, backend="aot_eager")`` compile + first call, the
model built before the clock starts. ``fxlab``: the whole ``FXLAB_LAYERS=N fxlab trace
MODEL --out DIR`` command run in this process — loading the model file, capture,
saving, and printing every view to a colour terminal of 160 columns (captured in
memory) — with the phases timed apart. Both sides import their tool before the clock
starts (``torch``; ``fxlab.cli.main``).
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "llama_decoder.py"


def time_aot_eager(layers: int) -> dict:
    sys.path.insert(0, str(EXAMPLE.parent))
    from llama_decoder import build

    model, inputs = build(layers)
    with torch.no_grad():
        start = time.perf_counter()
        torch.compile(model, backend="aot_eager")(*inputs)
        return {"seconds": time.perf_counter() - start}


class _PhaseClock:
    """Wall time spent in the named functions of ``fxlab trace``, by patching them."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def wrap(self, owner: object, name: str, phase: str) -> None:
        fn = getattr(owner, name)

        def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[phase] = self.seconds.get(phase, 0.0) + time.perf_counter() - start

        setattr(owner, name, timed)


def time_fxlab(layers: int, out: Path) -> dict:
    os.environ["FORCE_COLOR"] = "1"  # render as to a terminal, colours included
    os.environ["FXLAB_WIDTH"] = "160"
    from fxlab.capture import save
    from fxlab.cli import trace as trace_cli
    from fxlab.cli.main import app

    clock = _PhaseClock()
    clock.wrap(trace_cli, "capture_model", "capture_s")
    clock.wrap(save, "save_trace", "save_s")
    clock.wrap(trace_cli, "_print_views", "print_s")
    printed = io.StringIO()
    os.environ["FXLAB_LAYERS"] = str(layers)  # the example's own layer-count knob
    args = ["trace", str(EXAMPLE), "--out", str(out)]
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
        start = time.perf_counter()
        app(args, standalone_mode=False)
        seconds = time.perf_counter() - start
    manifest = json.loads((out / "manifest.json").read_text())
    return {"seconds": seconds, **clock.seconds, "status": manifest["status"], "printed_mb": len(printed.getvalue()) / 1e6}


def main() -> None:
    mode, layers, out = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    result = time_aot_eager(layers) if mode == "aot_eager" else time_fxlab(layers, out)
    print(json.dumps({"mode": mode, "layers": layers, **result}))


if __name__ == "__main__":
    main()
