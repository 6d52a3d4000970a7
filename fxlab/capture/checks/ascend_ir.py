"""The Ascend IR check: each graph's IR, run by the CPU reference executor on the inputs
its functional graph got in the compiled run, against that run's outputs and the graph
inputs it wrote (:func:`~fxlab.capture.checks.runs.run_against`).

Only values the runtime uses are judged (:class:`~fxlab.capture.checks.runs.OutputPolicy`).
An output aot_autograd's runtime re-makes itself (a graph input returned, or a view of
one, re-made from the input the graph wrote back) is compared by shape and dtype only (aot
checks the shape as it re-makes it): the graph's own values for it are never used, and a
difference there is noted, not counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx

from fxlab.capture.checks.runs import CpuRun, GraphRun, OutputPolicy, RunRecorder, run_against, why_not_recorded
from fxlab.capture.checks.values import Comparison
from fxlab.capture.checks.view_optimisation import view_optimisation_fault
from fxlab.capture.ranks import has_collectives
from fxlab.capture.record_graph import LiveGraph
from fxlab.capture.trace import CheckResult, GraphTrace
from fxlab.ir.approximations import FUSED_PRECISION, GE_APPROXIMATIONS, exact_kernels
from fxlab.ir.execute import ExecutionError
from fxlab.ir.host_outputs import converted_values, fx_outputs_of
from fxlab.ir.kernels.inplace import ops_run_by_their_torch_op
from fxlab.ir.kernels.rng import outputs_from_draws
from fxlab.ir.model import IrGraph
from fxlab.passes.conversion_result import FAILED_STATUSES
from fxlab.passes.output_reuse import execute_fx_outputs
from fxlab.passes.torchair_refusals import wrong_result
from fxlab.stage_names import FUNCTIONAL


# Whose Ascend IR the reference could not run, when it is not fxlab's conversion.
TORCHAIRS_IR = "in TorchAir's own Ascend IR (--converter torchair)"


def verify_ir(graphs: Sequence[tuple[GraphTrace, LiveGraph]], recorder: RunRecorder) -> CheckResult:
    """Execute each graph's Ascend IR on the inputs its functional graph got in the
    compiled run; compare outputs and the graph inputs it mutates. A graph whose IR
    cannot run (an op not converted, no reference kernel, a kernel that raises) is
    reported as not run, with the reason; only a numeric disagreement is a mismatch.

    A graph that disagrees only through GE ops that are a known approximation of their
    ATen op (:mod:`fxlab.ir.approximations`) matches, with a note naming the ops and
    how far GE's semantics are from the model's."""
    cmp = Comparison()
    not_run: list[str] = []
    approximations: list[str] = []
    refused: list[str] = []
    for graph, live in graphs:
        reason = _verify_graph(graph, live, recorder, cmp, approximations, refused)
        if reason:
            not_run.append(f"graph {graph.index}: {reason}")
    result = cmp.result(not_run)
    result.approximations = approximations
    if refused:
        result.refused, result.ok, result.skipped = refused, False, None
    return result


def _verify_graph(
    graph: GraphTrace, live: LiveGraph, recorder: RunRecorder, cmp: Comparison, approximations: list[str], refused: list[str]
) -> str | None:
    """Run one graph's IR and add its comparisons to ``cmp`` (and a note to
    ``approximations`` when only GE's known approximations differ, a line to ``refused``
    when an op TorchAir is known to convert wrongly cannot run); the reason it could not
    run, or which values it could not compare (random draws)."""
    unconverted = _unconverted_targets(live)
    if unconverted:
        return f"not every op converted ({', '.join(unconverted)})"
    run = recorder.run_of(live.modules[FUNCTIONAL])
    unrecorded = why_not_recorded(run, recorder)
    if unrecorded is not None or run is None:
        return unrecorded
    policy = _policy(graph, live, run)
    as_ge, not_run = _run_ir(graph, run, policy)
    if not_run:
        reason = f"{TORCHAIRS_IR}: {not_run.reason}" if live.converted_by_torchair else not_run.reason
        fault = _torchair_fault_at(live, not_run.fx_node)
        if fault is None:
            return reason
        refused.append(f"graph {graph.index}: {not_run.fx_node}: {fault}; its Ascend IR cannot run ({reason})")
        return None
    if as_ge.mismatches:
        exact = exact_kernels(_ir_of(graph).ops, _fx_nodes(live))
        as_exact, _ = _run_ir(graph, run, policy, exact) if exact else (None, None)
        if as_exact is not None and as_exact.compared and not as_exact.mismatches:
            approximated, fused = _approximation_notes(graph, exact, as_ge)
            approximations.extend(approximated)
            as_exact.notes.extend(fused)
            as_ge = as_exact
    if as_ge.mismatches:
        # Why, before what: the check keeps only the first lines of a long list.
        as_ge.mismatches[:0] = _torchair_faults(graph, live) + _view_optimisation(graph, live, run, policy)
    as_ge.notes.extend(_custom_op_kernel_notes(graph))
    cmp.merge(as_ge)
    return _drawn_note(policy, run)


def _policy(graph: GraphTrace, live: LiveGraph, run: GraphRun) -> OutputPolicy:
    """Which recorded outputs the IR run gives and which depend on a random draw. With the
    IR's record of the outputs TorchAir makes on the host, the run gives every FX output in
    place (sizes and plain values too; each counts as drawn when anything draws: FX
    outputs are not NetOutput slots); without, the NetOutput tensors."""
    outputs = run.outputs or []
    records_host_outputs = fx_outputs_of(_ir_of(graph)) is not None
    positions = list(range(len(outputs))) if records_host_outputs else [i for i, o in enumerate(outputs) if isinstance(o, torch.Tensor)]
    from_draws, drawing = outputs_from_draws(_ir_of(graph))
    drawn = None if records_host_outputs else {i for i, d in enumerate(from_draws) if d}
    return OutputPolicy(live.modules[FUNCTIONAL], graph.index, "the Ascend IR's", drawing=drawing, drawn=drawn, positions=positions)


def _drawn_note(policy: OutputPolicy, run: GraphRun) -> str | None:
    if not policy.drawing:
        return None
    drawn = sum(1 for i, e in enumerate(policy.expected(run)) if policy.is_drawn(i) and isinstance(e, torch.Tensor))
    return (
        f"values of {drawn} output(s) not compared, only their shapes and dtypes: {', '.join(policy.drawing)} draw(s) random numbers "
        "on the device, which the CPU reference cannot reproduce"
    )


def _run_ir(
    graph: GraphTrace, run: GraphRun, policy: OutputPolicy, kernels_by_op: Mapping[str, Any] | None = None, ir: IrGraph | None = None
) -> tuple[Comparison, IrNotRun | None]:
    """One reference run of the graph's IR (or of ``ir``, another conversion of it) on the
    recorded inputs, compared with the compiled run; or why it could not run."""
    ir = ir or _ir_of(graph)
    values: dict[str, Any] = {}
    expected = policy.expected(run)
    failed_at: list[str | None] = [None]

    def execute(inputs: list[Any]) -> CpuRun:
        # A SymInt graph input (dynamic shapes) is a Data op too: it gets the size this run had.
        ir_inputs = [
            x if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=torch.int64) for x in inputs if isinstance(x, (torch.Tensor, int))
        ]
        try:
            outputs = execute_fx_outputs(ir, ir_inputs, values, kernels_by_op)
        except ExecutionError as exc:
            failed_at[0] = exc.fx_node
            return CpuRun(not_run=str(exc))
        except Exception as exc:  # noqa: BLE001 - reported as a check that could not run
            return CpuRun(not_run=f"the reference run failed: {type(exc).__name__}: {exc}")
        # NetOutput values past the FX outputs are the inputs the graph writes (output
        # reuse): they are compared as the written inputs.
        return CpuRun(outputs[: len(expected)])

    cmp, ran = run_against(run, execute, policy)
    if ran.outputs is None:
        return cmp, IrNotRun(ran.not_run or "the reference run gave no outputs", failed_at[0])
    _compare_converted_values(graph.index, ir, policy, expected, values, cmp)
    return cmp, None


@dataclass(frozen=True)
class IrNotRun:
    """Why a graph's IR could not run; ``fx_node``: the FX node of the op that failed, if one did."""

    reason: str
    fx_node: str | None = None


