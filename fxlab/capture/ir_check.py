"""The Ascend IR check: each graph's IR, run by the CPU reference executor on the inputs
its functional graph got in the compiled run, against that run's outputs and the graph
inputs it wrote.

Only values the runtime uses are judged. An output aot_autograd's runtime re-makes itself
(a graph input returned, or a view of one, re-made from the input the graph wrote back) is
compared by shape and dtype only (aot checks the shape as it re-makes it): the graph's own
values for it are never used, and a difference there is noted, not counted.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import torch
import torch.fx as fx

from fxlab.capture.check import Comparison, GraphRun, RunRecorder, clone_tree
from fxlab.capture.record_graph import LiveGraph
from fxlab.capture.stages import REGENERATED_OUTPUTS
from fxlab.capture.trace import CheckResult, GraphTrace
from fxlab.ir.model import IrGraph
from fxlab.passes.conversion_result import FAILED_STATUSES
from fxlab.stage_names import FUNCTIONAL


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
    for graph, live in graphs:
        reason = _verify_graph(graph, live, recorder, cmp, approximations)
        if reason:
            not_run.append(f"graph {graph.index}: {reason}")
    if cmp.compared == 0 and not cmp.mismatches and not_run:
        return CheckResult(ok=True, skipped="; ".join(not_run), notes=cmp.notes)
    result = cmp.result()
    result.not_run = not_run
    result.approximations = approximations
    return result


def _verify_graph(graph: GraphTrace, live: LiveGraph, recorder: RunRecorder, cmp: Comparison, approximations: list[str]) -> str | None:
    """Run one graph's IR and add its comparisons to ``cmp`` (and a note to
    ``approximations`` when only GE's known approximations differ); the reason it could
    not run, or which values it could not compare (random draws)."""
    from fxlab.ir.approximations import exact_kernels

    unconverted = _unconverted_targets(live)
    if unconverted:
        return f"not every op converted ({', '.join(unconverted)})"
    run = recorder.run_of(live.modules[FUNCTIONAL])
    if run is not None and run.stopped:
        return f"the compiled run stopped in this graph: {run.stopped}"
    if run is None or run.outputs is None:
        if recorder.stopped:
            return f"the compiled run stopped before this graph ran: {recorder.stopped}"
        return "the compiled run did not record this graph's inputs"
    as_ge, reason = _run_ir(graph, live, run)
    if reason:
        return reason
    if as_ge.mismatches:
        exact = exact_kernels(_ir_of(graph).ops, _fx_nodes(live))
        as_exact, _ = _run_ir(graph, live, run, exact) if exact else (None, None)
        if as_exact is not None and as_exact.compared and not as_exact.mismatches:
            approximated, fused = _approximation_notes(graph, exact, as_ge)
            approximations.extend(approximated)
            as_exact.notes.extend(fused)
            as_ge = as_exact
    if as_ge.mismatches:
        as_ge.mismatches += _torchair_faults(graph, live)
    as_ge.notes.extend(_custom_op_kernel_notes(graph))
    cmp.merge(as_ge)
    return _drawn_note(graph, run)


def _custom_op_kernel_notes(graph: GraphTrace) -> list[str]:
    """Which GE ops the run computed with their custom op's own CPU kernel (the one op a
    converter emits for a custom op, with no reference kernel of its type)."""
    from fxlab.ir.kernels.inplace import ops_run_by_their_torch_op

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


def _expected_outputs(graph: GraphTrace, run: GraphRun) -> tuple[list[Any], bool]:
    """What the IR run's outputs are compared with, and whether the IR records the
    outputs TorchAir makes on the host: with that record the IR run gives every FX output
    in place (sizes and plain values too); without, the NetOutput tensors."""
    recorded = _records_host_outputs(graph)
    outputs = run.outputs or []
    return [outputs[i] for i in _output_positions(graph, run)], recorded


def _records_host_outputs(graph: GraphTrace) -> bool:
    from fxlab.ir.host_outputs import fx_outputs_of

    return fx_outputs_of(_ir_of(graph)) is not None


def _output_positions(graph: GraphTrace, run: GraphRun) -> list[int]:
    """The graph output each IR output stands for (all of them, or its tensors only)."""
    outputs = run.outputs or []
    if _records_host_outputs(graph):
        return list(range(len(outputs)))
    return [i for i, o in enumerate(outputs) if isinstance(o, torch.Tensor)]


def _drawn_outputs(graph: GraphTrace, expected: list[Any], recorded: bool) -> tuple[list[bool], list[str]]:
    """Which outputs depend on a random draw, and the GE ops that draw."""
    from fxlab.ir.kernels.rng import outputs_from_draws

    from_draws, drawing = outputs_from_draws(_ir_of(graph))
    if recorded and drawing:  # FX outputs are not NetOutput slots: each counts as drawn
        from_draws = [True] * len(expected)
    return from_draws, drawing


def _drawn_note(graph: GraphTrace, run: GraphRun) -> str | None:
    expected, recorded = _expected_outputs(graph, run)
    from_draws, drawing = _drawn_outputs(graph, expected, recorded)
    if not drawing:
        return None
    drawn = sum(1 for i, e in enumerate(expected) if i < len(from_draws) and from_draws[i] and isinstance(e, torch.Tensor))
    return f"values of {drawn} output(s) not compared, only their shapes and dtypes: {', '.join(drawing)} draw(s) random numbers on the device, which the CPU reference cannot reproduce"


def _run_ir(graph: GraphTrace, live: LiveGraph, run: GraphRun, kernels_by_op: Any = None) -> tuple[Comparison, str | None]:
    """One reference run of the graph's IR on the recorded inputs, compared with the
    compiled run; or the reason it could not run. Values that depend on a random draw
    are compared by shape and dtype only."""
    from fxlab.ir.execute import ExecutionError
    from fxlab.passes.output_reuse import execute_fx_outputs

    cmp = Comparison()
    inputs = clone_tree(run.inputs_before)
    # A SymInt graph input (dynamic shapes) is a Data op too: it gets the size this run had.
    ir_inputs = [
        x if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=torch.int64) for x in inputs if isinstance(x, (torch.Tensor, int))
    ]
    try:
        values: dict[str, Any] = {}
        outputs = execute_fx_outputs(_ir_of(graph), ir_inputs, values, kernels_by_op)
    except ExecutionError as exc:
        return cmp, str(exc)
    except Exception as exc:  # noqa: BLE001 - reported as a check that could not run
        return cmp, f"the reference run failed: {type(exc).__name__}: {exc}"
    drawing = _compare_outputs(graph, live, run, cmp, outputs, values)
    for i, (e, a) in enumerate(zip(run.inputs_after or [], inputs)):
        if drawing and isinstance(e, torch.Tensor):  # an input written from a draw
            cmp.add_form(f"graph {graph.index} input {i} after the call", e, a)
        else:
            cmp.add(f"graph {graph.index} input {i} after the call", e, a)
    return cmp, None


def _compare_outputs(
    graph: GraphTrace, live: LiveGraph, run: GraphRun, cmp: Comparison, outputs: list[Any], values: dict[str, Any]
) -> list[str]:
    """Add the IR run's outputs (and the values converters computed for outputs made on
    the host) to ``cmp``; returns the GE ops that draw random numbers."""
    from fxlab.ir.host_outputs import converted_values

    expected, recorded = _expected_outputs(graph, run)
    if len(outputs) < len(expected):  # the IR may have more: the outputs written into inputs
        cmp.mismatches.append(f"graph {graph.index}: {len(outputs)} IR output(s) for {len(expected)} compiled output(s)")
    from_draws, drawing = _drawn_outputs(graph, expected, recorded)
    positions, unused, undefined = _output_positions(graph, run), unused_outputs(live), uninitialised_outputs(live)
    for i, (e, a) in enumerate(zip(expected, outputs)):
        if positions[i] in unused:  # its shape still counts: aot checks it as it re-makes the output
            if isinstance(e, torch.Tensor):
                cmp.add_form(f"graph {graph.index} output {i}", e, a)
            cmp.notes.extend(unused_value_note(live, positions[i], unused[positions[i]], e, a))
        elif (i < len(from_draws) and from_draws[i] or positions[i] in undefined) and isinstance(e, torch.Tensor):
            cmp.add_form(f"graph {graph.index} output {i}", e, a)
        else:
            cmp.add(f"graph {graph.index} output {i}", e, a)
    # An output made on the host still had its converter run: check what it computed,
    # where the runtime uses it.
    for i, a in converted_values(_ir_of(graph), values).items():
        if i in undefined:
            continue
        if i < len(expected) and i in unused:
            cmp.notes.extend(unused_value_note(live, i, unused[i], expected[i], a, " as its converter computed it (in GE)"))
        elif i < len(expected):
            label = f"graph {graph.index} output {i} as its converter computed it (in GE, not returned)"
            if drawing and isinstance(expected[i], torch.Tensor):
                cmp.add_form(label, expected[i], a)
            else:
                cmp.add(label, expected[i], _as_python_scalar(a, expected[i]))
    return drawing


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


def uninitialised_outputs(graph: LiveGraph) -> set[int]:
    """The functional graph's outputs (by index) that are a freshly allocated buffer
    nothing in the graph wrote."""
    functional = graph.modules.get(FUNCTIONAL)
    if functional is None:
        return set()
    returned = list(functional.graph.output_node().args[0])  # type: ignore[arg-type]
    return {i for i, r in enumerate(returned) if isinstance(r, fx.Node) and str(r.target) in _UNINITIALISED}


def unused_outputs(graph: LiveGraph) -> dict[int, int | None]:
    """The graph outputs whose value the runtime does not take from the graph: ``{output
    index: the graph input it aliases (None: another output)}``."""
    return graph.modules[FUNCTIONAL].meta.get(REGENERATED_OUTPUTS, {})


def unused_value_note(
    graph: LiveGraph, index: int, base: int | None, expected: Any, actual: Any, what: str = "", whose: str = "the Ascend IR's"
) -> list[str]:
    """Nothing when the checked graph's value (``whose``) of an output the runtime re-makes
    agrees anyway; else one sentence saying it differs, and why that does not count."""
    alone = Comparison()
    alone.add("", expected, actual)
    if not alone.mismatches:
        return []
    functional = graph.modules[FUNCTIONAL]
    names = _output_names(functional)
    name = f" ({names[index]})" if index < len(names) and names[index] else ""
    if base is not None:
        inputs = [n.name for n in functional.graph.nodes if n.op == "placeholder"]
        source = f"graph input {base}" + (f" ({inputs[base]})" if base < len(inputs) else "")
        made = f"it is {source} or a view of it, which aot_autograd's runtime re-makes from the input the graph wrote back"
    else:
        made = "it is a view of another output, which aot_autograd's runtime re-makes from that output"
    differs = alone.mismatches[0].removeprefix(": ")
    return [
        f"graph {graph.index} output {index}{name}{what}: {whose} value differs from the compiled run's ({differs}), but no one uses it: {made}"
    ]


def _output_names(gm: fx.GraphModule) -> list[str]:
    output = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
    values = output.args[0] if isinstance(output.args[0], (list, tuple)) else [output.args[0]]
    return [v.name if isinstance(v, fx.Node) else "" for v in values]


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
    from fxlab.ir.approximations import FUSED_PRECISION, GE_APPROXIMATIONS

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
    from fxlab.passes.torchair_refusals import wrong_result

    faults: dict[str, list[str]] = {}
    for node in _fx_nodes(live).values():
        why = wrong_result(node.target) if node.op == "call_function" else None
        if why:
            faults.setdefault(why, []).append(node.name)
    return [f"graph {graph.index}: {', '.join(names)}: {why}" for why, names in faults.items()]


def _unconverted_targets(graph: LiveGraph) -> list[str]:
    if graph.conversion is None:
        return []
    return sorted({n.target for n in graph.conversion.nodes if n.status in FAILED_STATUSES})
