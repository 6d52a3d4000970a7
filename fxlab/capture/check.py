"""Numerical checks: the compiled model against eager, and the Ascend IR (run by the CPU
reference executor) against the compiled run of its functional graph."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

import torch
import torch.fx as fx

from fxlab.capture.compile_error import summarize_compile_error
from fxlab.capture.custom_op_check import has_custom_ops
from fxlab.capture.input_sets import with_dynamo_marks
from fxlab.capture.loader import LoadedModel
from fxlab.capture.output_leaves import output_leaves
from fxlab.capture.trace import CheckResult
from fxlab.errors import CaptureError, FxlabError
from fxlab.source_lines import raise_location


COMPARISON_SEED = 0


# (rtol, atol) per dtype, as torch.testing.assert_close sets them.
_TOLERANCES = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex32: (1e-3, 1e-5),
    torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}


def _tolerance(dtype: torch.dtype) -> tuple[float, float]:
    return _TOLERANCES.get(dtype, (0.0, 0.0))  # assert_close compares other dtypes exactly


def _same_value(expected: Any, actual: Any) -> bool:
    """Equality of two non-tensor leaves. Arrays (``==`` gives no single truth value)
    compare element-wise; anything else that cannot be compared counts as different,
    never as a match."""
    if type(expected) is not type(actual):
        return False
    if isinstance(expected, float) and expected != expected:
        return actual != actual  # NaN where eager has NaN
    try:
        return bool(expected == actual)
    except Exception:  # noqa: BLE001 - e.g. a numpy array
        pass
    try:
        import numpy

        return bool(numpy.array_equal(expected, actual, equal_nan=True))
    except Exception:  # noqa: BLE001 - no numpy, or not array-like
        return False


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass
class Comparison:
    """Tensors compared by value, or with ``values=False`` by shape and dtype only
    (``formed`` counts those)."""

    compared: int = 0
    max_abs_diff: float = 0.0
    mismatches: list[str] = field(default_factory=list)
    values: bool = True
    formed: int = 0
    notes: list[str] = field(default_factory=list)  # differences in values no one uses

    def add_form(self, label: str, expected: torch.Tensor, actual: Any) -> None:
        """Shape and dtype only: for a value that depends on random draws."""
        if isinstance(actual, torch.Tensor):
            self.formed += 1
        self._differs_in_form(label, expected, actual)

    def _differs_in_form(self, label: str, expected: torch.Tensor, actual: Any, against: str = "") -> bool:
        """Record a mismatch when ``actual`` is no tensor, or has another shape or dtype."""
        if not isinstance(actual, torch.Tensor):
            self.mismatches.append(f"{label}: expected a tensor, got {type(actual).__name__}")
            return True
        if expected.shape != actual.shape or expected.dtype != actual.dtype:
            self.mismatches.append(f"{label}: {actual.dtype}{list(actual.shape)} vs {against}{expected.dtype}{list(expected.shape)}")
            return True
        return False

    def add(self, label: str, expected: Any, actual: Any) -> None:
        expected, actual = _local(expected), _local(actual)
        if not self.values and isinstance(expected, torch.Tensor):
            self.add_form(label, expected, actual)
            return
        if not isinstance(expected, torch.Tensor):
            if not _same_value(expected, actual):
                self.mismatches.append(f"{label}: {_short(expected)} != {_short(actual)}")
            return
        if isinstance(actual, torch.Tensor):
            self.compared += 1
        if self._differs_in_form(label, expected, actual, against="eager "):
            return
        if expected.numel() == 0:
            return
        if expected.is_floating_point() or expected.is_complex():
            diff = (expected - actual).abs().max().item()
            self.max_abs_diff = max(self.max_abs_diff, diff)
            rtol, atol = _tolerance(expected.dtype)
            if not torch.allclose(expected, actual, rtol=rtol, atol=atol, equal_nan=True):
                self.mismatches.append(f"{label}: max |diff| {diff:.3g}")
        elif not torch.equal(expected, actual):
            self.mismatches.append(f"{label}: values differ")

    def merge(self, other: Comparison) -> None:
        self.compared += other.compared
        self.formed += other.formed
        self.max_abs_diff = max(self.max_abs_diff, other.max_abs_diff)
        self.mismatches.extend(other.mismatches)
        self.notes.extend(other.notes)

    def result(self) -> CheckResult:
        return CheckResult(
            ok=not self.mismatches,
            compared=self.compared,
            max_abs_diff=self.max_abs_diff,
            mismatches=self.mismatches[:10],
            notes=self.notes,
        )


def _local(value: Any) -> Any:
    """A distributed tensor (a tensor-parallel parameter) as this rank's shard: what the
    rank computed and holds."""
    to_local = getattr(value, "to_local", None)
    return to_local() if isinstance(value, torch.Tensor) and callable(to_local) else value


def compare_outputs(cmp: Comparison, eager: Any, compiled: Any) -> None:
    """Compare two model outputs leaf by leaf (see :mod:`fxlab.capture.output_leaves`)."""
    expected, actual = output_leaves(eager), output_leaves(compiled)
    only_eager = [p for p in expected if p not in actual]
    only_compiled = [p for p in actual if p not in expected]
    if only_eager or only_compiled:
        cmp.mismatches.append(f"outputs differ in structure: eager has {_few(only_eager)}, compiled has {_few(only_compiled)}")
    for path, value in expected.items():
        if path in actual:
            cmp.add(path, value, actual[path])


def _compare_inputs(cmp: Comparison, eager: tuple[Any, Any], compiled: tuple[Any, Any]) -> None:
    """The example inputs after the two calls (a model may write into them), leaf by leaf:
    ``input 1[0]`` is the first tensor of argument 1's list, ``input 'cache'`` a keyword."""
    (eager_args, eager_kwargs), (args, kwargs) = eager, compiled
    pairs = [(f"input {i}", e, c) for i, (e, c) in enumerate(zip(eager_args, args))]
    pairs += [(f"input {k!r}", eager_kwargs[k], kwargs[k]) for k in eager_kwargs if k in kwargs]
    for root, e, c in pairs:
        expected, actual = output_leaves(e, root), output_leaves(c, root)
        for path, value in expected.items():
            cmp.add(f"{path} after the call", value, actual.get(path))


