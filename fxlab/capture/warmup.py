"""Calls of the compiled model after the first: a serving warm-up over the model file's
input sets, or a dynamic graph run at a second size, each checked as the first call is.

:class:`CallLog` wraps the compiled model and each graph's compiled function, so it knows,
for every call, which graphs ran, which Dynamo compiled on it, and why: the reasons Dynamo
records when a graph's guards fail on new inputs (``torch._dynamo.utils.guard_failures``,
one per graph of the frame it had, tagged with that graph's compile id ``frame/n``), told
again in plain words. Each call after the first records the inputs and outputs of the
graphs it ran, so the Ascend IR of each is run on that call's inputs too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import torch.fx as fx
from torch._guards import CompileContext

from fxlab.capture.checks.eager import compare_eager_compiled
from fxlab.capture.checks.runs import RunRecorder
from fxlab.capture.input_sets import DynamicDim, argument_names, describe_inputs, dynamic_dims, grown_inputs
from fxlab.capture.loader import LoadedModel
from fxlab.capture.trace import CallRecord, CheckResult, Recompile
from fxlab.errors import CaptureError
from fxlab.stack import with_stack_room


class CallLog:
    """One :class:`CallRecord` per call of the compiled model (see the module docstring)."""

    def __init__(self, graphs: Callable[[], list[Any]], first_recorder: RunRecorder) -> None:
        self.graphs = graphs  # the capturing backend's graphs so far
        self.first_recorder = first_recorder
        self.calls: list[CallRecord] = []
        self.recorders: dict[int, RunRecorder] = {}  # call index -> its runs (calls after the first)
        self.compile_ids: dict[int, str] = {}  # graph index -> Dynamo's compile id ("0/1")
        self.upcoming: tuple[str, str] = ("", "given")  # the next call's inputs and origin
        self._compiled: Callable[..., Any] | None = None
        self._current: CallRecord | None = None
        self._graphs_before = 0  # of the call under way
        self._reasons_before: dict[Any, list[str]] = {}

    def first_call(self, loaded: LoadedModel) -> None:
        """The first call is about to run on ``loaded``'s inputs."""
        self.upcoming = (describe_inputs(loaded.args, loaded.kwargs, argument_names(loaded.fn)), "given")

    def first_call_graphs(self) -> set[int] | None:
        """The graphs the first call ran, when later calls ran others too (else None: all)."""
        return set(self.calls[0].graphs) if len(self.calls) > 1 else None

    # -- wrapping --------------------------------------------------------------------------
    def wrap_graph(self, inner: Callable[[fx.GraphModule], Callable[..., Any]]) -> Callable[[fx.GraphModule], Callable[..., Any]]:
        """A ``wrap_compiled`` for the capturing backend around ``inner`` (the first
        call's recorder): notes the graph's compile id, and on each call which graph ran."""

        def wrap(fw: fx.GraphModule) -> Callable[..., Any]:
            index = len(self.graphs()) - 1
            self.compile_ids[index] = current_compile_id()
            first = inner(fw)
            # Each later call's recorder wraps the graph once; a call that failed and was
            # tried again (a second size the model does not run at) has a new recorder.
            by_recorder: dict[int, Callable[..., Any]] = {}

            def run(*args: Any) -> Any:
                call = self._current
                if call is not None and index not in call.graphs:
                    call.graphs.append(index)
                if call is None or call.index == 0:
                    return first(*args)
                recorder = self.recorders[call.index]
                if id(recorder) not in by_recorder:
                    by_recorder[id(recorder)] = recorder.wrap(fw)
                return by_recorder[id(recorder)](*args)

            return run

        return wrap

    def compile_with(self, compile_fn: Callable[[Any], Callable[..., Any]]) -> Callable[[Any], Callable[..., Any]]:
        """``compile_fn`` compiling once: every later call reuses the compiled model (so
        Dynamo reuses or recompiles), each one logged."""

        def compiled(fn: Any) -> Callable[..., Any]:
            if self._compiled is None:
                self._compiled = compile_fn(fn)
            compiled_fn = self._compiled

            def call(*args: Any, **kwargs: Any) -> Any:
                record = self._begin()
                try:
                    return compiled_fn(*args, **kwargs)
                finally:
                    self._end(record)

            return call

        return compiled

    def _begin(self) -> CallRecord:
        inputs, origin = self.upcoming
        record = CallRecord(index=len(self.calls), inputs=inputs, origin=origin)
        if record.index > 0:
            self.recorders[record.index] = RunRecorder(self.first_recorder.custom_ops_only)
        self.calls.append(record)
        self._current = record
        self._graphs_before = len(self.graphs())
        self._reasons_before = guard_failures_now()
        return record

    def _end(self, record: CallRecord) -> None:
        self._current = None
        record.compiled = list(range(self._graphs_before, len(self.graphs())))
        reasons = new_reasons(self._reasons_before, guard_failures_now())
        if record.index > 0:
            record.recompiles = recompiles_of(record.compiled, reasons, self.compile_ids)


