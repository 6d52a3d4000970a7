"""Numerical checks: the compiled model against eager, and the Ascend IR (run by the CPU
reference executor) against the compiled run of its functional graph."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Sequence

import torch
import torch.fx as fx

from fxlab.capture.compile_error import summarize_compile_error
from fxlab.capture.custom_op_check import has_custom_ops
from fxlab.capture.loader import LoadedModel
from fxlab.capture.output_leaves import output_leaves
from fxlab.capture.trace import CheckResult, GraphTrace
from fxlab.errors import CaptureError


COMPARISON_SEED = 0


def _tolerance(dtype: torch.dtype) -> tuple[float, float]:
    if dtype in (torch.float16, torch.bfloat16):
        return 1e-2, 1e-2
    return 1e-4, 1e-5


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
class _Comparison:
    """Tensors compared by value, or with ``values=False`` by shape and dtype only
    (``formed`` counts those)."""

    compared: int = 0
    max_abs_diff: float = 0.0
    mismatches: list[str] = field(default_factory=list)
    values: bool = True
    formed: int = 0

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

    def merge(self, other: _Comparison) -> None:
        self.compared += other.compared
        self.formed += other.formed
        self.max_abs_diff = max(self.max_abs_diff, other.max_abs_diff)
        self.mismatches.extend(other.mismatches)

    def result(self) -> CheckResult:
        return CheckResult(ok=not self.mismatches, compared=self.compared, max_abs_diff=self.max_abs_diff, mismatches=self.mismatches[:10])


def _local(value: Any) -> Any:
    """A distributed tensor (a tensor-parallel parameter) as this rank's shard: what the
    rank computed and holds."""
    to_local = getattr(value, "to_local", None)
    return to_local() if isinstance(value, torch.Tensor) and callable(to_local) else value


def compare_outputs(cmp: _Comparison, eager: Any, compiled: Any) -> None:
    """Compare two model outputs leaf by leaf (see :mod:`fxlab.capture.output_leaves`)."""
    expected, actual = output_leaves(eager), output_leaves(compiled)
    only_eager = [p for p in expected if p not in actual]
    only_compiled = [p for p in actual if p not in expected]
    if only_eager or only_compiled:
        cmp.mismatches.append(f"outputs differ in structure: eager has {_few(only_eager)}, compiled has {_few(only_compiled)}")
    for path, value in expected.items():
        if path in actual:
            cmp.add(path, value, actual[path])


def _few(paths: list[str]) -> str:
    if not paths:
        return "nothing more"
    return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def _clone(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return _clone_tensor(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_clone(v) for v in value)
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def _clone_tensor(t: torch.Tensor) -> torch.Tensor:
    """A copy that keeps the user's Dynamo marks (``mark_dynamic``, ``mark_static`` ...:
    attributes ``_dynamo_*`` on the tensor), so the compiled run sees what the user set."""
    copy = t.detach().clone()
    for key, mark in vars(t).items():
        if key.startswith("_dynamo"):
            setattr(copy, key, mark.copy() if hasattr(mark, "copy") else mark)
    return copy


def _state(fn: Any) -> dict[str, torch.Tensor]:
    if not isinstance(fn, torch.nn.Module):
        return {}
    state = dict(fn.named_parameters())
    state.update(fn.named_buffers())
    return state


@dataclass
class _Saved:
    """A parameter or buffer as it was: its values and where they sit in its memory."""

    value: torch.Tensor
    layout: tuple[tuple[int, ...], tuple[int, ...], int]


def _save(state: dict[str, torch.Tensor]) -> dict[str, _Saved]:
    return {name: _Saved(t.detach().clone(), (tuple(t.shape), t.stride(), t.storage_offset())) for name, t in state.items()}


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
    eager_args, eager_kwargs = _clone(loaded.args), _clone(loaded.kwargs)
    args, kwargs = _clone(loaded.args), _clone(loaded.kwargs)
    with torch.no_grad():
        if compiled_first:
            compiled_out, compiled_state = _run_compiled(loaded, compile_fn, state, saved, args, kwargs)
        ran = _run_eager(loaded, compile_fn, state, saved, eager_args, eager_kwargs)
        if isinstance(ran, CheckResult):
            return ran
        eager_out, eager_state = ran
        if not compiled_first:
            compiled_out, compiled_state = _run_compiled(loaded, compile_fn, state, saved, args, kwargs)

    def compare(values: bool) -> _Comparison:
        cmp = _Comparison(values=values)
        compare_outputs(cmp, eager_out, compiled_out)
        for i, (e, c) in enumerate(zip(eager_args, args)):
            cmp.add(f"input {i} after the call", e, c)
        for name in state:
            cmp.add(f"{name} after the call", eager_state[name], compiled_state[name])
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
    loaded: LoadedModel, compile_fn: Callable[[Any], Callable[..., Any]], state: dict[str, torch.Tensor], saved: Any, args: Any, kwargs: Any
) -> tuple[Any, Any] | CheckResult:
    """Eager's outputs and the model state after the call (the state is then restored);
    a check result when eager cannot run on CPU (capture still runs)."""
    torch.manual_seed(COMPARISON_SEED)
    try:
        out = loaded.fn(*args, **kwargs)
    except Exception as exc:
        missing = missing_cpu_kernel(exc)
        if missing is not None:
            _restore(state, saved)
            return _capture_without_running(loaded, compile_fn, state, saved, missing)
        raise CaptureError(
            f"the model raised {type(exc).__name__} when run eagerly on its example inputs: {exc}. "
            "fxlab compares compiled with eager, so the model must first run eagerly."
        ) from exc
    after = _clone(state)
    _restore(state, saved)
    return out, after


def _run_compiled(
    loaded: LoadedModel, compile_fn: Callable[[Any], Callable[..., Any]], state: dict[str, torch.Tensor], saved: Any, args: Any, kwargs: Any
) -> tuple[Any, Any]:
    """The compiled model's outputs and the model state after the call (then restored)."""
    torch.manual_seed(COMPARISON_SEED)
    try:
        return compile_fn(loaded.fn)(*args, **kwargs), _clone(state)
    except CaptureError:
        raise
    except Exception as exc:
        raise summarize_compile_error(exc, loaded) from exc
    finally:
        _restore(state, saved)


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


