"""The session around a program run as a whole (``fxlab run``): what it needs open for as
long as the program runs, and closed after.

While it is open: fxlab's stand-ins for ``torchair`` / ``torch_npu`` / ``npugraph_ex``
where the real ones are not importable, with the npu device on the CPU from the start (a
program written for an NPU names it anywhere, first thing); TorchAir's collectives as it
captures them; TorchAir's own code for ``converter="torchair"``; the request's plugin
files, loaded first; and the program's ``torch.compile`` calls watched
(:class:`~fxlab.capture.program.ProgramCapture`): every compile with one of TorchAir's
backends becomes a trace, handed to ``on_trace`` as soon as it is made. torch's own
warnings are the program's and reach its stderr as they would without fxlab.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from types import TracebackType
from typing import Any

from fxlab.capture.loader import load_python_file
from fxlab.capture.program import ProgramCapture, ProgramTrace
from fxlab.capture.ranks import RankHooks
from fxlab.capture.request import TraceRequest
from fxlab.compat.collective_capture import torchair_collectives
from fxlab.compat.layer import compat_layer
from fxlab.compat.program_backends import classifier
from fxlab.session.torchair_side import TorchAirSide, torchair_side

Say = Callable[[str], None]


def _quiet(message: str) -> None:
    """Where the session's notes go when nobody listens."""


class ProgramSession:
    """See the module docstring. ``note`` and ``warn`` hear what loading TorchAir and the
    stand-ins found; ``torchair_dumps`` is where TorchAir's own backend (an NPU machine)
    dumps its graphs; ``ranks`` gives what one rank of a multi-rank program adds, once the program
    has made its process group."""

    def __init__(
        self,
        request: TraceRequest,
        on_trace: Callable[[ProgramTrace], None],
        *,
        note: Say | None = None,
        warn: Say | None = None,
        torchair_dumps: str | None = None,
        ranks: Callable[[], RankHooks | None] | None = None,
    ) -> None:
        self.request, self.on_trace = request, on_trace
        self.note, self.warn = note or _quiet, warn or _quiet
        self.torchair_dumps, self.ranks = torchair_dumps, ranks
        self.torchair: TorchAirSide | None = None
        self.capture: ProgramCapture | None = None
        self.compat: Any = None  # the compat layer's session: it explains some errors better
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> ProgramSession:
        request = self.request
        with contextlib.ExitStack() as stack:
            if request.converter == "torchair":  # TorchAir first: the collectives open inside its session
                self.torchair = stack.enter_context(
                    torchair_side(request.torchair_path, request.soc.name, request.mode, self.note, self.warn)
                )
            self.compat = stack.enter_context(compat_layer(announce=self.note, lazy_npu=False))
            stack.enter_context(torchair_collectives())
            for plugin in request.plugins:
                load_python_file(plugin, role="plugin")
            converter = self.torchair if request.converter == "torchair" else None
            npu = self.compat.npu_device
            quiet = npu.suspended if npu is not None else contextlib.nullcontext
            self.capture = ProgramCapture(
                request, classifier(self.torchair_dumps), self.on_trace, torchair=converter, ranks=self.ranks, quiet=quiet, note=self.note
            )
            stack.enter_context(self.capture.watching())
            self._stack = stack.pop_all()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None) -> None:
        self._stack.__exit__(kind, value, traceback)

    def explain(self, exc: BaseException) -> Any:
        """fxlab's own error for one the program raised when fxlab's layer is why (the npu
        device named where the CPU emulation cannot see it); else None."""
        return self.compat.explain(exc) if self.compat is not None else None
