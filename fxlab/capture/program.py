"""A program run as a whole (``fxlab run``): every function it compiles with one of
TorchAir's backends is traced as the program calls it, with every stage and check
``fxlab trace`` gives: one trace per compile, and one per recompile.

The program is the user's and runs unchanged; fxlab only watches.

- While :meth:`ProgramCapture.watching` is open, ``torch.compile`` is a recorder (put back
  on exit). A call whose backend ``classify`` says is TorchAir's (the compat layer knows
  them: ``get_npu_backend(...)``, ``"npu"``, ``"npugraph_ex"``, npugraph_ex's own entry)
  gets a :class:`WatchedFunction`: it notes the ``torch.compile`` line and is the backend
  Dynamo is handed. Any other backend passes through untouched.
- Dynamo hands that backend each graph it captures. The graph's stages are recorded
  (:class:`~fxlab.capture.backend.CapturingBackend`, with the backend's decompositions),
  and Dynamo gets aot's compiled callable, which the program runs (on the CPU, with the
  stand-ins), or, with TorchAir's own backend on an NPU machine, TorchAir's compiled graph
  (the stages are then recorded beside it). Each graph's first run is recorded for the
  Ascend IR / aclgraph checks (:class:`~fxlab.capture.checks.runs.RunRecorder`).
- Each call of the compiled function is watched (:mod:`fxlab.capture.checks.program_calls`). A
  call during which Dynamo compiled is one :class:`CompileEvent`; when it returns, the
  original function runs eagerly on the call's snapshot and is compared with it, and the
  event's graphs become a trace through the pipeline's own steps
  (:func:`~fxlab.capture.pipeline.trace_driven_run`): stages, conversion, checks, status.
  ``on_trace`` gets each trace as it is made.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import torch
import torch.fx as fx

from fxlab.capture.backend import CapturingBackend
from fxlab.capture.checks.runs import RunRecorder
from fxlab.capture.input_sets import argument_names, describe_inputs
from fxlab.capture.pipeline import Capture, DrivenRun, assumed_ge_types, checked_stage, random_ops, trace_driven_run
from fxlab.capture.checks.program_calls import CallWatch, eager_check, function_globals
from fxlab.capture.compile_error import first_line
from fxlab.capture.readable import clear_readable_cache
from fxlab.capture.ranks import RankHooks, collectives_not_executed, wrap_before_runs
from fxlab.capture.record_graph import TorchAirCode
from fxlab.capture.request import TraceRequest
from fxlab.capture.trace import CallRecord, CheckResult, ProgramCompile, Trace
from fxlab.capture.warmup import current_compile_id, guard_failures_now, new_reasons, recompiles_of
from fxlab.passes.graph_copy import copy_graph_module
from fxlab.passes.pattern_fusion import registered_patterns
from fxlab.passes.torchair_options import TorchAirOptions, backend_options, stages_of_mode
from fxlab.source_lines import calling_line
from fxlab.stage_names import ACLGRAPH, ALL_STAGES, ATEN, FUNCTIONAL
from fxlab.version import __version__ as FXLAB_VERSION

TRACE_FOLDER = "trace_{number}"
REAL_BACKEND_NOTE = (
    "the graph that runs is TorchAir's own (its GE graph or ACL graph on the NPU): fxlab records the stages beside it, "
    "not the inputs each graph ran on, so it runs no graph on the CPU"
)


@dataclass(frozen=True)
class ProgramBackend:
    """One of TorchAir's backends as the program handed it to ``torch.compile``."""

    label: str  # as the program named it: "torchair.get_npu_backend(...)", "'npugraph_ex'"
    config: Any  # the CompilerConfig it compiles with (its mode, passes, experimental options)
    decompositions: dict[Any, Callable[..., Any]] | None = None  # None: TorchAir's default table
    real: Callable[..., Any] | None = None  # TorchAir's own backend (an NPU machine): it compiles what runs
    dumps_to: str | None = None  # where the program's own config has TorchAir dump its graphs
    # An option torch.compile was given that the backend refuses: TorchAir raises it when it
    # first compiles a graph, not when torch.compile is called.
    refused_options: Exception | None = None


