"""One timed measurement in a fresh process (so Dynamo caches never carry over).

    python bench/_trace_worker.py aot_eager|fxlab|fxlab:MODE LAYERS OUT_DIR [--off SPEEDUP]

Prints one JSON line: {"mode", "layers", "seconds", ...}.

``aot_eager``: ``torch.compile(model, backend="aot_eager")`` compile + first call, the
model built before the clock starts. ``fxlab``: the whole ``FXLAB_LAYERS=N fxlab trace
MODEL --out DIR`` command run in this process — loading the model file, capture,
saving, and printing every view to a colour terminal of 160 columns (captured in
memory) — with the phases timed apart. Both sides import their tool before the clock
starts (``torch``; ``fxlab.cli.main``). ``fxlab:reduce-overhead`` runs the command with
``--mode reduce-overhead``. ``--off`` turns one of fxlab's speed-ups off
(see :data:`SPEEDUPS_OFF`; bench/bench_speedups.py).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
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
        start, cpu_start, faults = time.perf_counter(), time.process_time(), _page_faults()
        torch.compile(model, backend="aot_eager")(*inputs)
        return {"seconds": time.perf_counter() - start, "cpu_s": time.process_time() - cpu_start, "page_faults": _page_faults() - faults}


def _page_faults() -> int:
    """Minor page faults so far: fresh memory the process touched (counted, so steadier than time)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


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


def _readable_fast_off() -> None:
    from fxlab.capture import readable

    readable.fast_print_readable = lambda gm: None  # torch's print_readable for every graph


def _fast_lines_off() -> None:
    """Large stages and the IR table through rich's Panel and Table."""
    from rich.panel import Panel
    from rich.text import Text

    from fxlab.viz import fast_lines, trace_views

    def rich_panel(lines, title, border_style):  # type: ignore[no-untyped-def]
        text = Text()
        for line in lines[:-1]:
            text.append(line.text, style=line.style)
            if line.tag:
                text.append(line.tag, style=line.tag_style)
            text.append("\n")
        return Panel(text, title=title, title_align="left", border_style=border_style)

    trace_views.LinesPanel = rich_panel
    fast_lines.LinesTable.column_widths = lambda self, max_width: None  # its rich Table fallback


def _heap_off() -> None:
    """The collector as Python sets it: no command-wide settings (fxlab/heap.py)."""
    from fxlab import heap

    heap.long_lived_heap = contextlib.nullcontext  # type: ignore[assignment]


def _stack_room_off() -> None:
    """Dynamo's frames in CPython's default 16 KB stack chunks, wherever the caller's depth puts the boundaries."""
    from fxlab.capture import pipeline

    pipeline.with_stack_room = lambda fn, *args, **kwargs: fn(*args, **kwargs)


def _progress_line_off() -> None:
    """The progress line as rich's Status draws it: a spinner redrawn 12.5 times a second
    from its own thread (fxlab/cli/console.py redraws once a second)."""
    from fxlab.cli import console

    console.PROGRESS_REDRAWS_PER_SECOND = 12.5


SPEEDUPS_OFF = {
    "readable_fast": _readable_fast_off,
    "fast_lines": _fast_lines_off,
    "heap": _heap_off,
    "stack_room": _stack_room_off,
    "progress_line": _progress_line_off,
}


def time_fxlab(layers: int, out: Path, mode: str | None = None) -> dict:
    os.environ["FORCE_COLOR"] = "1"  # render as to a terminal, colours included
    os.environ["FXLAB_WIDTH"] = "160"
    from fxlab.cli import trace_command as trace_cli
    from fxlab.cli.main import app

    clock = _PhaseClock()  # the names `fxlab trace` calls them by (fxlab/cli/trace_command.py)
    clock.wrap(trace_cli, "capture_request", "capture_s")
    clock.wrap(trace_cli, "save_trace", "save_s")
    clock.wrap(trace_cli, "print_views", "print_s")
    printed = io.StringIO()
    os.environ["FXLAB_LAYERS"] = str(layers)  # the example's own layer-count knob
    args = ["trace", str(EXAMPLE), "--out", str(out)] + (["--mode", mode] if mode else [])
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
        start, cpu_start, faults = time.perf_counter(), time.process_time(), _page_faults()
        app(args, standalone_mode=False)
        seconds = time.perf_counter() - start
        cpu = time.process_time() - cpu_start
        faults = _page_faults() - faults
    manifest = json.loads((out / "manifest.json").read_text())
    return {
        "seconds": seconds,
        "cpu_s": cpu,
        "page_faults": faults,
        **clock.seconds,
        "status": manifest["status"],
        "printed_mb": len(printed.getvalue()) / 1e6,
    }


def main() -> None:
    mode, layers, out = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    if "--off" in sys.argv:
        SPEEDUPS_OFF[sys.argv[sys.argv.index("--off") + 1]]()
    tool, _, fxlab_mode = mode.partition(":")
    result = time_aot_eager(layers) if tool == "aot_eager" else time_fxlab(layers, out, fxlab_mode or None)
    print(json.dumps({"mode": mode, "layers": layers, **result}))


if __name__ == "__main__":
    main()
