"""The runs a check compares against, and the one routine every graph check goes through.

A check of a graph (the Ascend IR, the aclgraph graph, a user's pass, on the first call or
a later one) holds a recorded run -- the inputs a graph got, its outputs, the inputs as it
left them (:class:`GraphRun`, recorded by :class:`RunRecorder` in the compiled run) --
and something that runs a graph (the IR executor, an FX graph on CPU). :func:`run_against`
runs it on copies of the recorded inputs and compares its outputs and the inputs it wrote
with the recorded ones under one :class:`OutputPolicy`: only values the runtime uses are
judged by value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx

from fxlab.capture.checks.custom_ops import has_custom_ops
from fxlab.capture.checks.values import Comparison, clone_tree
from fxlab.capture.stages import REGENERATED_OUTPUTS
from fxlab.ir.kernels.registry import KernelFault, KernelGap
from fxlab.npu_streams import CaptureStops
from fxlab.scope import scope_stack_kept  # defines the scope markers and event operators (fxlab.npu_streams) a graph may call


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
        # against their kernels on these inputs (fxlab.capture.checks.custom_ops).
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


def why_not_recorded(run: GraphRun | None, recorder: RunRecorder) -> str | None:
    """Why the compiled run gave no inputs and outputs to check the graph against (None:
    it gave them)."""
    if run is not None and run.stopped:
        return f"the compiled run stopped in this graph: {run.stopped}"
    if run is None or run.outputs is None:
        if recorder.stopped:
            return f"the compiled run stopped before this graph ran: {recorder.stopped}"
        return "the compiled run did not record this graph's inputs"
    return None


_NO_CPU_KERNEL = re.compile(r"Could not run '([\w:.]+)' with arguments from the 'CPU' backend")


def missing_cpu_kernel(exc: BaseException | None) -> str | None:
    """Why a run stopped at an operator it cannot run on CPU, or None: the operator has
    no CPU kernel (a torch_npu operator defined from its schema and Meta function only, a
    custom op with a Meta function only), or fxlab's CPU reference kernel of it does not
    implement the call (:class:`~fxlab.ir.kernels.registry.KernelGap`: it names the option)."""
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


def kernel_fault(exc: BaseException | None) -> KernelFault | None:
    """The failure of one of fxlab's CPU reference kernels behind ``exc``, if that is what it is."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, KernelFault):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def drawing_ops(gm: fx.GraphModule) -> list[str]:
    """The ops of ``gm`` that draw random numbers (ATen tags them ``nondeterministic_seeded``)."""
    return sorted(
        {
            str(n.target)
            for n in gm.graph.nodes
            if n.op == "call_function" and torch.Tag.nondeterministic_seeded in getattr(n.target, "tags", ())
        }
    )