# backend, torch.compile's options -> the backend, when it is TorchAir's
Classify = Callable[[Any, "dict[str, Any] | None"], "ProgramBackend | None"]


@dataclass
class ProgramTrace:
    """One trace of the run: its folder's name, and the capture (or why there is none)."""

    folder: str
    capture: Capture | None = None
    error: str | None = None  # fxlab could not trace this compile (the program went on)
    program: ProgramCompile | None = None

    def row(self) -> dict[str, Any]:
        """This trace as a row of the run's manifest (plain JSON)."""
        trace = self.capture.trace if self.capture is not None else None
        origin = asdict(self.program) if self.program is not None else {}
        return {
            "folder": self.folder,
            **origin,
            "mode": trace.mode if trace is not None else None,
            "graphs": len(trace.graphs) if trace is not None else 0,
            "status": trace.status if trace is not None else "failed",
            "why_partial": partial_reasons(trace) if trace is not None and trace.status == "partial" else [],
            "why_unverified": unverified_reasons(trace) if trace is not None and trace.status == "unverified" else [],
            "config_notes": list(self.capture.options.notes) if self.capture is not None else [],  # what of the config fxlab did not follow
            "error": self.error,
        }


def _raised_by_dynamo(error: BaseException) -> bool:
    """Whether Dynamo itself stopped the call (a graph break under ``fullgraph=True``, an op
    it cannot trace): its errors live in ``torch._dynamo.exc``."""
    return type(error).__module__ == "torch._dynamo.exc"


def partial_reasons(trace: Trace) -> list[str]:
    """Why a trace is ``partial``, in the words ``fxlab trace`` shows: a graph's error, an op
    the conversion left out, a check that disagrees (the first call's, then later calls')."""
    reasons = [f"graph {g.index}: {g.error}" for g in trace.graphs if g.error]
    for graph in trace.graphs:
        left_out = graph.conversion.not_converted if graph.conversion is not None and graph.partial else []
        reasons += [f"graph {graph.index}: {e['op']} ({e['nodes']} node(s)) not converted: {e['reason'] or e['status']}" for e in left_out]
    reasons += [f"{label}: {check.verdict}" for label, check in trace.checks() if check.failed]
    graph_check = "aclgraph graph on CPU vs compiled" if ACLGRAPH in trace.stages else "Ascend IR on CPU vs compiled"
    for call in trace.calls[1:]:  # the first call's checks are the trace's own
        named = (("eager vs compiled", call.check), (graph_check, call.ir_check))
        reasons += [f"call {call.index}: {label}: {check.verdict}" for label, check in named if check is not None and check.failed]
    return reasons


def unverified_reasons(trace: Trace) -> list[str]:
    """Why a trace is ``unverified``: what a check could not compare, and the GE op types
    assumed for auto-converted custom ops (no Ascend C prototype found)."""
    reasons = [f"{label}: {check.verdict}" for label, check in trace.checks() if check.unverified]
    graph_check = "aclgraph graph on CPU vs compiled" if ACLGRAPH in trace.stages else "Ascend IR on CPU vs compiled"
    for call in trace.calls[1:]:
        named = (("eager vs compiled", call.check), (graph_check, call.ir_check))
        reasons += [f"call {call.index}: {label}: {check.verdict}" for label, check in named if check is not None and check.unverified]
    reasons += [f"{op}: no Ascend C prototype found, so the GE op is assumed" for op in assumed_ge_types(trace)]
    return reasons


# The worst first: a run's status is the worst of its traces'.
STATUS_ORDER = ("failed", "partial", "unverified", "ok")


def run_status(statuses: list[str]) -> str:
    """The run's status: its traces' worst (``ok`` for a run that compiled nothing)."""
    return min(statuses, key=lambda s: STATUS_ORDER.index(s) if s in STATUS_ORDER else 0, default="ok")


