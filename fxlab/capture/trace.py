"""The Trace: what fxlab recorded about one model, as plain data.

trace -> graphs (one per Dynamo graph) -> stages (dynamo, aten, functional, then pre_ge in
GE graph mode or aclgraph in the ACL graph modes) -> nodes (with their inputs, provenance
and mutation info); per graph every pass list's records, the conversion to Ascend IR and
the IR itself; the checks; and the calls of the compiled model (which graphs each ran,
which it compiled and why).

Nothing here is live: no ``GraphModule``, no tensor, no function. What the checks need
while a model is being captured (the graph modules, the conversion's per-node results)
is held beside the trace by the capture (:class:`fxlab.capture.pipeline.LiveGraph`).
A trace is saved and loaded by one serializer (:mod:`fxlab.capture.serialize`), and
loading gives back an equal trace. No printing in this layer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fxlab.ir.model import IrGraph
from fxlab.passes.infra import PassRecord
from fxlab.reports.conversion_summary import SummaryRow


@dataclass
class TensorMeta:
    """Shape, dtype and stride of one tensor value (symbolic dims as strings)."""

    shape: list[int | str]
    dtype: str
    stride: list[int | str] | None = None

    def signature(self) -> str:
        dims = ", ".join(str(d) for d in self.shape)
        return f"{self.dtype}[{dims}]"


@dataclass
class Provenance:
    """Where a node came from in the user's code."""

    file: str | None = None
    line: int | None = None
    code: str | None = None
    module_path: list[str] = field(default_factory=list)
    from_node: list[str] = field(default_factory=list)
    original_aten: str | None = None
    # ``file:line`` inside a library where the op was made, when ``file``/``line`` are the
    # user's line that called into it (a collective in torch.distributed, a helper).
    library_location: str | None = None

    @property
    def location(self) -> str | None:
        return f"{self.file}:{self.line}" if self.file and self.line else None


@dataclass
class NodeRecord:
    """One FX node: what it is, what it reads, what it produces, where it came from, what
    it mutates."""

    name: str
    op: str  # placeholder | call_function | call_method | call_module | get_attr | output
    target: str
    args: str  # the arguments as readable text
    inputs: list[str] = field(default_factory=list)  # the nodes it reads, in order (its graph edges)
    outputs: list[TensorMeta] = field(default_factory=list)
    provenance: Provenance = field(default_factory=Provenance)
    mutates: list[str] = field(default_factory=list)  # schema argument names written in place
    kind: str = ""  # "inplace", "copy_epilogue", "auto_functionalized", "scope", "" ...
    scopes: list[dict[str, Any]] = field(default_factory=list)  # scope frames: {"attrs": {key: value}, ...}
    ge_ops: list[str] = field(default_factory=list)


@dataclass
class StageTrace:
    """One FX stage of one graph: its readable code and its nodes."""

    name: str
    code: str
    nodes: list[NodeRecord] = field(default_factory=list)

    def call_nodes(self) -> list[NodeRecord]:
        return [n for n in self.nodes if n.op not in ("placeholder", "output", "get_attr")]

    def targets(self) -> list[str]:
        return [n.target for n in self.call_nodes()]

    def count(self, kind: str) -> int:
        return sum(1 for n in self.nodes if n.kind == kind)


@dataclass
class ConversionRecord:
    """What the conversion of one graph to Ascend IR gave: how many GE ops, whether every
    node converted, what it said, the GE options the graph needs, and the per-target
    summary (TorchAir's ``fx_summary``)."""

    ops: int
    partial: bool
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    assigns_to_outputs: list[str] = field(default_factory=list)  # Assign ops made graph outputs (output reuse)
    ge_options: dict[str, str] = field(default_factory=dict)
    host_outputs: list[str] = field(default_factory=list)  # FX outputs TorchAir makes on the host, one sentence each
    not_converted: list[dict[str, Any]] = field(default_factory=list)  # {"op", "nodes", "status", "reason"}
    auto_converted: list[dict[str, Any]] = field(default_factory=list)  # custom ops converted by TorchAir's auto rule
    summary: list[SummaryRow] = field(default_factory=list)  # one row per target, saved as conversion_summary.*


