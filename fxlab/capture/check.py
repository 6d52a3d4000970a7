"""Numerical checks: the compiled model against eager, and the Ascend IR (run by the CPU
reference executor) against the compiled run of its functional graph."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import torch
import torch.fx as fx
from torch.utils._pytree import tree_leaves

from fxlab.capture.compile_error import summarize_compile_error
from fxlab.capture.loader import LoadedModel
from fxlab.capture.trace import CheckResult, GraphTrace
from fxlab.errors import CaptureError


def _tolerance(dtype: torch.dtype) -> tuple[float, float]:
    if dtype in (torch.float16, torch.bfloat16):
        return 1e-2, 1e-2
    return 1e-4, 1e-5


@dataclass
class _Comparison:
    compared: int = 0
    max_abs_diff: float = 0.0
    mismatches: list[str] = field(default_factory=list)

    def add(self, label: str, expected: Any, actual: Any) -> None:
        if not isinstance(expected, torch.Tensor):
            if expected != actual:
                self.mismatches.append(f"{label}: {expected!r} != {actual!r}")
            return
        if not isinstance(actual, torch.Tensor):
            self.mismatches.append(f"{label}: expected a tensor, got {type(actual).__name__}")
            return
        self.compared += 1
        if expected.shape != actual.shape or expected.dtype != actual.dtype:
            self.mismatches.append(f"{label}: {actual.dtype}{list(actual.shape)} vs eager {expected.dtype}{list(expected.shape)}")
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

    def result(self) -> CheckResult:
        return CheckResult(ok=not self.mismatches, compared=self.compared, max_abs_diff=self.max_abs_diff, mismatches=self.mismatches[:10])


def _clone(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_clone(v) for v in value)
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def _state(fn: Any) -> dict[str, torch.Tensor]:
    if not isinstance(fn, torch.nn.Module):
        return {}
    state = dict(fn.named_parameters())
    state.update(fn.named_buffers())
    return state


def _restore(state: dict[str, torch.Tensor], saved: dict[str, torch.Tensor]) -> None:
    with torch.no_grad():
        for name, tensor in state.items():
            tensor.copy_(saved[name])


def compare_eager_compiled(loaded: LoadedModel, compile_fn: Callable[[Any], Callable[..., Any]]) -> CheckResult:
    """Run eager and compiled on clones of the inputs from the same model state; compare
    outputs, input mutations and parameter/buffer mutations. Leaves the model's state as
    it found it. Raises :class:`CaptureError` if eager or compilation fails."""
    state = _state(loaded.fn)
    saved = _clone(state)
    eager_args, eager_kwargs = _clone(loaded.args), _clone(loaded.kwargs)
    with torch.no_grad():
        try:
            eager_out = loaded.fn(*eager_args, **eager_kwargs)
        except Exception as exc:
            missing = missing_cpu_kernel(exc)
            if missing is not None:
                _restore(state, saved)
                return _capture_without_running(loaded, compile_fn, state, saved, missing)
            raise CaptureError(
                f"the model raised {type(exc).__name__} when run eagerly on its example inputs: {exc}. "
                "fxlab compares compiled with eager, so the model must first run eagerly."
            ) from exc
        eager_state = _clone(state)
        _restore(state, saved)
        args, kwargs = _clone(loaded.args), _clone(loaded.kwargs)
        try:
            compiled_out = compile_fn(loaded.fn)(*args, **kwargs)
        except CaptureError:
            raise
        except Exception as exc:
            raise summarize_compile_error(exc, loaded) from exc
        finally:
            compiled_state = _clone(state)
            _restore(state, saved)
    cmp = _Comparison()
    for i, (e, c) in enumerate(zip(tree_leaves(eager_out), tree_leaves(compiled_out))):
        cmp.add(f"output {i}", e, c)
    for i, (e, c) in enumerate(zip(eager_args, args)):
        cmp.add(f"input {i} after the call", e, c)
    for name in state:
        cmp.add(f"{name} after the call", eager_state[name], compiled_state[name])
    return cmp.result()


_NO_CPU_KERNEL = re.compile(r"Could not run '([\w:.]+)' with arguments from the 'CPU' backend")


def missing_cpu_kernel(exc: BaseException) -> str | None:
    """The operator an error says has no CPU kernel (a torch_npu operator defined from its
    schema and Meta function only), or None."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        found = _NO_CPU_KERNEL.search(str(exc))
        if isinstance(exc, NotImplementedError) and found:
            return found.group(1)
        exc = exc.__cause__ or exc.__context__
    return None