class ProgramCapture:
    """The functions a program compiles with TorchAir's backends, and their traces."""

    def __init__(
        self,
        request: TraceRequest,
        classify: Classify,
        on_trace: Callable[[ProgramTrace], None],
        *,
        torchair: TorchAirCode | None = None,
        ranks: Callable[[], RankHooks | None] | None = None,
        quiet: Callable[[], contextlib.AbstractContextManager[Any]] = contextlib.nullcontext,
        note: Callable[[str], None] | None = None,
    ) -> None:
        self.request, self.classify, self.on_trace = request, classify, on_trace
        self.note = note or (lambda message: None)  # what the run says at its end (a compile that failed before its backend)
        self.resets = 0  # torch._dynamo.reset() calls the program made
        self.torchair = torchair
        self.quiet = quiet  # around fxlab's own work on captured graphs: what the program needs is off (the npu device's mode)
        self._ranks_of = ranks  # asked at the first compile: a program makes its process group when it likes
        self._ranks: RankHooks | None = None
        self.functions: list[WatchedFunction] = []
        self.events: list[CompileEvent] = []
        self.collective_positions = [0]  # graphs shown to the cross-rank check so far
        self.checking = threading.local()  # set while fxlab's own eager run calls the program's code
        self._original: Callable[..., Any] | None = None

    @contextlib.contextmanager
    def watching(self) -> Iterator[ProgramCapture]:
        """``torch.compile`` recording for the block; compiles still open are finished at the end."""
        self._original = original = torch.compile
        real_reset = torch._dynamo.reset

        @functools.wraps(original)
        def recorder(model: Any = None, **kwargs: Any) -> Any:
            return self.compile(model, **kwargs)

        @functools.wraps(real_reset)
        def reset() -> None:  # a compile after it starts afresh: no guard failed, nothing to recompile after
            self.resets += 1
            real_reset()

        torch.compile, torch._dynamo.reset = recorder, reset
        try:
            yield self
        finally:
            if torch.compile is recorder:
                torch.compile = original
            if torch._dynamo.reset is reset:
                torch._dynamo.reset = real_reset
            self.finish()

    def compile(self, model: Any = None, **kwargs: Any) -> Any:
        """``torch.compile`` as the program calls it (see the module docstring)."""
        original = self._original or torch.compile
        if model is None:  # @torch.compile(backend=...): the decorator
            return functools.partial(self.compile, **kwargs)
        backend = None if kwargs.get("disable") else self.classify(kwargs.get("backend", "inductor"), kwargs.get("options"))
        if backend is None:
            return original(model, **kwargs)
        watched = WatchedFunction(self, model, backend, calling_line(sys._getframe(1)) or "?", kwargs.get("dynamic"))
        self.functions.append(watched)
        return watched.watch_calls(original(model, **{**kwargs, "backend": watched}))

    @property
    def ranks(self) -> RankHooks | None:
        """What this process adds as one rank of a multi-rank program (None: not one)."""
        if self._ranks is None and self._ranks_of is not None:
            self._ranks = self._ranks_of()
        return self._ranks

    def is_checking(self) -> bool:
        return bool(getattr(self.checking, "on", False))

    def new_event(self, function: WatchedFunction, watch: CallWatch | None, called_at: str) -> CompileEvent:
        """A compile starts: the options it follows are read now, as TorchAir reads its
        config (and the patterns registered so far) when Dynamo hands it a graph."""
        backend = function.backend
        options = replace(backend_options(backend.config, f"the config of {backend.label}", registered_patterns()), soc=self.request.soc)
        event = CompileEvent(len(self.events), function, watch, called_at, function.compiles, options)
        event.after_reset = function.compiles > 0 and self.resets > function.resets_seen
        function.compiles, function.resets_seen = function.compiles + 1, self.resets
        self.events.append(event)
        return event

    def request_for(self, mode: str) -> TraceRequest:
        """The request's stages that ``mode`` has (every stage of it by default)."""
        own = stages_of_mode(mode)
        stages = own if tuple(self.request.stages) == tuple(ALL_STAGES) else tuple(s for s in own if s in self.request.stages)
        return replace(self.request, stages=stages or own)

    def finish(self) -> None:
        """Trace the compiles no watched call finished (the compiled function was called
        in a way fxlab does not watch)."""
        for event in self.events:
            if not event.done:
                why = "Dynamo compiled during a call fxlab does not watch (the compiled function called by another way than its own call)"
                event.function.finish(event, CheckResult(ok=True, skipped=why), None)