@dataclass
class GraphTrace:
    """Everything recorded for one Dynamo graph."""

    index: int
    break_reason: str | None = None
    break_location: str | None = None
    error: str | None = None
    stages: dict[str, StageTrace] = field(default_factory=dict)
    mutated_inputs: list[str] = field(default_factory=list)
    # Every pass list that ran (:data:`fxlab.stage_names.PASS_LISTS`), each pass with what
    # it did, in order; the user's own passes are records of the list they ran in.
    passes: dict[str, list[PassRecord]] = field(default_factory=dict)
    # Users' register_replacement patterns and their matches (PatternReport's data).
    patterns: list[dict[str, Any]] = field(default_factory=list)
    conversion: ConversionRecord | None = None
    ir: IrGraph | None = None
    # TorchAir's "py" dump of the IR, grouped by FX node and source line (ascend_ir.py).
    ir_py: str | None = None
    capture_code: str | None = None  # the ACL graph capture module (aclgraph_capture.py)
    # With --converter torchair on the aclgraph path: whose graph the stage is, and how
    # TorchAir's own passes' graph compares with fxlab's ({"same": bool, "differences": [...]}).
    torchair_aclgraph: dict[str, Any] | None = None
    # Streams, events and stream core limits on the aclgraph path (aclgraph_streams.GraphStreams).
    streams: dict[str, Any] | None = None

    @property
    def partial(self) -> bool:
        """Not every node of the graph converted to Ascend IR."""
        return self.conversion is not None and self.conversion.partial

    def pass_records(self, pass_list: str) -> list[PassRecord]:
        """The records of one pass list (``pre_ge``, ``ge_graph``, ``aclgraph``)."""
        return self.passes.get(pass_list, [])


@dataclass
class CheckResult:
    """A numerical check (eager vs compiled, or the Ascend IR on CPU vs compiled).

    ``mismatches`` are numeric (or shape/dtype) disagreements only; ``refused`` the graphs
    TorchAir does not take; ``skipped`` says why nothing was compared at all, ``not_run``
    why some part (a graph) was not."""

    ok: bool
    compared: int = 0
    max_abs_diff: float = 0.0
    mismatches: list[str] = field(default_factory=list)
    skipped: str | None = None
    not_run: list[str] = field(default_factory=list)
    # Where the match holds only with the exact form of a GE op that approximates its
    # ATen op (GE's Gelu is tanh-form): which ops, and GE's own difference. For the
    # aclgraph graph: in-place ops torch refuses on CPU (they read what they write), run
    # as out-of-place + copy_.
    approximations: list[str] = field(default_factory=list)
    # Differences found in values the runtime never uses (an output aot_autograd re-makes
    # from a graph input): said, not counted.
    notes: list[str] = field(default_factory=list)
    # What the check compared besides the numbers, and found the same (the aclgraph
    # check: the graph TorchAir's own backend makes, run end to end from its sources).
    compared_with: str | None = None
    # Graphs TorchAir does not take, whatever their values (the aclgraph check: its
    # backend fails to compile the graph, or its capture of the ACL graph stops at an op):
    # not a numeric disagreement, and not ok either.
    refused: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        if self.skipped:
            return f"not run: {self.skipped}"
        also = f"; not run: {'; '.join(self.not_run)}" if self.not_run else ""
        if self.ok:
            approx = f", except: {'; '.join(self.approximations)}" if self.approximations else ""
            same = f"; {self.compared_with}" if self.compared_with else ""
            return f"match ({self.compared} tensors, max |diff| {self.max_abs_diff:.3g}){approx}{same}{also}"
        said = ["MISMATCH: " + "; ".join(self.mismatches)] if self.mismatches else []
        said += ["REFUSED: " + "; ".join(self.refused)] if self.refused else []
        return "; ".join(said) + also

    @property
    def failed(self) -> bool:
        """A real disagreement (not a check that could not run)."""
        return not self.ok and not self.skipped

    @property
    def unverified(self) -> bool:
        """Something this check should have compared was not: it could not run at all,
        or not for every graph or value."""
        return bool(self.skipped or self.not_run)


# A trace's status words: ``ok`` when every check ran and matched; ``unverified`` when
# nothing disagreed but a check could not run (or not for everything); ``partial`` for a
# real difference (a mismatch, an op not converted, a broken stage); ``failed`` for a run
# that stopped (written only into a manifest).
STATUSES = ("ok", "unverified", "partial", "failed")


