"""Numerical checks of FX graphs run on CPU: the ``aclgraph`` stage's final graph against
the compiled run, and each user pass's graph after it against the graph before it.

The ``aclgraph`` graph is ATen (and torch_npu) ops with in-place writes, event markers and
stream core-limit calls; run with their CPU kernels (the events and limits do nothing on
one CPU stream, :mod:`fxlab.npu_streams`) on the inputs the compiled run got, its outputs
and the inputs it writes must equal the compiled run's. Operators whose NPU kernel raises
while the ACL graph is captured (``air::wait_tensor``) raise here too, and the check names
them: TorchAir's capture would stop there. A user's pass, or the user's
patterns, must not change what the graph computes: the graph before and after the pass
run on the same inputs, and a difference names the pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx

from fxlab.capture.check import Comparison, GraphRun, RunRecorder, clone_tree, missing_cpu_kernel
from fxlab.capture.ir_check import uninitialised_outputs, unused_outputs, unused_value_note
from fxlab.capture.record_graph import LiveGraph
from fxlab.capture.trace import CheckResult, GraphTrace
from fxlab.npu_streams import CaptureStops, as_captured
from fxlab.scope import scope_stack_kept  # defines the scope markers and event operators (fxlab.npu_streams) a graph may call
from fxlab.stage_names import ACLGRAPH, FUNCTIONAL


def _draws_random(gm: fx.GraphModule) -> list[str]:
    return sorted(
        {
            str(n.target)
            for n in gm.graph.nodes
            if n.op == "call_function" and torch.Tag.nondeterministic_seeded in getattr(n.target, "tags", ())
        }
    )


OVERLAP_ERROR = "refer to a single memory location"


class _ReadThenWrite(fx.Interpreter):
    """Runs a graph node by node; an in-place op that torch refuses because an input partly
    overlaps what it writes (:data:`~fxlab.passes.aclgraph.reinplace_inplaceable_ops.OVERLAP_HAZARD`)
    runs as its out-of-place op + ``copy_``: every element read before one is written, what
    the functional graph means. Each such op is named in ``emulated``.

    An ``.out`` overload given ``out=`` (TorchAir's ``replace_dynamic_workspace_ops`` writes
    ``npu_fused_infer_attention_score.out(..., out=[attention_out, softmax_lse])``, as
    torch_npu's Python bindings take it) gets its out arguments by their schema names,
    which is how the dispatcher takes them."""

    def __init__(self, gm: fx.GraphModule, emulated: list[str]) -> None:
        super().__init__(gm)
        self.emulated = emulated

    def call_function(self, target: Any, args: Any, kwargs: dict[str, Any]) -> Any:
        return super().call_function(target, args, _named_outs(target, kwargs))

    def run_node(self, n: fx.Node) -> Any:
        try:
            return super().run_node(n)
        except RuntimeError as exc:
            functional = _out_of_place(n.target) if n.op == "call_function" else None
            if functional is None or OVERLAP_ERROR not in str(exc):
                raise
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            args[0].copy_(functional(*args, **kwargs))
            self.emulated.append(f"{n.name} ({n.target})")
            return args[0]


def _named_outs(target: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``out=`` (one tensor or a list) spread over the schema's out arguments, when the
    schema has no argument named ``out``."""
    if "out" not in kwargs or not isinstance(target, torch._ops.OpOverload):
        return kwargs
    arguments = target._schema.arguments
    if any(a.name == "out" for a in arguments):
        return kwargs
    names = [a.name for a in arguments if a.kwarg_only and a.alias_info is not None and a.alias_info.is_write]
    values = list(kwargs["out"]) if isinstance(kwargs["out"], (list, tuple)) else [kwargs["out"]]
    if len(names) != len(values):
        return kwargs
    return {**{k: v for k, v in kwargs.items() if k != "out"}, **dict(zip(names, values))}


def _out_of_place(target: Any) -> Any:
    """``aten.sub.Tensor`` for ``aten.sub_.Tensor``; None for other targets."""
    if not isinstance(target, torch._ops.OpOverload) or not target._schema.name.endswith("_"):
        return None
    namespace = getattr(torch.ops, target.namespace)
    packet = getattr(namespace, target.__name__.split(".")[0][:-1], None)
    return getattr(packet, target._overloadname, None) if packet is not None else None


@dataclass
class CpuRun:
    """A graph's run on CPU: its outputs, or why there are none. ``missing_kernel``: an op
    fxlab cannot run on CPU (says nothing about the graph); ``failure``: the graph itself
    failed (an op refused its arguments: the graph is wrong)."""

    outputs: list[Any] | None = None
    missing_kernel: str | None = None
    failure: str | None = None
    capture_stops: str | None = None  # an op whose NPU kernel raises while the ACL graph is captured

    @property
    def reason(self) -> str | None:
        """Why it has no outputs, in a few words (None when it ran)."""
        return self.missing_kernel or (f"it failed on CPU: {self.failure}" if self.failure else None)


def run_on_cpu(gm: fx.GraphModule, inputs: list[Any], emulated: list[str] | None = None) -> CpuRun:
    """``gm`` run on ``inputs`` (which it may write). With ``emulated``, in-place ops
    reading memory they partly write run as out-of-place + ``copy_`` and are named there
    (torch refuses them)."""
    try:
        with torch.no_grad(), scope_stack_kept():
            outputs = gm(*inputs) if emulated is None else _ReadThenWrite(gm, emulated).run(*inputs)
    except CaptureStops as exc:
        return CpuRun(capture_stops=str(exc))
    except Exception as exc:  # noqa: BLE001 - a graph that cannot run on CPU is reported, not raised
        missing = missing_cpu_kernel(exc)
        if missing is not None:
            return CpuRun(missing_kernel=missing)
        return CpuRun(failure=f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    return CpuRun(list(outputs) if isinstance(outputs, (list, tuple)) else [outputs])


def _compare_run(
    cmp: Comparison, label: str, expected_out: Sequence[Any], expected_inputs: Sequence[Any], outputs: Sequence[Any], inputs: Sequence[Any]
) -> None:
    if len(outputs) != len(expected_out):
        cmp.mismatches.append(f"{label}: {len(outputs)} output(s) for {len(expected_out)}")
    for i, (e, a) in enumerate(zip(expected_out, outputs)):
        cmp.add(f"{label} output {i}", e, a)
    for i, (e, a) in enumerate(zip(expected_inputs, inputs)):
        cmp.add(f"{label} input {i} after the call", e, a)


@dataclass
class GraphVerdict:
    """What a judge (:mod:`fxlab.capture.aclgraph_blame`) says of one graph's run: the
    mismatches to report (the numeric ones, and whose graph is wrong), what could not be
    compared, and what was compared besides the numbers."""

    mismatches: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)
    compared_with: str | None = None


# judge(graph, its live modules, mismatches of its own run, the compiled run it was checked against)
Judge = Callable[[GraphTrace, LiveGraph, list[str], GraphRun], GraphVerdict]


def computes(
    graph: LiveGraph, gm: fx.GraphModule, inputs: Sequence[Any], outputs: Sequence[Any], inputs_after: Sequence[Any], emulated: list[str]
) -> tuple[Comparison, str | None]:
    """``gm`` run on copies of ``inputs``, as the ACL graph capture runs it, against what
    the model computes from them (``outputs``, and ``inputs_after``: the inputs as it
    leaves them): the comparison, with a failure of the graph as a mismatch, and why it
    could not run (a missing CPU kernel). A stop of the capture (an operator TorchAir's
    capture refuses) raises :class:`~fxlab.npu_streams.CaptureStops`."""
    copies = clone_tree(list(inputs))
    with as_captured():
        ran = run_on_cpu(gm, copies, emulated)
    cmp = Comparison(values=not _draws_random(gm))
    if ran.missing_kernel:
        return cmp, ran.missing_kernel
    if ran.capture_stops:
        raise CaptureStops(ran.capture_stops)
    if ran.failure:
        cmp.mismatches.append(f"graph {graph.index}: the aclgraph graph fails: {ran.failure}")
        return cmp, None
    _compare_outputs(graph, cmp, outputs, ran.outputs or [])
    _compare_run(cmp, f"graph {graph.index}", [], inputs_after, [], copies)
    return cmp, None


def verify_aclgraph(graphs: Sequence[tuple[GraphTrace, LiveGraph]], recorder: RunRecorder, judge: Judge | None = None) -> CheckResult:
    """Each graph's ``aclgraph`` module on the inputs its functional graph got in the
    compiled run, against that run's outputs and written inputs; ``judge`` says whose
    graph a mismatch is, and compares the graph with TorchAir's own when it can."""
    cmp = Comparison()
    not_run: list[str] = []
    approximations: list[str] = []
    compared_with: list[str] = []
    for graph, live in graphs:
        run = recorder.run_of(live.modules[FUNCTIONAL])
        unrecorded = _why_not_recorded(run, recorder)
        if unrecorded is not None or run is None:
            not_run.append(f"graph {graph.index}: {unrecorded}")
            continue
        emulated: list[str] = []
        gm = live.modules[ACLGRAPH]
        try:
            graph_cmp, missing = computes(live, gm, run.inputs_before, run.outputs or [], run.inputs_after or [], emulated)
        except CaptureStops as stop:  # TorchAir's capture refuses the graph there: not a question of whose graph it is
            cmp.mismatches.append(f"graph {graph.index}: {str(stop).split(chr(10) + chr(10))[0].strip()}")
            continue
        if emulated:
            approximations.append(_emulated_note(graph, emulated))
        if missing:
            not_run.append(f"graph {graph.index}: the aclgraph graph was not run: {missing}")
            continue
        verdict = judge(graph, live, graph_cmp.mismatches, run) if judge is not None else GraphVerdict(list(graph_cmp.mismatches))
        graph_cmp.mismatches = verdict.mismatches
        not_run += verdict.not_run
        compared_with += [f"graph {graph.index}: {verdict.compared_with}"] if verdict.compared_with else []
        if not graph_cmp.values:
            not_run.append(
                f"graph {graph.index}: values not compared, only shapes and dtypes: it draws random numbers ({', '.join(_draws_random(gm))})"
            )
        cmp.merge(graph_cmp)
    result = _result(cmp, not_run)
    result.approximations = approximations
    result.compared_with = "; ".join(compared_with) or None
    return result


def _emulated_note(graph: GraphTrace, emulated: list[str]) -> str:
    return (
        f"graph {graph.index}: {', '.join(emulated)} read memory they write in place (torch refuses this on CPU; on an NPU the "
        "result depends on the kernel's order): run as out-of-place + copy_, every element read before one is written"
    )


def _why_not_recorded(run: GraphRun | None, recorder: RunRecorder) -> str | None:
    """Why the compiled run gave no inputs and outputs to check the graph against."""
    if run is not None and run.stopped:
        return f"the compiled run stopped in this graph: {run.stopped}"
    if run is None or run.outputs is None:
        if recorder.stopped:
            return f"the compiled run stopped before this graph ran: {recorder.stopped}"
        return "the compiled run did not record this graph's inputs"
    return None


def _compare_outputs(graph: LiveGraph, cmp: Comparison, expected: Sequence[Any], outputs: Sequence[Any]) -> None:
    """The aclgraph graph's outputs against the compiled run's. Only values the runtime
    uses are judged (as in the IR check): an output aot_autograd re-makes from an input,
    and a fresh buffer nothing wrote, are compared by shape and dtype."""
    if len(outputs) != len(expected):
        cmp.mismatches.append(f"graph {graph.index}: {len(outputs)} output(s) for {len(expected)}")
    unused, undefined = unused_outputs(graph), uninitialised_outputs(graph)
    for i, (e, a) in enumerate(zip(expected, outputs)):
        label = f"graph {graph.index} output {i}"
        if i in unused or i in undefined:
            if isinstance(e, torch.Tensor):
                cmp.add_form(label, e, a)
            if i in unused:
                cmp.notes.extend(unused_value_note(graph, i, unused[i], e, a, whose="the aclgraph graph's"))
        else:
            cmp.add(label, e, a)


def check_user_passes(runs: Sequence[tuple[GraphTrace, LiveGraph, Any]], recorder: RunRecorder) -> CheckResult:
    """Each user pass's graph before and after it, on the traced inputs."""
    cmp = Comparison()
    not_run: list[str] = []
    for graph, live, user_run in runs:
        label = f"graph {graph.index}: after the user's {user_run.name} ({user_run.function})"
        functional = live.modules.get(FUNCTIONAL)
        recorded = recorder.run_of(functional) if functional is not None else None
        if recorded is None or user_run.after is None:
            not_run.append(f"{label}: the compiled run did not record this graph's inputs")
            continue
        before_inputs, after_inputs = clone_tree(recorded.inputs_before), clone_tree(recorded.inputs_before)
        before = run_on_cpu(user_run.before, before_inputs)
        if before.reason:
            not_run.append(f"{label}: the graph before it was not run: {before.reason}")
            continue
        after = run_on_cpu(user_run.after, after_inputs)
        who = f"graph {graph.index}: the user's {user_run.name} ({user_run.function})"
        if after.failure:  # the graph ran before the pass and fails after it: the pass broke it
            cmp.mismatches.append(f"{who} breaks the graph: it ran before the pass and fails after it: {after.failure}")
            continue
        if after.reason:
            not_run.append(f"{label}: the graph after it was not run: {after.reason}")
            continue
        pass_cmp = Comparison(values=not _draws_random(user_run.before))
        _compare_run(pass_cmp, "", before.outputs or [], before_inputs, after.outputs or [], after_inputs)
        who = f"{who} changes the results:"
        pass_cmp.mismatches = [f"{who} {m.strip()}" for m in pass_cmp.mismatches]
        cmp.merge(pass_cmp)
    return _result(cmp, not_run)


def hazards(graph: GraphTrace) -> list[str]:
    """What the aclgraph passes noted may make the graph compute other values (their notes
    that begin with :data:`~fxlab.passes.torchair_refusals.HAZARD`)."""
    from fxlab.passes.torchair_refusals import HAZARD

    return [note for record in graph.pass_records(ACLGRAPH) for note in record.notes if note.startswith(HAZARD)]


def _result(cmp: Comparison, not_run: list[str]) -> CheckResult:
    if cmp.compared == 0 and not cmp.mismatches and not_run:
        return CheckResult(ok=True, skipped="; ".join(not_run))
    result = cmp.result()
    result.not_run = not_run
    return result