@dataclass
class CompileEvent:
    """A call of a compiled function during which Dynamo compiled: its graphs, their
    first runs, Dynamo's compile ids, where the call was."""

    number: int  # in the run's order: its trace folder
    function: WatchedFunction
    watch: CallWatch | None
    called_at: str
    compile_index: int  # 0 for the function's first compile
    options: TorchAirOptions  # what the backend's config sets (mode, passes, experimental options), as for model files
    backend: CapturingBackend = field(init=False)
    recorder: RunRecorder = field(init=False)
    compile_ids: dict[int, str] = field(default_factory=dict)
    ran: list[int] = field(default_factory=list)  # its graphs that ran during the call, in order
    done: bool = False
    after_reset: bool = False  # the program called torch._dynamo.reset() since the function's previous compile

    def __post_init__(self) -> None:
        function, request = self.function, self.function.program.request
        # Graph runs are kept only for the checks that will run on them (as fxlab trace keeps them).
        will_verify = (
            checked_stage(stages_of_mode(self.options.mode)) in request.stages and request.verify is not False
        ) or self.options.has_user_passes
        self.recorder = RunRecorder(custom_ops_only=not will_verify)
        self.backend = CapturingBackend(ATEN in request.stages, self._wrap_graph, function.backend.decompositions)

    @property
    def folder(self) -> str:
        return TRACE_FOLDER.format(number=self.number)

    def release(self) -> None:
        """Once traced: the graphs' stages and the values their first runs kept go (the
        program keeps running the compiled graphs)."""
        for graph in self.backend.graphs:
            graph.modules.clear()
        self.recorder.forget()
        self.watch = None

    def _wrap_graph(self, fw: fx.GraphModule) -> Callable[..., Any]:
        """Each functional graph aot compiles: its first run recorded (and shown to the
        cross-rank check), every run noted in the call it ran in."""
        program, index = self.function.program, len(self.backend.graphs) - 1
        wrap = (
            self.recorder.wrap
            if program.ranks is None
            else wrap_before_runs(program.ranks, self.recorder.wrap, program.collective_positions)
        )
        recorded = wrap(fw)

        def run(*args: Any) -> Any:
            watch = self.function.current()
            if watch is not None:
                watch.graphs_ran = True
                if watch.event is self and index not in self.ran:
                    self.ran.append(index)
            return recorded(*args)

        return run


