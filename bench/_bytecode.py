"""Both sides of a comparison start from compiled bytecode, as a user's second run does.

pip compiles torch's modules to bytecode when it installs them; fxlab, installed in
editable mode, gets its bytecode written on its first run — unless
``PYTHONDONTWRITEBYTECODE`` is set, and then every run compiles fxlab's sources again
(about 0.3 s of each trace) while torch's stay compiled. The benchmarks compile fxlab's
package once before measuring, so neither side pays for compiling its sources.
"""
from __future__ import annotations

import compileall
from pathlib import Path

FXLAB_PACKAGE = Path(__file__).resolve().parents[1] / "fxlab"


def compile_fxlab() -> None:
    compileall.compile_dir(str(FXLAB_PACKAGE), quiet=1)