def _capture_without_running(loaded: LoadedModel, compile_fn: Callable[[Any], Callable[..., Any]], state: dict[str, torch.Tensor], saved: dict[str, torch.Tensor], op: str) -> CheckResult:
    """Capture (Dynamo and the backend need only Meta functions) although neither eager
    nor the compiled graph can run on CPU: every stage is still recorded."""
    args, kwargs = _clone(loaded.args), _clone(loaded.kwargs)
    try:
        compile_fn(loaded.fn)(*args, **kwargs)
    except Exception as exc:  # the compiled graph stops at the same operator
        if missing_cpu_kernel(exc) is None:
            raise summarize_compile_error(exc, loaded) from exc
    finally:
        _restore(state, saved)
    return CheckResult(ok=False, skipped=f"not run: {op} has no CPU kernel (fxlab has CPU reference kernels for torch_npu's common operators only)")


@dataclass
class _Run:
    inputs_before: list[Any]
    outputs: list[Any] | None = None
    inputs_after: list[Any] | None = None


class RunRecorder:
    """Wraps each functional graph aot compiles, recording its first call: the inputs it
    got (before and after the call, as it mutates some) and its outputs. Graphs over
    ``node_limit`` nodes are not recorded (their IR will not be run; the copies cost)."""

    def __init__(self, node_limit: int | None = None) -> None:
        self.runs: dict[int, _Run] = {}
        self.node_limit = node_limit

    def wrap(self, fw: fx.GraphModule) -> Callable[..., Any]:
        if self.node_limit is not None and len(fw.graph.nodes) > self.node_limit:
            return fw
        key = id(fw)

        def run(*args: Any) -> Any:
            if key in self.runs:
                return fw(*args)
            record = _Run(inputs_before=_clone(list(args)))
            out = fw(*args)
            record.outputs, record.inputs_after = _clone(list(out)), _clone(list(args))
            self.runs[key] = record
            return out

        return run

    def run_of(self, fw: fx.GraphModule) -> _Run | None:
        return self.runs.get(id(fw))


def verify_ir(graphs: Sequence[GraphTrace], recorder: RunRecorder) -> CheckResult:
    """Execute each graph's Ascend IR on the inputs its functional graph got in the
    compiled run; compare outputs and the graph inputs it mutates."""
    from fxlab.passes.output_reuse import execute_with_output_reuse

    cmp = _Comparison()
    for graph in graphs:
        run = recorder.run_of(graph.modules["functional"])
        if run is None or run.outputs is None:
            continue
        inputs = _clone(run.inputs_before)
        tensor_inputs = [x for x in inputs if isinstance(x, torch.Tensor)]
        try:
            outputs = execute_with_output_reuse(graph.ir, tensor_inputs)
        except Exception as exc:  # noqa: BLE001 - reported as a failed check
            cmp.mismatches.append(f"graph {graph.index}: {exc}")
            continue
        expected = [o for o in run.outputs if isinstance(o, torch.Tensor)]
        for i, (e, a) in enumerate(zip(expected, outputs)):
            cmp.add(f"graph {graph.index} output {i}", e, a)
        for i, (e, a) in enumerate(zip(run.inputs_after, inputs)):
            cmp.add(f"graph {graph.index} input {i} after the call", e, a)
    if cmp.compared == 0 and not cmp.mismatches:
        return CheckResult(ok=True, skipped="no graph was run")
    return cmp.result()