class WatchedFunction:
    """One ``torch.compile`` call of the program with a TorchAir backend: the backend
    Dynamo is handed, and the watch on every call of what it compiled."""

    def __init__(self, program: ProgramCapture, original: Any, backend: ProgramBackend, compiled_at: str, dynamic: bool | None) -> None:
        self.program, self.original, self.backend = program, original, backend
        self.compiled_at, self.dynamic = compiled_at, dynamic
        self.name = function_name(original)
        # Dynamo names a backend by its __name__ (in its errors: backend='npugraph_ex' raised).
        self.__name__ = backend.label.strip("'")
        self.module = _module_of(original)
        self.eager: Callable[..., Any] = original  # what runs eagerly for the check
        self.compiles = 0
        self.resets_seen = 0  # the program's torch._dynamo.reset() calls before its latest compile
        self.last_folder: str | None = None  # the trace of its latest compile
        self.graph_ids: dict[Any, str] = {}  # graphs of its earlier compiles ("0 of trace_0") -> Dynamo's compile id
        self._calls = threading.local()

    # -- the backend Dynamo is handed ---------------------------------------------------------------
    def __call__(self, gm: fx.GraphModule, example_inputs: list[Any], **kwargs: Any) -> Callable[..., Any]:
        if self.backend.refused_options is not None:
            raise self.backend.refused_options
        watch = self.current()
        event = watch.event if watch is not None else None
        if event is None:
            event = self.program.new_event(self, watch, calling_line(watch.frame if watch is not None else sys._getframe(1)) or "?")
            if watch is not None:
                watch.event = event
        if watch is not None:
            watch.saw_graph(example_inputs, [n.name for n in gm.graph.nodes if n.op == "placeholder"])
        event.compile_ids[len(event.backend.graphs)] = current_compile_id()
        if self.backend.real is None:
            with self.program.quiet():
                return event.backend(gm, example_inputs)
        compiled = self.backend.real(gm, example_inputs, **kwargs)  # TorchAir's own: what the program runs
        with self.program.quiet():
            event.backend(copy_graph_module(gm), example_inputs)  # the stages, recorded beside it
        return compiled

    # -- the calls of what it compiled ---------------------------------------------------------------
    def watch_calls(self, compiled: Any) -> Any:
        """``compiled`` (what ``torch.compile`` returned), each call of it watched: a
        compiled module through its own forward hooks, a function through a wrapper."""
        if compiled is self.original:  # nothing was compiled (Dynamo is off: TORCHDYNAMO_DISABLE)
            return compiled
        if isinstance(compiled, torch.nn.Module):
            self.eager = getattr(compiled, "_orig_mod", self.original)
            compiled.register_forward_pre_hook(self._before_forward, with_kwargs=True)
            compiled.register_forward_hook(self._after_forward, with_kwargs=True, always_call=True)
            return compiled

        @functools.wraps(compiled)
        def call(*args: Any, **kwargs: Any) -> Any:
            watch = self.begin(args, kwargs, sys._getframe(1))
            try:
                output = compiled(*args, **kwargs)
            except BaseException as exc:
                self.end(watch, None, failed=True, error=exc)
                raise
            self.end(watch, output)
            return output

        return call

    def _before_forward(self, module: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.begin(args, kwargs, sys._getframe(1))

    def _after_forward(self, module: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any], output: Any) -> None:
        raised = sys.exc_info()[1]
        self.end(self.current(), output, failed=raised is not None, error=raised)

    def current(self) -> CallWatch | None:
        stack = getattr(self._calls, "stack", None)
        return stack[-1] if stack else None

    def begin(self, args: tuple[Any, ...], kwargs: dict[str, Any], frame: Any) -> CallWatch | None:
        """A call starts (none is watched while fxlab's own eager run calls the program)."""
        if self.program.is_checking():
            return None
        module = self.module or (args[0] if args and isinstance(args[0], torch.nn.Module) else None)
        watch = CallWatch(args, kwargs, frame, module, function_globals(self.eager))
        watch.reasons_before = guard_failures_now()
        self._calls.__dict__.setdefault("stack", []).append(watch)
        return watch

    def end(self, watch: CallWatch | None, output: Any, failed: bool = False, error: BaseException | None = None) -> None:
        """A call returned (or raised): a compile during it is checked and traced."""
        if watch is None:
            return
        stack = self._calls.__dict__.get("stack", [])
        if stack and stack[-1] is watch:
            stack.pop()
        event, frame, watch.frame = watch.event, watch.frame, None
        if event is None and error is not None and _raised_by_dynamo(error):
            where = f"the call of {self.name} at {calling_line(frame) if frame is not None else '?'} (torch.compile at {self.compiled_at}, backend {self.backend.label})"
            if isinstance(error, torch._dynamo.exc.BackendCompilerFailed):  # the backend itself refused the graph
                inner = error.inner_exception
                said = f"the backend raised as it compiled the call's first graph, so it has no trace: {first_line(inner)}"
            else:
                said = f"stopped in Dynamo before any graph reached the backend, so it has no trace: {first_line(error)}"
            self.program.note(f"{where} {said}")
        if event is None or event.done:
            return
        if failed:
            check = CheckResult(ok=True, skipped="the program's call raised, so there is no compiled result to compare with eager")
        else:
            check = self._eager_check(watch, output, event)
        self.finish(event, check, watch)

    def _eager_check(self, watch: CallWatch, output: Any, event: CompileEvent) -> CheckResult:
        self.program.checking.on = True
        try:
            return eager_check(watch, self.eager, output, lambda: random_ops(event.backend.graphs))
        finally:
            self.program.checking.on = False

    # -- the trace of a compile ----------------------------------------------------------------------
    def finish(self, event: CompileEvent, check: CheckResult, watch: CallWatch | None) -> None:
        """The trace of ``event`` (a failure of fxlab's own is kept as the trace's error:
        the program goes on)."""
        event.done = True
        record = self._call_record(event, watch)
        built = ProgramTrace(event.folder, program=self._origin(event, record))
        try:
            with self.program.quiet():
                breaks = watch.breaks.since() if watch is not None else []
                built.capture = self._trace(event, check, record, built.program, breaks)
        except Exception as exc:
            if os.environ.get("FXLAB_DEBUG"):
                raise
            built.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.graph_ids.update({f"{index} of {event.folder}": compile_id for index, compile_id in event.compile_ids.items()})
            self.last_folder = event.folder
            event.release()
            clear_readable_cache()  # the stages' code is in the trace: their graphs need not outlive it
        self.program.on_trace(built)

    def _call_record(self, event: CompileEvent, watch: CallWatch | None) -> CallRecord:
        compiled = list(range(len(event.backend.graphs)))
        inputs = describe_inputs(watch.args, watch.kwargs, argument_names(self.original)) if watch is not None else ""
        record = CallRecord(0, inputs, f"the program's call at {event.called_at}", list(event.ran), compiled)
        if event.compile_index > 0 and watch is not None:
            reasons = new_reasons(watch.reasons_before, guard_failures_now())
            record.recompiles = recompiles_of(compiled, reasons, {**self.graph_ids, **event.compile_ids})
        return record

    def _origin(self, event: CompileEvent, record: CallRecord) -> ProgramCompile:
        words = [word for recompile in record.recompiles for word in recompile.words]
        if event.after_reset and not words:
            words = [f"the program called torch._dynamo.reset() after {self.last_folder}, so Dynamo compiled the function afresh"]
        return ProgramCompile(
            self.name,
            self.compiled_at,
            event.called_at,
            self.backend.label,
            event.compile_index,
            self.last_folder,
            list(dict.fromkeys(words)),
        )

    def _trace(
        self, event: CompileEvent, check: CheckResult, record: CallRecord, origin: ProgramCompile | None, graph_breaks: list[str]
    ) -> Capture:
        program = self.program
        trace = Trace(program.request.model_name, self.name, FXLAB_VERSION, torch.__version__, check=check, program=origin)
        trace.compile_options = {"dynamic": self.dynamic, "source": f"torch.compile at {self.compiled_at}"}
        functional = (graph.modules.get(FUNCTIONAL) for graph in event.backend.graphs)
        not_executed = REAL_BACKEND_NOTE if self.backend.real is not None else collectives_not_executed(functional)
        driven = DrivenRun(event.backend.graphs, event.recorder, [record], not_executed=not_executed, graph_breaks=graph_breaks)
        request = program.request_for(event.options.mode)
        return trace_driven_run(trace, driven, request, event.options, torchair=program.torchair, ranks=program.ranks)


def function_name(fn: Any) -> str:
    """What a ``torch.compile`` call compiled, as the run's table names it."""
    if isinstance(fn, torch.nn.Module):
        return type(fn).__name__
    if isinstance(fn, functools.partial):  # named by what it calls, not by the word "partial"
        return f"partial({function_name(fn.func)})"
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, torch.nn.Module):  # a module's bound method (nn.Module.compile compiles _call_impl)
        method = getattr(fn, "__name__", "")
        return type(owner).__name__ if method in ("_call_impl", "__call__", "forward") else f"{type(owner).__name__}.{method}"
    qualname = str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__)
    if qualname.startswith("_VariableFunctionsClass."):  # torch.sin and the like, as the program names them
        return f"torch.{qualname.partition('.')[2]}"
    return qualname


def _module_of(fn: Any) -> torch.nn.Module | None:
    if isinstance(fn, torch.nn.Module):
        return fn
    owner = getattr(fn, "__self__", None)
    return owner if isinstance(owner, torch.nn.Module) else None
