"""Eager against compiled: the model run eagerly and compiled from one state and one
seed, on clones of its inputs; outputs, inputs after the call and the model's parameters
and buffers compared leaf by leaf (:func:`compare_runs`, which ``fxlab run``'s check of a
program's call uses too). The model's state is left as it was found.
"""

from __future__ import annotations

import re
import traceback

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from fxlab.capture.checks.plain_state import PlainState
from fxlab.capture.checks.runs import kernel_fault, missing_cpu_kernel
from fxlab.capture.as_npu import SdpaAsOnNpu
from fxlab.capture.checks.values import Comparison, clone_tree, compare_inputs, compare_outputs
from fxlab.capture.compile_error import first_line, root_cause, summarize_compile_error
from fxlab.capture.loader import LoadedModel
from fxlab.capture.trace import CheckResult
from fxlab.errors import CaptureError, EagerModelError, FxlabBug, FxlabError
from fxlab.source_lines import USER, kind, raise_location


COMPARISON_SEED = 0


def _state(fn: Any) -> dict[str, torch.Tensor]:
    if not isinstance(fn, torch.nn.Module):
        return {}
    state: dict[str, torch.Tensor] = dict(fn.named_parameters())
    state.update(fn.named_buffers())
    return state


# torch.ops' error for an op no library defined: ``'_OpNamespace' 'acme' object has no attribute 'f'``.
_UNDEFINED_OP = re.compile(r"'_OpNamespace' '(\w+)' object has no attribute '(\w+)'")


def undefined_op_hint(exc: BaseException) -> str:
    """The fix for a custom op the model calls that nothing defined (its plugin not
    loaded), or nothing."""
    found = _UNDEFINED_OP.search(str(exc)) if isinstance(exc, AttributeError) else None
    if found is None:
        return ""
    namespace, name = found.groups()
    return (
        f"No library defines the op {namespace}::{name}: pass the file that defines it (its torch.library "
        "definition, or fxlab's define_op) with --plugin FILE. "
    )


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
    derived: bool = False,
) -> CheckResult:
    """Run eager and compiled on clones of the inputs from the same model state; compare
    outputs, input mutations and parameter/buffer mutations. Leaves the model's state as
    it found it. Raises :class:`CaptureError` if eager or compilation fails.
    ``compiled_first`` runs the compiled model before eager (a rank of a multi-rank trace:
    its graphs' collectives are checked across ranks before any of them runs).
    ``derived``: fxlab made the inputs (a second size): an operator whose CPU reference
    kernel fails on them is taken to refuse them, a :class:`CaptureError` as any other
    eager failure, not a fault of fxlab's kernel."""
    # Both runs start from one seed, so a model that draws random numbers draws the same
    # ones in both where the compiled graph draws them in eager's order; the caller's
    # random state is left as it was.
    with torch.random.fork_rng(devices=[]):
        return _compare_from_one_seed(loaded, compile_fn, draws_random, compiled_first, derived)


def _compare_from_one_seed(
    loaded: LoadedModel,
    compile_fn: Callable[[Any], Callable[..., Any]],
    draws_random: Callable[[], list[str]] | None,
    compiled_first: bool,
    derived: bool = False,
) -> CheckResult:
    # Who is at fault when the capture fails is proven by compiling without fxlab, on the
    # first call of one process only: a rank's collectives would wait for the other ranks,
    # and a later size's failure is the caller's to handle (Dynamo's caches stay as they are).
    model = _Model(loaded, compile_fn, derived, probe_blame=not (derived or compiled_first), compiled_first=compiled_first)
    eager_args, eager_kwargs = clone_tree(loaded.args), clone_tree(loaded.kwargs)
    args, kwargs = clone_tree(loaded.args), clone_tree(loaded.kwargs)
    with torch.no_grad():
        if compiled_first:
            compiled_out, compiled_state = model.run_compiled(args, kwargs)
        ran = model.run_eager(eager_args, eager_kwargs)
        if isinstance(ran, CheckResult):
            return ran
        eager_out, eager_state = ran
        if not compiled_first:
            compiled_out, compiled_state = model.run_compiled(args, kwargs)
    eager = CallRun(eager_out, eager_args, eager_kwargs, eager_state)
    compiled = CallRun(compiled_out, args, kwargs, compiled_state)
    result = compare_runs(eager, compiled, draws_random)
    if result.mismatches:
        result = _as_on_npu_if_it_explains(model, loaded, compiled, draws_random, result)
    return result


def _as_on_npu_if_it_explains(
    model: _Model, loaded: LoadedModel, compiled: CallRun, draws_random: Callable[[], list[str]] | None, result: CheckResult
) -> CheckResult:
    """``result``, or the check of eager run with SDPA as on an NPU machine where that
    explains the mismatch (see :func:`explained_by_fused_sdpa`)."""
    args, kwargs = clone_tree(loaded.args), clone_tree(loaded.kwargs)
    with torch.no_grad(), SdpaAsOnNpu() as sdpa:
        ran = model.run_eager(args, kwargs)
    if isinstance(ran, CheckResult):
        return result
    return explained_by_fused_sdpa(result, compare_runs(CallRun(ran[0], args, kwargs, ran[1]), compiled, draws_random), sdpa.fused)