def _few(paths: list[str]) -> str:
    if not paths:
        return "nothing more"
    return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def clone_tree(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return _clone_tensor(value)
    if isinstance(value, (list, tuple)):
        return type(value)(clone_tree(v) for v in value)
    if isinstance(value, dict):
        return {k: clone_tree(v) for k, v in value.items()}
    return value


def _clone_tensor(t: torch.Tensor) -> torch.Tensor:
    """A copy that keeps the user's Dynamo marks (``mark_dynamic``, ``mark_static`` ...:
    attributes ``_dynamo_*`` on the tensor), so the compiled run sees what the user set."""
    return with_dynamo_marks(t.detach().clone(), t)


def _state(fn: Any) -> dict[str, torch.Tensor]:
    if not isinstance(fn, torch.nn.Module):
        return {}
    state: dict[str, torch.Tensor] = dict(fn.named_parameters())
    state.update(fn.named_buffers())
    return state


@dataclass
class _Saved:
    """A parameter or buffer as it was: its values and where they sit in its memory."""

    value: torch.Tensor
    layout: tuple[tuple[int, ...], tuple[int, ...], int]


def _save(state: dict[str, torch.Tensor]) -> dict[str, _Saved]:
    return {name: _Saved(t.detach().clone(), (tuple(t.shape), t.stride(), int(t.storage_offset()))) for name, t in state.items()}


def _restore(state: dict[str, torch.Tensor], saved: dict[str, _Saved]) -> None:
    """Put every parameter and buffer back as it was: shape, strides and offset first (an
    in-place ``unsqueeze_``/``t_`` changes them on the same memory), then the values."""
    with torch.no_grad():
        for name, tensor in state.items():
            before = saved[name]
            if (tuple(tensor.shape), tensor.stride(), tensor.storage_offset()) != before.layout:
                tensor.as_strided_(*before.layout)
            tensor.copy_(before.value)


def compare_eager_compiled(
    loaded: LoadedModel,
    compile_fn: Callable[[Any], Callable[..., Any]],
    draws_random: Callable[[], list[str]] | None = None,
    *,
    compiled_first: bool = False,
) -> CheckResult:
    """Run eager and compiled on clones of the inputs from the same model state; compare
    outputs, input mutations and parameter/buffer mutations. Leaves the model's state as
    it found it. Raises :class:`CaptureError` if eager or compilation fails.
    ``compiled_first`` runs the compiled model before eager (a rank of a multi-rank trace:
    its graphs' collectives are checked across ranks before any of them runs)."""
    # Both runs start from one seed, so a model that draws random numbers draws the same
    # ones in both where the compiled graph draws them in eager's order; the caller's
    # random state is left as it was.
    with torch.random.fork_rng(devices=[]):
        return _compare_from_one_seed(loaded, compile_fn, draws_random, compiled_first)


def _compare_from_one_seed(
    loaded: LoadedModel, compile_fn: Callable[[Any], Callable[..., Any]], draws_random: Callable[[], list[str]] | None, compiled_first: bool
) -> CheckResult:
    state = _state(loaded.fn)
    saved = _save(state)
    eager_args, eager_kwargs = clone_tree(loaded.args), clone_tree(loaded.kwargs)
    args, kwargs = clone_tree(loaded.args), clone_tree(loaded.kwargs)
    with torch.no_grad():
        if compiled_first:
            compiled_out, compiled_state = _run_compiled(loaded, compile_fn, state, saved, args, kwargs)
        ran = _run_eager(loaded, compile_fn, state, saved, eager_args, eager_kwargs)
        if isinstance(ran, CheckResult):
            return ran
        eager_out, eager_state = ran
        if not compiled_first:
            compiled_out, compiled_state = _run_compiled(loaded, compile_fn, state, saved, args, kwargs)
    eager = CallRun(eager_out, eager_args, eager_kwargs, eager_state)
    return compare_runs(eager, CallRun(compiled_out, args, kwargs, compiled_state), draws_random)


@dataclass
class CallRun:
    """One call of a model: what it returned, its arguments after the call (it may write
    into them) and its state tensors after the call, by name."""

    outputs: Any
    args: Any
    kwargs: Any
    state: dict[str, torch.Tensor]


def compare_runs(eager: CallRun, compiled: CallRun, draws_random: Callable[[], list[str]] | None = None) -> CheckResult:
    """Eager against compiled, leaf by leaf: the outputs, the arguments after the call, the
    state tensors after it. When values differ and the model draws random numbers, only
    what does not depend on the draws (shapes, dtypes) is compared, and the check says so."""

    def compare(values: bool) -> Comparison:
        cmp = Comparison(values=values)
        compare_outputs(cmp, eager.outputs, compiled.outputs)
        _compare_inputs(cmp, (eager.args, eager.kwargs), (compiled.args, compiled.kwargs))
        for name in eager.state:
            cmp.add(f"{name} after the call", eager.state[name], compiled.state.get(name))
        return cmp

    cmp = compare(values=True)
    random_ops = draws_random() if cmp.mismatches and draws_random is not None else []
    if not random_ops:
        return cmp.result()
    # The compiled graph draws in another order (or with other ops) than eager: its
    # numbers differ by design, so only what does not depend on the draws is compared.
    form = compare(values=False)
    why = f"values not compared: the model draws random numbers ({', '.join(random_ops)}) and the compiled run drew other ones than eager from the same seed"
    if form.mismatches:
        result = form.result()
        result.not_run.append(why)
        return result
    return CheckResult(ok=True, skipped=f"{why}; the shapes and dtypes of all {form.formed} tensor(s) match")


def _run_eager(
    loaded: LoadedModel,
    compile_fn: Callable[[Any], Callable[..., Any]],
    state: dict[str, torch.Tensor],
    saved: dict[str, _Saved],
    args: Any,
    kwargs: Any,
) -> tuple[Any, Any] | CheckResult:
    """Eager's outputs and the model state after the call (the state is then restored);
    a check result when eager cannot run on CPU (capture still runs)."""
    torch.manual_seed(COMPARISON_SEED)
    try:
        out = loaded.fn(*args, **kwargs)
    except FxlabError:  # fxlab's own word on it (an NPU-only call on the CPU standing in for the NPU)
        raise
    except Exception as exc:
        missing = missing_cpu_kernel(exc)
        if missing is not None:
            _restore(state, saved)
            return _capture_without_running(loaded, compile_fn, state, saved, missing)
        where = raise_location(exc)
        raise CaptureError(
            f"the model raised {type(exc).__name__} when run eagerly on its example inputs{f' (at {where})' if where else ''}: {exc}. "
            "fxlab compares compiled with eager, so the model must first run eagerly."
        ) from exc
    after = clone_tree(state)
    _restore(state, saved)
    return out, after


def _run_compiled(
    loaded: LoadedModel,
    compile_fn: Callable[[Any], Callable[..., Any]],
    state: dict[str, torch.Tensor],
    saved: dict[str, _Saved],
    args: Any,
    kwargs: Any,
) -> tuple[Any, Any]:
    """The compiled model's outputs and the model state after the call (then restored)."""
    torch.manual_seed(COMPARISON_SEED)
    try:
        return compile_fn(loaded.fn)(*args, **kwargs), clone_tree(state)
    except CaptureError:
        raise
    except Exception as exc:
        raise summarize_compile_error(exc, loaded) from exc
    finally:
        _restore(state, saved)


_NO_CPU_KERNEL = re.compile(r"Could not run '([\w:.]+)' with arguments from the 'CPU' backend")


def missing_cpu_kernel(exc: BaseException | None) -> str | None:
    """Why a run stopped at an operator it cannot run on CPU, or None: the operator has
    no CPU kernel (a torch_npu operator defined from its schema and Meta function only, a
    custom op with a Meta function only), or fxlab's CPU reference kernel of it does not
    implement the call (:class:`~fxlab.ir.kernels.registry.KernelGap`: it names the option)."""
    from fxlab.ir.kernels.registry import KernelGap

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, KernelGap):
            return exc.reason()
        found = _NO_CPU_KERNEL.search(str(exc))
        if isinstance(exc, NotImplementedError) and found:
            return f"{found.group(1).replace('::', '.')} has no CPU kernel"
        exc = exc.__cause__ or exc.__context__
    return None