def current_compile_id() -> str:
    compile_id = CompileContext.current_compile_id()
    return str(compile_id) if compile_id is not None else ""


def guard_failures_now() -> dict[Any, list[str]]:
    from torch._dynamo.utils import guard_failures  # lazy: Dynamo, ~0.6 s; a saved trace's load skips it

    return {code: list(reasons) for code, reasons in guard_failures.items()}


def new_reasons(before: dict[Any, list[str]], after: dict[Any, list[str]]) -> list[str]:
    return [reason for code, reasons in after.items() for reason in reasons[len(before.get(code, [])) :]]


def recompiles_of(compiled: Sequence[int], reasons: Sequence[str], compile_ids: dict[Any, str]) -> list[Recompile]:
    """Each graph compiled on a call with the reasons of its frame (Dynamo tags a reason
    with the compile id of the graph whose guard failed: same frame, earlier compile).
    ``compile_ids`` names every graph the reasons may name (a graph number, or a label)."""
    graphs_of: dict[str, list[Any]] = {}
    for graph, compile_id in compile_ids.items():
        graphs_of.setdefault(compile_id, []).append(graph)
    out = []
    for graph in compiled:
        frame = compile_ids.get(graph, "").split("/")[0]
        mine = [r for r in reasons if r.split(":")[0].split("/")[0] == frame] if frame else list(reasons)
        out.append(Recompile(graph, mine, [reason_in_words(r, graphs_of) for r in mine]))
    return out


# -- Dynamo's reasons in words ---------------------------------------------------------------
_TAG = re.compile(r"^\s*(\d+)/(\d+):\s*")
_SIZE = re.compile(r"tensor '([^']+)' size mismatch at index (\d+)\. expected (\d+), actual (\d+)")
_STRIDE = re.compile(r"tensor '([^']+)' stride mismatch at index (\d+)\. expected (\d+), actual (\d+)")
_DTYPE = re.compile(r"tensor '([^']+)' dtype mismatch\. expected (\w+), actual (\w+)")
_OTHER_TENSOR = re.compile(r"tensor '([^']+)' (\w+) mismatch")
_LOCAL_IN_GUARD = re.compile(r"L\['([^']+)'\]((?:\[[^\]]+\])*)")
_SIZE_CALL = re.compile(r"([\w\]\[']+)\.size\(\)\[(\d+)\]")
_LOCATION = re.compile(r"[^\s()]+\.py:\d+")


def reason_in_words(reason: str, graphs_of: dict[str, list[Any]] | None = None) -> str:
    """One of Dynamo's recompile reasons as a sentence about the model's inputs;
    ``graphs_of`` names fxlab's graphs by Dynamo's compile id."""
    tag = _TAG.match(reason)
    graph = "the graph compiled before"
    if tag:
        numbers = (graphs_of or {}).get(f"{tag.group(1)}/{tag.group(2)}")
        graph = f"graph {', '.join(map(str, numbers))}" if numbers else f"the graph Dynamo compiled as {tag.group(1)}/{tag.group(2)}"
    text = reason[tag.end() :] if tag else reason
    text = text.split("\n")[0].strip()
    found = _SIZE.search(text)
    if found:
        name, dim, expected, actual = found.groups()
        return f"input {name}: dim {dim} is {actual}, {graph} has it fixed at {expected}"
    found = _STRIDE.search(text)
    if found:
        name, dim, expected, actual = found.groups()
        return f"input {name}: the stride of dim {dim} is {actual}, {graph} was compiled for {expected}"
    found = _DTYPE.search(text)
    if found:
        name, expected, actual = found.groups()
        return f"input {name}: its dtype is {actual}, {graph} was compiled for {expected}"
    found = _OTHER_TENSOR.search(text)
    if found:
        return f"input {found.group(1)}: its {found.group(2).replace('_', ' ')} differs from what {graph} was compiled for"
    # A guard on sizes: "<expression>  # <user code>  # <file:line> in <function> (...)".
    parts = [p.strip() for p in text.split("  # ")]
    location = _LOCATION.search(parts[-1]) if len(parts) > 1 else None
    code = "  # ".join(parts[1:-1] if location else parts[1:])
    # Dynamo keeps only the end of a long path ("mp/probe/model.py"): the file's name says it whole.
    where = f"at {location.group(0).rsplit('/', 1)[-1]}" if location else ""
    origin = ", ".join(x for x in (f"from {code}" if code else "", where) if x)
    return f"{graph} holds only while {_readable_guard(parts[0])}{f' ({origin})' if origin else ''}; these inputs break it"


def _readable_guard(expression: str) -> str:
    """``L['x'].size()[1]`` and ``x.size()[1]`` as ``x.size(1)``."""
    text = _LOCAL_IN_GUARD.sub(lambda m: f"{m.group(1)}{m.group(2)}", expression)
    return _SIZE_CALL.sub(r"\1.size(\2)", text)