def explained_by_fused_sdpa(result: CheckResult, as_on_npu: CheckResult, fused: int) -> CheckResult:
    """A mismatch that eager run with SDPA as on an NPU machine (torch_npu's fused kernel,
    as the compiled graph runs it; ``fused`` calls took it) does not have is the rounding of
    another attention kernel, not a graph that computes other values: the check matches,
    saying by how much CPU's own SDPA differs. Any other mismatch stands."""
    if fused == 0 or as_on_npu.mismatches or not as_on_npu.ok:
        return result
    as_on_npu.approximations.append(
        f"F.scaled_dot_product_attention ({fused} call(s)) is torch_npu's fused kernel in the compiled graph, as on an NPU "
        f"machine; against CPU's own SDPA the outputs differ by rounding ({'; '.join(result.mismatches[:2])}), and eager with "
        "the fused kernel matches"
    )
    return as_on_npu


def _raised_by_the_models_own_code(exc: BaseException) -> str | None:
    """Where the user's own code raised ``exc`` as it ran (its traceback's innermost frame is
    the user's, and the exception is not one of torch's): Dynamo's own failures are torch's
    exceptions raised in torch's frames, and a frame Dynamo cannot trace runs as plain Python."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames or type(exc).__module__.partition(".")[0] == "torch" or kind(frames[-1].filename) != USER:
        return None
    return raise_location(exc)


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
        compare_inputs(cmp, (eager.args, eager.kwargs), (compiled.args, compiled.kwargs))
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


class _Model:
    """The model and how to compile it, with its parameters and buffers as they were: each
    run starts from them and puts them back."""

    def __init__(
        self,
        loaded: LoadedModel,
        compile_fn: Callable[[Any], Callable[..., Any]],
        derived: bool = False,
        probe_blame: bool = False,
        compiled_first: bool = False,
    ) -> None:
        self.loaded, self.compile_fn, self.derived, self.probe_blame = loaded, compile_fn, derived, probe_blame
        self.compiled_first = compiled_first
        self.state = _state(loaded.fn)
        self.saved = _save(self.state)
        self.plain = PlainState(loaded.fn)

    def put_back(self) -> None:
        """The model's parameters, buffers and plain attributes as they were before the first run."""
        _restore(self.state, self.saved)
        self.plain.put_back()

    def run_eager(self, args: Any, kwargs: Any) -> tuple[Any, Any] | CheckResult:
        """Eager's outputs and the model state after the call (the state is then restored);
        a check result when eager cannot run on CPU (capture still runs)."""
        torch.manual_seed(COMPARISON_SEED)
        try:
            out = self.loaded.fn(*args, **kwargs)
        except FxlabError:  # fxlab's own word on it (an NPU-only call on the CPU standing in for the NPU)
            raise
        except Exception as exc:
            fault = kernel_fault(exc) if self.derived else None
            if fault is not None:
                self.put_back()
                raise CaptureError(f"{fault.op} does not take these inputs ({fault.detail})") from exc
            missing = missing_cpu_kernel(exc)
            if missing is not None:
                self.put_back()
                return self._capture_without_running(missing)
            where = raise_location(exc)
            raise EagerModelError(
                f"the model raised {type(exc).__name__} when run eagerly on its example inputs{f' (at {where})' if where else ''}: "
                f"{exc}. {undefined_op_hint(exc)}fxlab compares compiled with eager, so the model must first run eagerly."
            ) from exc
        after = clone_tree(self.state)
        self.put_back()
        return out, after

    def run_compiled(self, args: Any, kwargs: Any) -> tuple[Any, Any]:
        """The compiled model's outputs and the model state after the call (then restored)."""
        torch.manual_seed(COMPARISON_SEED)
        try:
            return self.compile_fn(self.loaded.fn)(*args, **kwargs), clone_tree(self.state)
        except CaptureError:
            raise
        except Exception as exc:
            if self.probe_blame and self._compiles_with_aot_eager(args, kwargs):
                raise FxlabBug(
                    f"fxlab's capture failed on {self.loaded.name} ({first_line(root_cause(exc))}) where "
                    "torch.compile(model, backend='aot_eager') compiles and runs it: this is a bug in fxlab, not in the model. "
                    "Please report it with the model file; FXLAB_DEBUG=1 shows the traceback."
                ) from exc
            where = _raised_by_the_models_own_code(exc) if self.compiled_first else None
            if where is not None:  # no eager run came first (a rank): the model's own error all the same
                raise EagerModelError(
                    f"the model's own code raised {type(exc).__name__} at {where}: {exc}. Dynamo runs the code it does not "
                    "trace as Python runs it, so the model raises this without torch.compile too; fix the model (or its inputs)."
                ) from exc
            raise summarize_compile_error(exc, self.loaded) from exc
        finally:
            self.put_back()

    def _compiles_with_aot_eager(self, args: Any, kwargs: Any) -> bool:
        """Whether the model compiles and runs with torch's own ``aot_eager`` backend (who
        is at fault when fxlab's capture fails: proven by running it)."""
        self.put_back()
        torch._dynamo.reset()
        try:
            torch.compile(self.loaded.fn, backend="aot_eager")(*clone_tree(args), **clone_tree(kwargs))
        except Exception:  # noqa: BLE001 - it fails without fxlab too: the model's (or torch's) error
            return False
        finally:
            torch._dynamo.reset()
        return True

    def _capture_without_running(self, reason: str) -> CheckResult:
        """Capture (Dynamo and the backend need only Meta functions) although neither eager
        nor the compiled graph can run on CPU: every stage is still recorded."""
        args, kwargs = clone_tree(self.loaded.args), clone_tree(self.loaded.kwargs)
        try:
            self.compile_fn(self.loaded.fn)(*args, **kwargs)
        except Exception as exc:  # the compiled graph stops at the same operator
            if missing_cpu_kernel(exc) is None:
                raise summarize_compile_error(exc, self.loaded) from exc
        finally:
            self.put_back()
        return CheckResult(ok=False, skipped=reason)