def _capture_without_running(
    loaded: LoadedModel,
    compile_fn: Callable[[Any], Callable[..., Any]],
    state: dict[str, torch.Tensor],
    saved: dict[str, _Saved],
    reason: str,
) -> CheckResult:
    """Capture (Dynamo and the backend need only Meta functions) although neither eager
    nor the compiled graph can run on CPU: every stage is still recorded."""
    args, kwargs = clone_tree(loaded.args), clone_tree(loaded.kwargs)
    try:
        compile_fn(loaded.fn)(*args, **kwargs)
    except Exception as exc:  # the compiled graph stops at the same operator
        if missing_cpu_kernel(exc) is None:
            raise summarize_compile_error(exc, loaded) from exc
    finally:
        _restore(state, saved)
    return CheckResult(ok=False, skipped=reason)


@dataclass
class GraphRun:
    inputs_before: list[Any]
    outputs: list[Any] | None = None
    inputs_after: list[Any] | None = None
    stopped: str | None = None  # why the run stopped inside this graph (an operator it cannot run)


class RunRecorder:
    """Wraps each functional graph aot compiles, recording its first call: the inputs it
    got (before and after the call, as it mutates some) and its outputs, or why the call
    stopped. With ``custom_ops_only``, only graphs that call a custom op are recorded
    (their fake functions are checked; the copies cost)."""

    def __init__(self, custom_ops_only: bool = False) -> None:
        self.runs: dict[int, GraphRun] = {}
        self.custom_ops_only = custom_ops_only
        self.stopped: str | None = None  # why the compiled run stopped, at the first graph that stopped

    def wrap(self, fw: fx.GraphModule) -> Callable[..., Any]:
        # A graph with custom ops is always recorded: their fake functions are checked
        # against their kernels on these inputs (fxlab.capture.custom_op_check).
        if self.custom_ops_only and not has_custom_ops(fw):
            return fw
        key = id(fw)

        def run(*args: Any) -> Any:
            if key in self.runs:
                return fw(*args)
            record = self.runs[key] = GraphRun(inputs_before=clone_tree(list(args)))
            try:
                out = fw(*args)
            except Exception as exc:
                record.stopped = missing_cpu_kernel(exc)
                self.stopped = self.stopped or record.stopped
                raise
            record.outputs, record.inputs_after = clone_tree(list(out)), clone_tree(list(args))
            return out

        return run

    def run_of(self, fw: fx.GraphModule) -> GraphRun | None:
        return self.runs.get(id(fw))

    def forget(self) -> None:
        """Drop the values the runs kept, once their checks are done (a program goes on
        calling the graphs: later runs still pass through unrecorded)."""
        self.runs = dict.fromkeys(self.runs, GraphRun(inputs_before=[]))