def _torchair_fault_at(live: LiveGraph, fx_node: str | None) -> str | None:
    """What TorchAir is known to get wrong in converting ``fx_node`` with its arguments."""
    node = _fx_nodes(live).get(fx_node or "")
    return wrong_result(node) if node is not None and node.op == "call_function" else None


def _compare_converted_values(
    index: int, ir: IrGraph, policy: OutputPolicy, expected: list[Any], values: dict[str, Any], cmp: Comparison
) -> None:
    """An output made on the host still had its converter run: check what it computed,
    where the runtime uses it."""
    for i, a in converted_values(ir, values).items():
        if i in policy.fresh or i >= len(expected):
            continue
        if i in policy.remade:
            cmp.notes.extend(policy.unused_value_note(i, expected[i], a, " as its converter computed it (in GE)"))
            continue
        label = f"graph {index} output {i} as its converter computed it (in GE, not returned)"
        if policy.drawing and isinstance(expected[i], torch.Tensor):
            cmp.add_form(label, expected[i], a)
        else:
            cmp.add(label, expected[i], _as_python_scalar(a, expected[i]))


def _custom_op_kernel_notes(graph: GraphTrace) -> list[str]:
    """Which GE ops the run computed with their custom op's own CPU kernel (the one op a
    converter emits for a custom op, with no reference kernel of its type)."""
    notes = []
    for op, call in ops_run_by_their_torch_op(_ir_of(graph).ops):
        inputs = (
            "its inputs taken by name as the op's arguments"
            if call.get("by_name")
            else "its inputs taken as the converter fed them (they are not named as the schema's arguments, so which is which is not checked)"
        )
        notes.append(
            f"graph {graph.index}: GE op {op.type} ({op.name}, from FX node {op.fx_node}) has no reference kernel of its own: the IR "
            f"ran {call['op']}'s own CPU kernel in its place, {inputs}, its outputs as the converter returned them; this checks "
            "the converter's wiring, not the Ascend C kernel"
        )
    return notes


