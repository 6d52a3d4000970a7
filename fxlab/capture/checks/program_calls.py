"""One call of a function a program compiled, as fxlab watches it, and the eager run
that checks it (``fxlab run``).

The program sees only its own compiled call. When that call makes Dynamo compile, the
call is snapshotted as the first graph reaches the backend, before anything of the call
has run: clones of its arguments and of the state tensors it may write (the module's
buffers, the graphs' other inputs; parameters by their version counter only), the
module's plain Python attributes and the plain globals of the function's own module (a
call counter), and the random state the call began with. After the
compiled call returns, the original function runs eagerly from that snapshot (on clones,
with the call's random state, Dynamo off, its printing swallowed), is compared with the
compiled call leaf by leaf (:func:`~fxlab.capture.checks.eager.compare_runs`), and everything
the eager run touched is put back as the compiled call left it (state, attributes,
random state): the program goes on exactly as it would without fxlab.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._pytree import tree_leaves

from fxlab.capture.checks.custom_ops import GraphBreaks
from fxlab.capture.as_npu import SdpaAsOnNpu
from fxlab.capture.checks.eager import CallRun, compare_runs, explained_by_fused_sdpa
from fxlab.capture.checks.runs import missing_cpu_kernel
from fxlab.capture.checks.values import clone_tree
from fxlab.capture.trace import CheckResult
from fxlab.source_lines import raise_location

PLAIN_ATTRIBUTES = (int, float, bool, str, type(None))


@dataclass
class StateTensor:
    """A tensor the call may write that is not one of its arguments."""

    tensor: torch.Tensor
    name: str
    before: torch.Tensor | None  # its value before the call (None: a parameter, or first seen mid-call)
    version: int | None  # its version counter when the snapshot was taken (or it was first seen); None: an inference tensor


@dataclass
class Snapshot:
    """What the eager run starts from: the call's inputs and state as they were."""

    args: Any
    kwargs: Any
    state: dict[int, StateTensor] = field(default_factory=dict)  # id(tensor) -> it
    attributes: list[tuple[object, str, Any]] = field(default_factory=list)


class CallWatch:
    """One call of a watched function: its real arguments, the random state it began
    with, and, once Dynamo compiles during it, its snapshot (or why there is none)."""

    def __init__(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        frame: Any,
        module: torch.nn.Module | None,
        code_globals: dict[str, Any] | None = None,
    ) -> None:
        self.args, self.kwargs, self.frame, self.module = args, kwargs, frame, module
        self.code_globals = code_globals  # the globals of the function's own module
        self.rng = torch.get_rng_state()
        self.arg_versions = _versions(tree_leaves((args, kwargs)))
        self.graphs_ran = False  # a compiled graph of the function ran during this call
        self.event: Any = None  # the compile this call caused (fxlab.capture.program.CompileEvent)
        self.snapshot: Snapshot | None = None
        self.missing: str | None = None  # why the eager check cannot run on this call
        self.reasons_before: dict[Any, list[str]] = {}  # Dynamo's recompile reasons when the call began
        self.breaks = GraphBreaks()  # Dynamo's graph breaks from the call's start

    def saw_graph(self, graph_inputs: Sequence[Any], names: Sequence[str]) -> None:
        """A graph compiled during the call, before it runs: the first one snapshots the
        call; a later one adds the state tensors only it reads (their values before the
        call are gone if an earlier graph of the call ran)."""
        if self.missing is not None:
            return
        if self.snapshot is None:
            self._take_snapshot()
        if self.snapshot is not None:
            args = {id(leaf) for leaf in tree_leaves((self.args, self.kwargs))}
            fresh = not self.graphs_ran
            for tensor, name in zip(graph_inputs, names):
                if isinstance(tensor, torch.Tensor) and id(tensor) not in args and id(tensor) not in self.snapshot.state:
                    self.snapshot.state[id(tensor)] = _saved(tensor, name, keep=fresh)

    def _take_snapshot(self) -> None:
        if self.graphs_ran or _versions(tree_leaves((self.args, self.kwargs))) != self.arg_versions:
            self.missing = "Dynamo compiled during the call after part of it had run, so the call's inputs as they were before it are gone"
            return
        snapshot = Snapshot(clone_tree(self.args), clone_tree(self.kwargs))
        if self.module is not None:
            named = [*self.module.named_parameters(), *self.module.named_buffers()]
            snapshot.state = {id(t): _saved(t, name, keep=True) for name, t in named}
        snapshot.attributes = self.plain_values()
        self.snapshot = snapshot

    def plain_values(self) -> list[tuple[object, str, Any]]:
        """The module's plain attributes and the plain globals of the function's module, now."""
        attributes = plain_attributes(self.module) if self.module is not None else []
        return attributes + plain_globals(self.code_globals)