# -- a graph run on CPU ---------------------------------------------------------------------------
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
    """A graph's run on CPU: its outputs, or why there are none. ``not_run``: fxlab cannot
    run it on CPU (an op with no CPU kernel, a reference kernel that cannot compute the
    call: says nothing about the graph); ``failure``: the graph itself failed (an op refused
    its arguments: the graph is wrong)."""

    outputs: list[Any] | None = None
    not_run: str | None = None
    failure: str | None = None
    capture_stops: str | None = None  # an op whose NPU kernel raises while the ACL graph is captured

    @property
    def reason(self) -> str | None:
        """Why it has no outputs, in a few words (None when it ran)."""
        return self.not_run or (f"it failed on CPU: {self.failure}" if self.failure else None)


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
            return CpuRun(not_run=missing)
        return CpuRun(failure=f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    return CpuRun(list(outputs) if isinstance(outputs, (list, tuple)) else [outputs])


# -- the one routine ------------------------------------------------------------------------------
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


def uninitialised_outputs(functional: fx.GraphModule) -> set[int]:
    """The functional graph's outputs (by index) that are a freshly allocated buffer
    nothing in the graph wrote."""
    returned = list(functional.graph.output_node().args[0])  # type: ignore[arg-type]
    return {i for i, r in enumerate(returned) if isinstance(r, fx.Node) and str(r.target) in _UNINITIALISED}


def unused_outputs(functional: fx.GraphModule) -> dict[int, int | None]:
    """The graph outputs whose value the runtime does not take from the graph: ``{output
    index: the graph input it aliases (None: another output)}``."""
    return functional.meta.get(REGENERATED_OUTPUTS, {})


@dataclass
class OutputPolicy:
    """Which values of a graph's run are judged by value: only those the runtime uses. An
    output aot_autograd's runtime re-makes from a graph input or another output, and a
    fresh buffer nothing wrote, are compared by shape and dtype (aot checks a re-made
    output's shape as it re-makes it; a differing value of one is noted, not counted); so
    are the outputs drawn at random (the CPU cannot draw the device's numbers), and while
    the graph draws, the inputs it writes.

    ``functional`` is the graph aot_autograd compiled (its outputs are the recorded ones);
    ``whose`` / ``against`` name the two values in a note; ``drawing`` the ops that draw,
    ``drawn`` the outputs that depend on them (None: every output); ``positions`` the
    recorded output each output of the run stands for (None: the same one)."""

    functional: fx.GraphModule
    index: int
    whose: str
    against: str = "the compiled run's"
    drawing: list[str] = field(default_factory=list)
    drawn: set[int] | None = None
    positions: list[int] | None = None
    remade: dict[int, int | None] = field(init=False)
    fresh: set[int] = field(init=False)

    def __post_init__(self) -> None:
        self.remade = unused_outputs(self.functional)
        self.fresh = uninitialised_outputs(self.functional)

    def expected(self, recorded: GraphRun) -> list[Any]:
        """The recorded outputs the run's outputs are compared with, in its order."""
        outputs = recorded.outputs or []
        return list(outputs) if self.positions is None else [outputs[p] for p in self.positions]

    def is_drawn(self, i: int) -> bool:
        return bool(self.drawing) and (self.drawn is None or i in self.drawn)

    def compare_outputs(self, cmp: Comparison, expected: Sequence[Any], outputs: Sequence[Any]) -> None:
        if len(outputs) != len(expected):
            cmp.mismatches.append(f"graph {self.index}: {len(outputs)} output(s) for {len(expected)}")
        for i, (e, a) in enumerate(zip(expected, outputs)):
            label, position = f"graph {self.index} output {i}", i if self.positions is None else self.positions[i]
            if position in self.remade:  # its shape still counts: aot checks it as it re-makes the output
                if isinstance(e, torch.Tensor):
                    cmp.add_form(label, e, a)
                cmp.notes.extend(self.unused_value_note(position, e, a))
            elif (self.is_drawn(i) or position in self.fresh) and isinstance(e, torch.Tensor):
                cmp.add_form(label, e, a)
            else:
                cmp.add(label, e, a)

    def compare_written(self, cmp: Comparison, expected: Sequence[Any], inputs: Sequence[Any]) -> None:
        """The graph's inputs as the run left them against the recorded ones."""
        for i, (e, a) in enumerate(zip(expected, inputs)):
            label = f"graph {self.index} input {i} after the call"
            if self.drawing and isinstance(e, torch.Tensor):  # an input may be written from a draw
                cmp.add_form(label, e, a)
            else:
                cmp.add(label, e, a)

    def unused_value_note(self, position: int, expected: Any, actual: Any, what: str = "") -> list[str]:
        """Nothing when the run's value of an output the runtime re-makes agrees anyway;
        else one sentence saying it differs, and why that does not count."""
        alone = Comparison()
        alone.add("", expected, actual)
        if not alone.mismatches:
            return []
        names = _output_names(self.functional)
        name = f" ({names[position]})" if position < len(names) and names[position] else ""
        base = self.remade[position]
        if base is not None:
            inputs = [n.name for n in self.functional.graph.nodes if n.op == "placeholder"]
            source = f"graph input {base}" + (f" ({inputs[base]})" if base < len(inputs) else "")
            made = f"it is {source} or a view of it, which aot_autograd's runtime re-makes from the input the graph wrote back"
        else:
            made = "it is a view of another output, which aot_autograd's runtime re-makes from that output"
        differs = alone.mismatches[0].removeprefix(": ")
        return [
            f"graph {self.index} output {position}{name}{what}: {self.whose} value differs from {self.against} ({differs}), "
            f"but no one uses it: {made}"
        ]


def _output_names(gm: fx.GraphModule) -> list[str]:
    output = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
    values = output.args[0] if isinstance(output.args[0], (list, tuple)) else [output.args[0]]
    return [v.name if isinstance(v, fx.Node) else "" for v in values]


def run_against(recorded: GraphRun, run_graph: Callable[[list[Any]], CpuRun], policy: OutputPolicy) -> tuple[Comparison, CpuRun]:
    """``run_graph`` run on copies of the recorded inputs; its outputs and the inputs it
    wrote compared with the recorded run's under ``policy``. When the run gave no outputs
    the comparison is empty and the :class:`CpuRun` says why."""
    inputs = clone_tree(list(recorded.inputs_before))
    ran = run_graph(inputs)
    cmp = Comparison()
    if ran.outputs is not None:
        policy.compare_outputs(cmp, policy.expected(recorded), ran.outputs)
        policy.compare_written(cmp, recorded.inputs_after or [], inputs)
    return cmp, ran


def without_graph(index: int, mismatch: str) -> str:
    """``output 1: max |diff| 2.16`` of ``graph 0 output 1: max |diff| 2.16``."""
    return mismatch.removeprefix(f"graph {index}: ").removeprefix(f"graph {index} ")