def _ir_of(graph: GraphTrace) -> IrGraph:
    """The graph's Ascend IR (the check runs only graphs that have one)."""
    if graph.ir is None:
        raise ValueError(f"graph {graph.index} has no Ascend IR to check")
    return graph.ir


def _fx_nodes(graph: LiveGraph) -> dict[str, fx.Node]:
    module = graph.converted_module()
    return {} if module is None else {n.name: n for n in module.graph.nodes}


def _approximation_notes(graph: GraphTrace, exact: dict[str, Any], as_ge: Comparison) -> tuple[list[str], list[str]]:
    """What differs, by GE op type: the ops that approximate their ATen op (said in the
    verdict), and the fused operators documented to keep more precision than the unfused
    ones TorchAir's pattern pass replaced (said as notes); each with by how much the IR
    as GE computes it differs from the compiled run."""
    counts: dict[str, int] = {}
    for op in _ir_of(graph).ops:
        if op.name in exact:
            counts[op.type] = counts.get(op.type, 0) + 1
    approximated, fused = [], []
    for ge_type, n in counts.items():
        form = GE_APPROXIMATIONS[ge_type]
        ops = f"{n} op{'s' if n > 1 else ''}"
        if form.kind == FUSED_PRECISION:
            fused.append(
                f"graph {graph.index}: {ge_type} ({ops}), which TorchAir's pattern pass fused from {form.exact_form}, "
                f"{form.ge_form}: the IR differs from the compiled (unfused) run ({'; '.join(as_ge.mismatches)}) and matches it "
                "with the unfused rounding, a documented difference in precision, not a mismatch"
            )
        else:
            approximated.append(f"GE's {ge_type} ({ops}) is {form.ge_form} of {form.exact_form}")
    if not approximated:
        return [], fused
    tail = (
        f"with GE's semantics the IR differs from the compiled run by max |diff| {as_ge.max_abs_diff:.3g}, with the exact form it matches"
    )
    return [f"graph {graph.index}: {'; '.join(approximated)}: {tail}"], fused


def _as_python_scalar(value: Any, like: Any) -> Any:
    """A one-element tensor as the Python number ``like`` is (a size computed in GE)."""
    if isinstance(value, torch.Tensor) and not isinstance(like, torch.Tensor) and value.numel() == 1:
        return value.item()
    return value


def _torchair_faults(graph: GraphTrace, live: LiveGraph) -> list[str]:
    """For a graph whose IR disagrees: the nodes of ops TorchAir is known to convert into
    a wrong result, each with what goes wrong."""
    faults: dict[str, list[str]] = {}
    for node in _fx_nodes(live).values():
        why = wrong_result(node) if node.op == "call_function" else None
        if why:
            faults.setdefault(why, []).append(node.name)
    return [f"graph {graph.index}: {', '.join(names)}: {why}" for why, names in faults.items()]


def _view_optimisation(graph: GraphTrace, live: LiveGraph, run: GraphRun, policy: OutputPolicy) -> list[str]:
    """For a graph whose IR disagrees: the view optimisation named as the cause, when the
    same graph converted without it agrees (:mod:`fxlab.capture.checks.view_optimisation`)."""
    if live.ir_without_view_optimisation is None or has_collectives([live.modules.get(FUNCTIONAL)]):
        return []  # a second run of a graph with collectives would wait for ranks that do not run it
    try:
        without_ir = live.ir_without_view_optimisation()
    except Exception:  # noqa: BLE001 - a graph that does not convert without it proves nothing either way
        return []
    without, not_run = _run_ir(graph, run, policy, ir=without_ir)
    if not_run or not without.compared or without.mismatches:
        return []
    return [view_optimisation_fault(graph.index, live, run, without)]


def _unconverted_targets(graph: LiveGraph) -> list[str]:
    if graph.conversion is None:
        return []
    return sorted({n.target for n in graph.conversion.nodes if n.status in FAILED_STATUSES})