def _saved(tensor: torch.Tensor, name: str, keep: bool) -> StateTensor:
    """A state tensor; its value kept when ``keep`` (parameters are not copied: a call
    that writes one cannot be checked)."""
    before = tensor.detach().clone() if keep and not isinstance(tensor, torch.nn.Parameter) else None
    return StateTensor(tensor, name, before, version_of(tensor))


def version_of(tensor: torch.Tensor) -> int | None:
    """The tensor's version counter (it counts in-place writes); None for an inference
    tensor (made under ``torch.inference_mode()``, as serving code runs), which keeps none."""
    return None if tensor.is_inference() else tensor._version


def written_since(tensor: torch.Tensor, version: int | None) -> bool:
    """Whether ``tensor`` may have been written since it had ``version``: an inference
    tensor may always have been."""
    return version is None or version_of(tensor) != version


def _versions(leaves: Sequence[Any]) -> list[int | None]:
    # An inference tensor argument counts as unchanged: a write into it before the call's
    # first graph (after a graph break) cannot be seen.
    return [version_of(leaf) or 0 if isinstance(leaf, torch.Tensor) else 0 for leaf in leaves]


def plain_attributes(module: torch.nn.Module) -> list[tuple[object, str, Any]]:
    """The plain Python values (numbers, strings, flags, None) the module and its
    submodules hold as attributes: a forward that counts its calls changes them."""
    return [
        (sub, key, value)
        for sub in module.modules()
        for key, value in vars(sub).items()
        if not key.startswith("_") and type(value) in PLAIN_ATTRIBUTES
    ]


def plain_globals(namespace: dict[str, Any] | None) -> list[tuple[object, str, Any]]:
    """The plain values of a module's globals (a ``global CALLS; CALLS += 1`` counter)."""
    if namespace is None:
        return []
    return [(namespace, key, value) for key, value in namespace.items() if not key.startswith("__") and type(value) in PLAIN_ATTRIBUTES]


def function_globals(fn: Any) -> dict[str, Any] | None:
    """The globals of the module a compiled function (or a module's ``forward``) is written in."""
    code = type(fn).forward if isinstance(fn, torch.nn.Module) else fn
    found = getattr(code, "__globals__", None)
    return found if isinstance(found, dict) else None


def _set_attributes(values: list[tuple[object, str, Any]]) -> None:
    for owner, key, value in values:
        if isinstance(owner, dict):
            owner[key] = value
        else:
            object.__setattr__(owner, key, value)


# -- the eager run --------------------------------------------------------------------------------
def eager_check(
    watch: CallWatch, original: Callable[..., Any], output: Any, draws_random: Callable[[], list[str]] | None = None
) -> CheckResult:
    """The original function run eagerly from the call's snapshot, against the compiled
    call that returned ``output``; the program's state is left as the compiled call left it."""
    snapshot = watch.snapshot
    if snapshot is None:
        return CheckResult(ok=True, skipped=watch.missing or "the call was not snapshotted")
    written = [s for s in snapshot.state.values() if written_since(s.tensor, s.version)]
    lost = [s.name for s in written if s.before is None]
    if lost:
        return CheckResult(
            ok=True, skipped=f"the call wrote into {', '.join(lost[:3])}, whose value before the call fxlab does not keep (a parameter)"
        )
    result = _against_eager(watch, original, output, written, draws_random, contextlib.nullcontext())
    if result.mismatches:  # perhaps only CPU's own attention kernel rounding otherwise
        sdpa = SdpaAsOnNpu()
        as_on_npu = _against_eager(watch, original, output, written, draws_random, sdpa)
        result = explained_by_fused_sdpa(result, as_on_npu, sdpa.fused)
    return result


