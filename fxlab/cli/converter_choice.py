"""Which conversion builds the ``ascend_ir`` stage: fxlab's built-in converters, or
TorchAir's own code (its session held open for the whole capture, its load report said)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from fxlab.cli import console


def check_converter(name: str) -> str:
    if name not in ("builtin", "torchair"):
        from fxlab.errors import UsageError

        raise UsageError(f"--converter {name!r}: choose builtin or torchair.")
    return name


@contextlib.contextmanager
def ascend_ir_converter(name: str, torchair_path: Path | None, soc: str = "Ascend910B2") -> Iterator[Callable[..., Any] | None]:
    """``None`` for fxlab's built-in conversion; for ``torchair``, TorchAir's own
    conversion with its session held open for the whole capture."""
    if check_converter(name) == "builtin":
        yield None
        return
    from fxlab.compat.bridge import open_torchair, run_torchair_conversion
    from fxlab.compat.torchair_loader import condensed_failures

    with open_torchair(torchair_path) as torchair:
        report = torchair.report
        console.note(f"TorchAir ({report.version.describe()}) loaded, {report.converters} converters: {report.native_note}")
        if report.version.matches(report.torch_version) is False:
            console.warn(report.version.compatibility(report.torch_version))
        for line in condensed_failures(report.module_failures + report.registration_failures):
            console.warn(line)
        loaded_before = len(report.module_failures)
        yield lambda gm, graph_name: run_torchair_conversion(gm, graph_name, torchair, soc=soc)
        # TorchAir imports some converter modules only when it first converts.
        for line in condensed_failures(report.module_failures[loaded_before:]):
            console.warn(line)