# -- running the calls after the first --------------------------------------------------------
def run_later_calls(
    loaded: LoadedModel,
    log: CallLog,
    compile_fn: Callable[[Any], Callable[..., Any]],
    draws_random: Callable[[], list[str]] | None,
    first_check: CheckResult,
    multi_rank: bool = False,
) -> list[str]:
    """Keep ``first_check`` (eager vs compiled) on the first call; run the model's other
    input sets, or, with one set and a graph with symbolic sizes, a second size derived
    from the first; each eager and compiled, compared. Returns notes for the trace. A
    rank of a multi-rank trace runs the first input set only (every rank's collectives
    are checked on that one run)."""
    if log.calls:
        log.calls[0].check = first_check
    if multi_rank:
        return (
            [f"{len(loaded.more_inputs)} later input set(s) not run: a multi-rank trace runs the first one only"]
            if loaded.more_inputs
            else []
        )
    names = argument_names(loaded.fn)
    if loaded.more_inputs:
        for number, (args, kwargs) in enumerate(loaded.more_inputs, start=1):
            _run_call(replace(loaded, args=args, kwargs=kwargs), log, compile_fn, draws_random, names, f"input set {number}")
        return []
    return _second_size(loaded, log, compile_fn, draws_random)


def _second_size(
    loaded: LoadedModel, log: CallLog, compile_fn: Callable[[Any], Callable[..., Any]], draws_random: Callable[[], list[str]] | None
) -> list[str]:
    """With one input set, a call at a second size when a graph takes symbolic sizes from
    the inputs; notes when there is none."""
    dims = dynamic_dims(log.graphs())
    if not dims:
        return []
    if grown_inputs(loaded.fn, loaded.args, loaded.kwargs, dims, lambda n: n) is None:
        return ["a graph has symbolic sizes, but none comes from the model's inputs: no second size was derived"]
    # Every symbolic dim grown first; then, for a model that fixes some of them in ways
    # Dynamo does not guard (a custom op's fake function, a size it never compares), one
    # size symbol at a time.
    symbols = list(dict.fromkeys(d.symbol for d in dims))
    choices = [dims] + ([[d for d in dims if d.symbol == symbol] for symbol in symbols] if len(symbols) > 1 else [])
    failures: list[str] = []
    for chosen in choices:
        for grow, how in ((lambda n: n + 1, "+1"), (lambda n: 2 * n, "x2")):
            failure = _try_second_size(loaded, log, compile_fn, draws_random, chosen, grow, how)
            if failure is None:
                return []
            if chosen is dims:
                failures.append(failure)
    alone = ", nor with one size symbol grown at a time" if len(choices) > 1 else ""
    return [
        f"the dynamic graph(s) were checked at the traced size only: the model does not run at a second size ({'; '.join(failures)}{alone})"
    ]


def _try_second_size(
    loaded: LoadedModel,
    log: CallLog,
    compile_fn: Callable[[Any], Callable[..., Any]],
    draws_random: Callable[[], list[str]] | None,
    dims: Sequence[DynamicDim],
    grow: Callable[[int], int],
    how: str,
) -> str | None:
    """One call at ``dims`` grown by ``grow``; None when the model ran, else why not."""
    grown = grown_inputs(loaded.fn, loaded.args, loaded.kwargs, dims, grow)
    if grown is None:
        return f"{how}: no such input"
    args, kwargs, changes = grown
    before = len(log.calls)
    try:
        _run_call(
            replace(loaded, args=args, kwargs=kwargs),
            log,
            compile_fn,
            draws_random,
            argument_names(loaded.fn),
            f"derived ({how}): {changes}",
            derived=True,
        )
        return None
    except CaptureError as exc:
        del log.calls[before:]  # a size the model does not run at is no call
        return f"{how}: {exc}"


def _run_call(
    loaded: LoadedModel,
    log: CallLog,
    compile_fn: Callable[[Any], Callable[..., Any]],
    draws_random: Callable[[], list[str]] | None,
    names: list[str],
    origin: str,
    derived: bool = False,
) -> None:
    log.upcoming = (describe_inputs(loaded.args, loaded.kwargs, names), origin)
    before = len(log.calls)
    try:
        check = with_stack_room(compare_eager_compiled, loaded, compile_fn, draws_random, derived=derived)
    except CaptureError as exc:
        raise CaptureError(f"{origin} ({log.upcoming[0]}): {exc}") from exc
    if len(log.calls) > before:
        log.calls[-1].check = check


def check_later_calls(
    calls: Sequence[CallRecord], recorders: dict[int, RunRecorder], ir_check: Callable[[set[int], RunRecorder], Any]
) -> None:
    """The IR check of each call after the first: the graphs it ran, on its own inputs
    (``recorders``: call index -> the runs of that call)."""
    for call in calls[1:]:
        call.ir_check = ir_check(set(call.graphs), recorders[call.index])