# -- the calls of the compiled model ----------------------------------------------------------
# A model file may give several input sets (a serving warm-up over batch sizes; see
# fxlab.capture.input_sets); a model with a dynamic graph and one input set gets a second
# call at sizes derived from the first. The first call's checks are the trace's own
# (Trace.check, Trace.ir_check); each later call carries its own.
@dataclass
class Recompile:
    """One graph compiled on a call after the first: Dynamo's reasons (the guards of the
    graphs it had that failed) and the same in plain words. No reason: Dynamo met code it
    had not compiled before (a new frame or path), not a failed guard."""

    graph: int
    reasons: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)


@dataclass
class CallRecord:
    """One call of the compiled model."""

    index: int
    inputs: str  # the input set's shapes and dtypes, e.g. "x: f32[4, 8]"
    origin: str = "given"  # "given", or how fxlab derived it ("dim 0 of x: 2 -> 4")
    graphs: list[int] = field(default_factory=list)  # the graphs that ran, in order (each once)
    compiled: list[int] = field(default_factory=list)  # those compiled on this call
    recompiles: list[Recompile] = field(default_factory=list)
    check: CheckResult | None = None  # eager vs compiled on this call's inputs
    ir_check: CheckResult | None = None  # the mode's graph (Ascend IR or aclgraph) of the graphs that ran, on this call's inputs

    @property
    def reused(self) -> list[int]:
        return [g for g in self.graphs if g not in self.compiled]

    @property
    def failed(self) -> bool:
        return any(c is not None and c.failed for c in (self.check, self.ir_check))


@dataclass
class ProgramCompile:
    """Where a trace of a program run (``fxlab run``) comes from: the function one
    ``torch.compile`` call made, the call of it that made Dynamo compile, the backend;
    for a recompile, the trace of the compile before and Dynamo's reasons in words."""

    function: str  # what was compiled: a module's class name, or a function's qualified name
    compiled_at: str  # file:line of the torch.compile call
    called_at: str  # file:line of the call that compiled (or recompiled) it
    backend: str  # as the program named it: "torchair.get_npu_backend(...)", "'npugraph_ex'"
    compile_index: int = 0  # 0 for the function's first compile, n for its n-th recompile
    previous: str | None = None  # the folder of the function's trace before this recompile
    reasons: list[str] = field(default_factory=list)  # Dynamo's reasons for the recompile, in words


@dataclass
class Trace:
    """One model's trace (see the module docstring)."""

    model: str
    entry: str
    fxlab_version: str
    torch_version: str
    graphs: list[GraphTrace] = field(default_factory=list)
    stages: list[str] = field(default_factory=list)
    mode: str = "max-autotune"  # TorchAir's config.mode the trace followed
    options_set: list[str] = field(default_factory=list)  # "option=value (where)" the user set
    # torch.compile options the model asked for (fxlab.capture.compile_options), if any.
    compile_options: dict[str, Any] = field(default_factory=dict)
    status: str = "ok"  # ok | unverified | partial | failed (see STATUSES)
    notes: list[str] = field(default_factory=list)
    # What is wrong outside any graph (a custom op Dynamo ran eagerly between graphs): each
    # makes the trace partial.
    problems: list[str] = field(default_factory=list)
    check: CheckResult | None = None  # eager vs compiled
    ir_check: CheckResult | None = None  # the Ascend IR on CPU vs the compiled run
    aclgraph_check: CheckResult | None = None  # the aclgraph graph on CPU vs the compiled run
    user_pass_check: CheckResult | None = None  # each user pass's graph before vs after
    # Each call of the compiled model, in order (one, unless a warm-up or a second size ran).
    calls: list[CallRecord] = field(default_factory=list)
    program: ProgramCompile | None = None  # a trace of a program run: where in the program it was compiled

    def checks(self) -> list[tuple[str, CheckResult]]:
        """The first call's checks that ran, with their labels, in the order shown."""
        named = (
            ("eager vs compiled", self.check),
            ("Ascend IR on CPU vs compiled", self.ir_check),
            ("aclgraph graph on CPU vs compiled", self.aclgraph_check),
            ("user passes (graph before vs after)", self.user_pass_check),
        )
        return [(label, check) for label, check in named if check is not None]