def _against_eager(
    watch: CallWatch,
    original: Callable[..., Any],
    output: Any,
    written: list[StateTensor],
    draws_random: Callable[[], list[str]] | None,
    around: contextlib.AbstractContextManager[Any],
) -> CheckResult:
    """One eager run of ``original`` (inside ``around``) from the call's snapshot, compared
    with the compiled call; ``written``: the state the compiled call wrote. The program's
    state is put back as the compiled call left it."""
    snapshot = watch.snapshot
    assert snapshot is not None
    after = {key: s.tensor.detach().clone() for key, s in snapshot.state.items() if s.before is not None}
    attributes_after = watch.plain_values()
    rng_after = torch.get_rng_state()
    try:
        with _put_back(snapshot, after, attributes_after, rng_after):
            _set_state(snapshot, {key: s.before for key, s in snapshot.state.items() if s.before is not None})
            _set_attributes(snapshot.attributes)
            torch.set_rng_state(watch.rng)
            versions = {key: version_of(s.tensor) for key, s in snapshot.state.items()}
            with around:
                eager = _run_eagerly(original, snapshot)
            touched = {id(s.tensor) for s in written} | {k for k, s in snapshot.state.items() if written_since(s.tensor, versions[k])}
            eager_state = {snapshot.state[key].name: snapshot.state[key].tensor.detach().clone() for key in touched}
    except _EagerFailed as failed:
        return CheckResult(ok=True, skipped=str(failed))
    compiled_state = {snapshot.state[key].name: after.get(key, snapshot.state[key].tensor) for key in touched}
    compiled = CallRun(output, watch.args, watch.kwargs, compiled_state)
    result = compare_runs(CallRun(eager.outputs, eager.args, eager.kwargs, eager_state), compiled, draws_random)
    kept = [snapshot.state[key].name for key in touched if key not in after]
    if kept:  # eager wrote a parameter the compiled call did not: it differs from the compiled call anyway
        result.notes.append(f"the eager run wrote into {', '.join(kept[:3])}, which fxlab could not put back as the compiled call left it")
    return result


class _EagerFailed(Exception):
    """The eager run could not run; the message says why (a check that did not run)."""


def _run_eagerly(original: Callable[..., Any], snapshot: Snapshot) -> CallRun:
    """``original`` on clones of the snapshot's inputs, with Dynamo off and its printing
    kept from the program's output."""
    args, kwargs = clone_tree(snapshot.args), clone_tree(snapshot.kwargs)
    quiet = io.StringIO()
    try:
        with torch.compiler.set_stance("force_eager"), contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
            outputs = clone_tree(original(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - the program's own run went on; the check says why it could not
        missing = missing_cpu_kernel(exc)
        where = raise_location(exc)
        raise _EagerFailed(
            missing
            or f"the function raised {type(exc).__name__} when run eagerly on the call's inputs{f' (at {where})' if where else ''}: {exc}"
        ) from exc
    return CallRun(outputs, args, kwargs, {})


def _set_state(snapshot: Snapshot, values: dict[int, torch.Tensor]) -> None:
    with torch.no_grad():
        for key, value in values.items():
            tensor = snapshot.state[key].tensor
            if tensor.shape != value.shape:  # an in-place resize: back to the kept shape first
                tensor.resize_(value.shape)
            tensor.copy_(value)


@contextlib.contextmanager
def _put_back(
    snapshot: Snapshot, after: dict[int, torch.Tensor], attributes: list[tuple[object, str, Any]], rng: torch.Tensor
) -> Iterator[None]:
    """Whatever happens in the block, the state, attributes and random state end as the
    compiled call left them."""
    try:
        yield
    finally:
        _set_state(snapshot, after)
        _set_attributes(attributes)
        torch.set_rng_state(rng)
