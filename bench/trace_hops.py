"""How a ``fxlab trace --out`` run moves through fxlab's rooms: which modules it visits,
and the hops at the top, counted deterministically (no timing).

The run is ``fxlab trace MODEL --out DIR`` in this process, watched with
``sys.setprofile``. A *top-level hop* is a call from the command's driver (the command,
the capture session, the pipeline and the graph recorder: the code that says what
happens in which order) into another room than the previous such call went to; calls
within a room, and calls a room makes below itself, are not hops. The figure the house
is judged on is the sequence of rooms the driver walks through, printed in order.

    python bench/trace_hops.py [MODEL.py]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Who says what happens in which order: the command, and the capture under it.
DRIVERS = {
    "command": ("fxlab.cli.trace_command", "fxlab.cli.common", "fxlab.session.capture_session"),
    "capture": ("fxlab.capture.pipeline", "fxlab.capture.record_graph"),
}


def room(module: str) -> str:
    parts = module.split(".")
    if len(parts) > 2 and parts[1] in ("capture",) and parts[2] == "checks":
        return "capture.checks"
    return parts[1] if len(parts) > 2 else "base"


def run(argv: list[str]) -> None:
    from fxlab.cli.main import main

    try:
        main(argv)
    except SystemExit:
        pass


def watch(argv: list[str]) -> tuple[dict[str, list[str]], set[str]]:
    """The driver's room sequence (consecutive repeats folded) and every module visited,
    on a second run: the first imports every module, so import-time calls (registrations)
    are not counted as the run's."""
    run(argv)

    hops: dict[str, list[str]] = {name: [] for name in DRIVERS}
    visited: set[str] = set()

    def profile(frame, event, arg):  # noqa: ANN001 - sys.setprofile's signature
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("fxlab."):
            return
        visited.add(module)
        caller = frame.f_back.f_globals.get("__name__", "") if frame.f_back else ""
        for name, drivers in DRIVERS.items():
            # A driver's call into another room (the base's helpers and the callbacks a
            # capture makes to the command line's progress are not steps).
            if caller in drivers and room(module) != room(caller) and room(module) not in ("base", "cli"):
                walk = hops[name]
                if not walk or walk[-1] != room(module):
                    walk.append(room(module))

    sys.setprofile(profile)
    try:
        run(argv)
    finally:
        sys.setprofile(None)
    return hops, visited


def main() -> None:
    model = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "examples" / "my_inplace.py")
    with tempfile.TemporaryDirectory() as tmp:
        hops, visited = watch(["trace", model, "--out", str(Path(tmp) / "out"), "--summary"])
    print(f"fxlab trace {Path(model).name} --out: {len(visited)} fxlab modules visited")
    for name, walk in hops.items():
        print(f"  {name}: {len(walk)} top-level hops: {' → '.join(walk)}")
    rooms: dict[str, list[str]] = {}
    for module in sorted(visited):
        rooms.setdefault(room(module), []).append(module.split(".")[-1])
    for name, modules in rooms.items():
        print(f"  {name} ({len(modules)}): {', '.join(modules)}")


if __name__ == "__main__":
    main()
