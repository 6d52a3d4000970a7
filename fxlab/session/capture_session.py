"""One capture session: everything a trace of one :class:`TraceRequest` needs, opened for
as long as it runs and closed after.

While a session is open: TorchAir's own code (``converter="torchair"``), fxlab's
stand-ins for ``torchair`` / ``torch_npu`` when the real ones are not importable (each
announced once through ``note``), TorchAir's collectives as it captures them, and
torch's own warnings kept as notes of the trace. What a model file sets in Dynamo's and
aot_autograd's configs (``capture_scalar_outputs``, say) holds for its capture only: the
caller's settings are back when the session closes. :meth:`CaptureSession.capture` loads
the model (a file with its plugins, or an object and its inputs) and captures it.

``fxlab trace``, ``fxlab diff``, ``fxlab scopes``, ``fxlab ops coverage``, every rank of
``--nproc``, and the public :func:`trace` all capture through a session; the command line
only adds its spinner and printing through the callbacks.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any

import torch
import torch._dynamo
import torch._functorch.config

from fxlab.capture.loader import LoadedModel, load_model, load_object
from fxlab.capture.pipeline import Capture, capture_trace
from fxlab.capture.ranks import RankHooks
from fxlab.capture.request import TraceRequest
from fxlab.capture.torch_logs import torch_warnings_as_notes
from fxlab.capture.trace import Trace
from fxlab.compat.collective_capture import torchair_collectives
from fxlab.compat.layer import compat_layer
from fxlab.errors import FxlabError, UsageError
from fxlab.compat.torchair_backend_run import TorchAirBackend
from fxlab.session.torchair_side import TorchAirSide, aclgraph_reference, torchair_side

Say = Callable[[str], None]


def _quiet(message: str) -> None:
    """Where a session's notes go when nobody listens."""


class CaptureSession:
    """See the module docstring. ``progress`` hears what the capture is doing, ``note``
    and ``warn`` what loading TorchAir and the stand-ins found."""

    def __init__(
        self,
        request: TraceRequest,
        *,
        progress: Say | None = None,
        note: Say | None = None,
        warn: Say | None = None,
        with_torchair: bool = False,
        torchair: TorchAirSide | None = None,
    ) -> None:
        self.request = request
        # TorchAir's own code: loaded for converter="torchair", or to compare with it; or
        # one already loaded (``torchair``, from :func:`torchair_side`) for many captures.
        self.with_torchair = (with_torchair or request.converter == "torchair") and torchair is None
        self.torchair: TorchAirSide | None = torchair
        self.progress, self.note, self.warn = progress or _quiet, note or _quiet, warn or _quiet
        self._stack = contextlib.ExitStack()
        self._torch_notes: list[str] = []
        self._compat: Any = None  # the compat layer's session: it explains some of fxlab's errors better

    def __enter__(self) -> CaptureSession:
        request = self.request
        with contextlib.ExitStack() as stack:
            if self.with_torchair:  # TorchAir first: the collectives open inside its session
                self.torchair = stack.enter_context(
                    torchair_side(request.torchair_path, request.soc.name, request.mode, self.note, self.warn)
                )
            stack.enter_context(_compile_configs_kept())
            self._compat = stack.enter_context(compat_layer(announce=self.note))
            stack.enter_context(torchair_collectives())
            self._torch_notes = stack.enter_context(torch_warnings_as_notes())
            self._stack = stack.pop_all()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None) -> None:
        self._stack.__exit__(kind, value, traceback)

    def load(self) -> LoadedModel:
        """The request's model, loaded (plugins first)."""
        request = self.request
        self.progress("loading model")
        if request.model_file is not None:
            return load_model(request.model_file, entry=request.entry, plugins=list(request.plugins))
        return load_object(request.model, request.inputs, plugins=list(request.plugins))

    def capture(self, *, ranks: RankHooks | None = None, after_load: Callable[[], Any] | None = None) -> Capture:
        """Load and capture the model; ``ranks`` and ``after_load`` are what one rank of a
        multi-rank trace adds (:mod:`fxlab.capture.ranks`)."""
        try:
            loaded = self.load()
            if after_load is not None:
                after_load()
            converter = self.torchair if self.request.converter == "torchair" else None
            reference = self._aclgraph_reference(converter) if ranks is None else None
            captured = capture_trace(loaded, self.request, torchair=converter, ranks=ranks, progress=self.progress, reference=reference)
        except FxlabError as exc:
            better = self._compat.explain(exc) if self._compat is not None else None
            if better is None:
                raise
            raise better from exc
        except SystemExit as exc:  # only the user's code exits while fxlab runs it
            raise FxlabError(
                f"the model called exit ({type(exc).__name__}: {exc.code}) while fxlab ran it, so nothing could be captured. "
                f"Remove the exit() / sys.exit() call from the code {self.request.model_name} runs."
            ) from exc
        notes = captured.trace.notes
        notes.extend(note for note in self._torch_notes if note not in notes)
        return captured

    def _aclgraph_reference(self, converter: TorchAirSide | None) -> TorchAirBackend | None:
        """TorchAir's own backend, for the aclgraph check to compare graphs with and to say
        whose graph a mismatch is: run when TorchAir's sources are found (the check runs it
        only on the aclgraph path, and only when a graph is judged)."""
        return aclgraph_reference(converter, self.request.torchair_path, self.request.soc.name)


@contextlib.contextmanager
def _compile_configs_kept() -> Iterator[None]:
    """Dynamo's and aot_autograd's configs as they were before the block, after it: a
    model file's settings are its own capture's, not the caller's process's."""
    configs = (torch._dynamo.config, torch._functorch.config)
    saved = [config.get_config_copy() for config in configs]
    try:
        yield
    finally:
        for config, before in zip(configs, saved):
            after = config.get_config_copy()
            # Only what changed: the rest keeps its default-or-set state (and deprecated keys stay unread).
            config.load_config({key: value for key, value in before.items() if after.get(key) is not value})


def capture(request: TraceRequest, progress: Say | None = None, note: Say | None = None, warn: Say | None = None) -> Capture:
    """Capture ``request`` in a session of its own; the callbacks as :class:`CaptureSession`'s."""
    with CaptureSession(request, progress=progress, note=note, warn=warn) as session:
        return session.capture()


def trace(model: Any, inputs: Any = None, **options: Any) -> Trace:
    """The trace of ``model`` — a model file's path, or an ``nn.Module`` / function called
    on ``inputs`` — exactly as ``fxlab trace`` makes it. ``options`` are
    :class:`TraceRequest`'s fields (``mode``, ``stages``, ``converter``, ``plugins``,
    ``entry``, ``soc``, ``dynamic``, ``verify``, ...). A multi-rank model is traced from
    the command line (``fxlab trace MODEL.py --nproc N``): each rank is its own process."""
    request = TraceRequest(model, inputs, **options)
    if request.nproc is not None:
        raise UsageError(
            f"nproc={request.nproc}: a multi-rank trace runs one process per rank; use `fxlab trace MODEL.py --nproc {request.nproc}`."
        )
    return capture(request).trace
