"""One timed measurement of a model example in a fresh process.

    python bench/_model_worker.py aot_eager|fxlab MODEL.py [ENTRY]

Prints one JSON line: {"mode", "model", "seconds", "status"}.

``aot_eager``: loading the model file and building the model (as the command does), then
``torch.compile(model, backend="aot_eager")`` compile + first call. ``fxlab``: the whole
``fxlab trace MODEL [--entry ENTRY]`` command in this process (loading the model file,
capture, conversion, the IR check, every view printed, captured in memory). Both sides
import torch and transformers (when installed) before the clock starts, and fxlab's CLI
too; the model's own modules (transformers imports each model family lazily) are loaded
on the clock on both sides, as a user waits for them.
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import sys
import time
from pathlib import Path

import torch

with contextlib.suppress(ImportError):
    import transformers  # noqa: F401 - imported before the clock on both sides


def _load(path: Path, entry: str) -> tuple[torch.nn.Module, tuple]:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, entry)()


def time_aot_eager(path: Path, entry: str) -> dict:
    import fxlab.compat.layer as layer

    with layer.compat_layer():  # the model files import torch_npu as Ascend models do
        start = time.perf_counter()
        model, inputs = _load(path, entry)
        with torch.no_grad():
            torch.compile(model, backend="aot_eager")(*inputs)
            return {"seconds": time.perf_counter() - start, "status": "-"}


def time_fxlab(path: Path, entry: str) -> dict:
    from fxlab.cli import main as cli

    out = io.StringIO()
    argv = ["trace", str(path)] + (["--entry", entry] if entry != "get_model_and_inputs" else [])
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        start = time.perf_counter()
        try:
            cli.main(argv)
        except SystemExit as exc:
            code = exc.code
        else:
            code = 0
        seconds = time.perf_counter() - start
    return {"seconds": seconds, "status": "ok" if code == 0 else f"exit {code}"}


def main() -> None:
    mode, path = sys.argv[1], Path(sys.argv[2])
    entry = sys.argv[3] if len(sys.argv) > 3 else "get_model_and_inputs"
    result = time_aot_eager(path, entry) if mode == "aot_eager" else time_fxlab(path, entry)
    print(json.dumps({"mode": mode, "model": f"{path.stem}:{entry}", **result}))


if __name__ == "__main__":
    main()
