"""TorchAir's own code for a capture (``converter="torchair"``): its GE conversion, and its
(or npugraph_ex's) aclgraph passes, with its session held open for the whole capture and
what loading it found said through the session's callbacks."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch.fx as fx

from fxlab.capture.checks.torchair_reference import TorchAirAclGraph
from fxlab.compat.aclgraph_bridge import observe_user_registrations, register_patterns, run_torchair_aclgraph
from fxlab.compat.bridge import open_torchair, run_torchair_conversion
from fxlab.compat.npugraph_ex_loader import locate_npugraph_ex, npugraph_ex_session
from fxlab.compat.torchair_backend_run import TorchAirBackend
from fxlab.compat.torchair_copies import TorchAirNotFoundError, find_torchair
from fxlab.compat.torchair_loader import condensed_failures
from fxlab.errors import UsageError
from fxlab.passes.conversion_result import ConversionResult
from fxlab.passes.torchair_options import NPUGRAPH_EX, TorchAirOptions, to_torchair_config

Say = Callable[[str], None]


@contextlib.contextmanager
def torchair_side(torchair_path: Path | None, soc: str, mode: str | None, note: Say, warn: Say) -> Iterator[TorchAirSide]:
    """TorchAir loaded (from ``torchair_path``, or found) for the block, its load report
    said through ``note`` and ``warn``."""
    with open_torchair(torchair_path) as torchair, _npugraph_ex(torchair, mode, note) as npugraph_ex:
        if not torchair.report.real:
            observe_user_registrations(torchair.package)
        report = torchair.report
        note(f"TorchAir ({report.version.describe()}) loaded, {report.converters} converters: {report.native_note}")
        if report.version.matches(report.torch_version) is False:
            warn(report.version.compatibility(report.torch_version))
        for line in condensed_failures(report.module_failures + report.registration_failures):
            warn(line)
        loaded_before = len(report.module_failures)
        yield TorchAirSide(torchair, soc, npugraph_ex)
        # TorchAir imports some converter modules only when it first converts.
        for line in condensed_failures(report.module_failures[loaded_before:]):
            warn(line)


@contextlib.contextmanager
def _npugraph_ex(torchair: Any, mode: str | None, note: Say) -> Iterator[LazyNpugraphEx | None]:
    """npugraph_ex's sources beside TorchAir's, for ``--mode npugraph_ex``: loaded when the
    first graph needs them, after the model file ran (it keeps fxlab's stand-in, whose
    scopes run eagerly on CPU, and its patterns are registered with the real package)."""
    if mode != NPUGRAPH_EX:
        yield None
        return
    with contextlib.ExitStack() as stack:
        yield LazyNpugraphEx(torchair, stack, note)


class LazyNpugraphEx:
    """npugraph_ex's package, loaded on first use and held until the capture ends."""

    def __init__(self, torchair: Any, stack: contextlib.ExitStack, note: Say) -> None:
        self.torchair, self.stack, self.note = torchair, stack, note
        self.package: Any = None

    def get(self) -> Any:
        if self.package is None:
            where = locate_npugraph_ex(self.torchair.report.path)
            self.package = self.stack.enter_context(npugraph_ex_session(where))
            self.note(f"npugraph_ex loaded from {where}")
        return self.package


def aclgraph_reference(side: TorchAirSide | None, torchair_path: Path | None, soc: str) -> TorchAirBackend | None:
    """TorchAir's own backend for the aclgraph check: in ``side``'s session with
    ``--converter torchair``, else from TorchAir's sources when they are found (None: the
    check then says it could not tell whose graph a mismatch is)."""
    if side is not None:
        return TorchAirBackend(side.torchair, side.npugraph_ex.get if side.npugraph_ex is not None else None, soc=soc)
    try:
        return TorchAirBackend(path=find_torchair(torchair_path), soc=soc)
    except TorchAirNotFoundError:
        return None


class TorchAirSide:
    """TorchAir's own code for the capture (:class:`fxlab.capture.record_graph.TorchAirCode`):
    ``convert`` builds a graph's GE graph, ``aclgraph`` runs its aclgraph passes."""

    def __init__(self, torchair: Any, soc: str, npugraph_ex: LazyNpugraphEx | None = None) -> None:
        self.torchair, self.soc, self.npugraph_ex = torchair, soc, npugraph_ex

    def convert(self, gm: fx.GraphModule, name: str, options: TorchAirOptions) -> ConversionResult:
        register_patterns(self.torchair.package, options)
        config = to_torchair_config(self.torchair.package, options, flat=False)
        return run_torchair_conversion(gm, name, self.torchair, config=config, soc=self.soc)

    def aclgraph(self, gm: fx.GraphModule, index: int, options: TorchAirOptions) -> TorchAirAclGraph:
        if options.mode == NPUGRAPH_EX and self.npugraph_ex is None:
            raise UsageError(
                "the model file's config asks for npugraph_ex: pass --mode npugraph_ex with --converter torchair, so its sources are loaded."
            )
        package = self.npugraph_ex.get() if self.npugraph_ex is not None and options.mode == NPUGRAPH_EX else None
        return run_torchair_aclgraph(gm, index, self.torchair, options, package, self.soc)