def _capture_without_running(
    loaded: LoadedModel,
    compile_fn: Callable[[Any], Callable[..., Any]],
    state: dict[str, torch.Tensor],
    saved: dict[str, torch.Tensor],
    op: str,
) -> CheckResult:
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
    return CheckResult(
        ok=False, skipped=f"not run: {op} has no CPU kernel (fxlab has CPU reference kernels for torch_npu's common operators only)"
    )


@dataclass
class _Run:
    inputs_before: list[Any]
    outputs: list[Any] | None = None
    inputs_after: list[Any] | None = None


class RunRecorder:
    """Wraps each functional graph aot compiles, recording its first call: the inputs it
    got (before and after the call, as it mutates some) and its outputs. Graphs over
    ``node_limit`` nodes (or, with ``custom_ops_only``, every graph) are not recorded,
    unless they call a custom op (their IR will not be run; the copies cost)."""

    def __init__(self, node_limit: int | None = None, custom_ops_only: bool = False) -> None:
        self.runs: dict[int, _Run] = {}
        self.node_limit = node_limit
        self.custom_ops_only = custom_ops_only

    def wrap(self, fw: fx.GraphModule) -> Callable[..., Any]:
        # A graph with custom ops is always recorded: their fake functions are checked
        # against their kernels on these inputs (fxlab.capture.custom_op_check).
        if not has_custom_ops(fw):
            if self.custom_ops_only or (self.node_limit is not None and len(fw.graph.nodes) > self.node_limit):
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
    compiled run; compare outputs and the graph inputs it mutates. A graph whose IR
    cannot run (an op not converted, no reference kernel, a kernel that raises) is
    reported as not run, with the reason; only a numeric disagreement is a mismatch.

    A graph that disagrees only through GE ops that are a known approximation of their
    ATen op (:mod:`fxlab.ir.approximations`) matches, with a note naming the ops and
    how far GE's semantics are from the model's."""
    cmp = _Comparison()
    not_run: list[str] = []
    approximations: list[str] = []
    for graph in graphs:
        reason = _verify_graph(graph, recorder, cmp, approximations)
        if reason:
            not_run.append(f"graph {graph.index}: {reason}")
    if cmp.compared == 0 and not cmp.mismatches and not_run:
        return CheckResult(ok=True, skipped="; ".join(not_run))
    result = cmp.result()
    result.not_run = not_run
    result.approximations = approximations
    return result


def _verify_graph(graph: GraphTrace, recorder: RunRecorder, cmp: _Comparison, approximations: list[str]) -> str | None:
    """Run one graph's IR and add its comparisons to ``cmp`` (and a note to
    ``approximations`` when only GE's known approximations differ); the reason it could
    not run, or which values it could not compare (random draws)."""
    from fxlab.ir.approximations import exact_kernels

    unconverted = _unconverted_targets(graph)
    if unconverted:
        return f"not every op converted ({', '.join(unconverted)})"
    run = recorder.run_of(graph.modules["functional"])
    if run is None or run.outputs is None:
        return "the compiled run did not record this graph's inputs"
    as_ge, reason = _run_ir(graph, run)
    if reason:
        return reason
    if as_ge.mismatches:
        exact = exact_kernels(graph.ir.ops, _fx_nodes(graph))
        as_exact, _ = _run_ir(graph, run, exact) if exact else (None, None)
        if as_exact is not None and as_exact.compared and not as_exact.mismatches:
            approximations.append(_approximation_note(graph, exact, as_ge.max_abs_diff))
            as_ge = as_exact
    if as_ge.mismatches:
        as_ge.mismatches += _torchair_faults(graph)
    cmp.merge(as_ge)
    return _drawn_note(graph, run)


def _expected_outputs(graph: GraphTrace, run: _Run) -> tuple[list[Any], bool]:
    """What the IR run's outputs are compared with, and whether the IR records the
    outputs TorchAir makes on the host: with that record the IR run gives every FX output
    in place (sizes and plain values too); without, the NetOutput tensors."""
    from fxlab.ir.host_outputs import fx_outputs_of

    recorded = fx_outputs_of(graph.ir) is not None
    return (list(run.outputs) if recorded else [o for o in run.outputs if isinstance(o, torch.Tensor)]), recorded


def _drawn_outputs(graph: GraphTrace, expected: list[Any], recorded: bool) -> tuple[list[bool], list[str]]:
    """Which outputs depend on a random draw, and the GE ops that draw."""
    from fxlab.ir.kernels.rng import outputs_from_draws

    from_draws, drawing = outputs_from_draws(graph.ir)
    if recorded and drawing:  # FX outputs are not NetOutput slots: each counts as drawn
        from_draws = [True] * len(expected)
    return from_draws, drawing


def _drawn_note(graph: GraphTrace, run: _Run) -> str | None:
    expected, recorded = _expected_outputs(graph, run)
    from_draws, drawing = _drawn_outputs(graph, expected, recorded)
    if not drawing:
        return None
    drawn = sum(1 for i, e in enumerate(expected) if i < len(from_draws) and from_draws[i] and isinstance(e, torch.Tensor))
    return f"values of {drawn} output(s) not compared, only their shapes and dtypes: {', '.join(drawing)} draw(s) random numbers on the device, which the CPU reference cannot reproduce"


def _run_ir(graph: GraphTrace, run: _Run, kernels_by_op: Any = None) -> tuple[_Comparison, str | None]:
    """One reference run of the graph's IR on the recorded inputs, compared with the
    compiled run; or the reason it could not run. Values that depend on a random draw
    are compared by shape and dtype only."""
    from fxlab.ir.execute import ExecutionError
    from fxlab.ir.host_outputs import converted_values
    from fxlab.passes.output_reuse import execute_fx_outputs

    cmp = _Comparison()
    inputs = _clone(run.inputs_before)
    # A SymInt graph input (dynamic shapes) is a Data op too: it gets the size this run had.
    ir_inputs = [
        x if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=torch.int64) for x in inputs if isinstance(x, (torch.Tensor, int))
    ]
    try:
        values: dict[str, Any] = {}
        outputs = execute_fx_outputs(graph.ir, ir_inputs, values, kernels_by_op)
    except ExecutionError as exc:
        return cmp, str(exc)
    except Exception as exc:  # noqa: BLE001 - reported as a check that could not run
        return cmp, f"the reference run failed: {type(exc).__name__}: {exc}"
    expected, recorded = _expected_outputs(graph, run)
    if len(outputs) < len(expected):  # the IR may have more: the outputs written into inputs
        cmp.mismatches.append(f"graph {graph.index}: {len(outputs)} IR output(s) for {len(expected)} compiled output(s)")
    from_draws, drawing = _drawn_outputs(graph, expected, recorded)
    undefined = _uninitialised_outputs(graph, recorded)
    for i, (e, a) in enumerate(zip(expected, outputs)):
        if (i < len(from_draws) and from_draws[i] or i in undefined) and isinstance(e, torch.Tensor):
            cmp.add_form(f"graph {graph.index} output {i}", e, a)
        else:
            cmp.add(f"graph {graph.index} output {i}", e, a)
    # An output made on the host still had its converter run: check what it computed.
    for i, a in converted_values(graph.ir, values).items():
        if i < len(expected) and i not in undefined:
            label = f"graph {graph.index} output {i} as its converter computed it (in GE, not returned)"
            if drawing and isinstance(expected[i], torch.Tensor):
                cmp.add_form(label, expected[i], a)
            else:
                cmp.add(label, expected[i], _as_python_scalar(a, expected[i]))
    for i, (e, a) in enumerate(zip(run.inputs_after, inputs)):
        if drawing and isinstance(e, torch.Tensor):  # an input written from a draw
            cmp.add_form(f"graph {graph.index} input {i} after the call", e, a)
        else:
            cmp.add(f"graph {graph.index} input {i} after the call", e, a)
    return cmp, None


# Ops whose output holds whatever the memory held: a buffer the code fills later (after a
# graph break, e.g. by an in-place collective), compared by shape and dtype only.
_UNINITIALISED = frozenset(
    {
        "aten.empty.memory_format",
        "aten.empty_like.default",
        "aten.new_empty.default",
        "aten.empty_strided.default",
        "aten.new_empty_strided.default",
    }
)


def _uninitialised_outputs(graph: GraphTrace, recorded: bool) -> set[int]:
    """Indexes (among the outputs compared) of the functional graph's outputs that are a
    freshly allocated buffer nothing in the graph wrote."""
    functional = graph.modules.get("functional")
    if functional is None:
        return set()
    returned = list(functional.graph.output_node().args[0])
    if not recorded:  # the NetOutput tensors only
        returned = [r for r in returned if isinstance(r, fx.Node) and isinstance(r.meta.get("val"), torch.Tensor)]
    return {i for i, r in enumerate(returned) if isinstance(r, fx.Node) and str(r.target) in _UNINITIALISED}


def _fx_nodes(graph: GraphTrace) -> dict[str, fx.Node]:
    module = graph.converted_module()
    return {} if module is None else {n.name: n for n in module.graph.nodes}


def _approximation_note(graph: GraphTrace, exact: dict[str, Any], ge_diff: float) -> str:
    """Which GE ops approximate their ATen op, how, and by how much the IR as GE
    computes it differs from the compiled run."""
    from fxlab.ir.approximations import GE_APPROXIMATIONS

    counts: dict[str, int] = {}
    for op in graph.ir.ops:
        if op.name in exact:
            counts[op.type] = counts.get(op.type, 0) + 1
    forms = "; ".join(
        f"GE's {t} ({n} op{'s' if n > 1 else ''}) is {GE_APPROXIMATIONS[t].ge_form} of {GE_APPROXIMATIONS[t].exact_form}"
        for t, n in counts.items()
    )
    return f"graph {graph.index}: {forms}: with GE's semantics the IR differs from the compiled run by max |diff| {ge_diff:.3g}, with the exact form it matches"


def _as_python_scalar(value: Any, like: Any) -> Any:
    """A one-element tensor as the Python number ``like`` is (a size computed in GE)."""
    if isinstance(value, torch.Tensor) and not isinstance(like, torch.Tensor) and value.numel() == 1:
        return value.item()
    return value


def _torchair_faults(graph: GraphTrace) -> list[str]:
    """For a graph whose IR disagrees: the nodes of ops TorchAir is known to convert into
    a wrong result, each with what goes wrong."""
    from fxlab.passes.torchair_refusals import wrong_result

    faults = {}
    for node in _fx_nodes(graph).values():
        why = wrong_result(node.target) if node.op == "call_function" else None
        if why:
            faults.setdefault(why, []).append(node.name)
    return [f"graph {graph.index}: {', '.join(names)}: {why}" for why, names in faults.items()]


def _unconverted_targets(graph: GraphTrace) -> list[str]:
    nodes = getattr(graph.conversion, "nodes", None)
    if nodes is None:
        return ["the conversion is partial"] if graph.ir_summary and graph.ir_summary.get("partial") else []
    return sorted({n.target for n in nodes if str(getattr(n.status, "value", n.status)) in ("unsupported", "raised")})
