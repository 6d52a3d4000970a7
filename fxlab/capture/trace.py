"""The Trace: what fxlab recorded about one model, as plain data.

trace -> graphs (one per Dynamo graph) -> stages (dynamo, aten, functional, then pre_ge in
GE graph mode or aclgraph in the ACL graph modes) -> nodes (with provenance and mutation
info); and the calls of the compiled model (which graphs each ran, which it compiled and
why). Everything here serializes to JSON and
loads back, so saved traces can be diffed later; the live ``GraphModule`` objects and
the Ascend IR ride along on :class:`GraphTrace` but are not part of the JSON of a stage.
No printing in this layer.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, TypedDict

import torch.fx as fx

from fxlab.ir.model import IrGraph
from fxlab.passes.conversion_result import ConversionResult
from fxlab.passes.pattern_fusion import UserPassRun
from fxlab.passes.torchair_options import TorchAirOptions
from fxlab.reports.conversion_summary import SummaryRow, summarize_conversion
from fxlab.stage_names import FUNCTIONAL, PRE_GE


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
    """One FX node: what it is, what it produces, where it came from, what it mutates."""

    name: str
    op: str  # placeholder | call_function | call_method | call_module | get_attr | output
    target: str
    args: str
    outputs: list[TensorMeta] = field(default_factory=list)
    provenance: Provenance = field(default_factory=Provenance)
    mutates: list[str] = field(default_factory=list)  # schema argument names written in place
    kind: str = ""  # "inplace", "copy_epilogue", "auto_functionalized", "scope", "" ...
    scopes: list[dict[str, Any]] = field(default_factory=list)  # scope frames: {"attrs": {key: value}, ...}
    ge_ops: list[str] = field(default_factory=list)

    @property
    def is_highlighted(self) -> bool:
        return bool(self.kind)


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


class IrSummary(TypedDict, total=False):
    """What the ``ascend_ir`` stage says about its conversion (saved as it is)."""

    ops: int
    partial: bool
    seconds: float
    warnings: list[str]
    notes: list[str]
    assigns_to_outputs: list[str]  # Assign ops made graph outputs (fxlab's output-reuse pass)
    ge_options: dict[str, str]  # the GE compile options the graph needs
    host_outputs: list[str]  # FX outputs TorchAir makes on the host, one sentence each
    not_converted: list[dict[str, Any]]  # ops not converted, with why (and TorchAir's verdict)
    auto_converted: list[dict[str, Any]]  # custom ops converted by TorchAir's auto-converter rule


@dataclass
class GraphTrace:
    """Everything recorded for one Dynamo graph."""

    index: int
    break_reason: str | None = None
    break_location: str | None = None
    stages: dict[str, StageTrace] = field(default_factory=dict)
    mutated_inputs: list[str] = field(default_factory=list)
    ir_summary: IrSummary | None = None
    error: str | None = None
    # TorchAir's passes before conversion, in order: {"pass", "changed", "removed", "added"}.
    pre_ge_passes: list[dict[str, Any]] = field(default_factory=list)
    # TorchAir's aclgraph passes (_optimize_fx, then optimize_graph_without_runtime), in order.
    aclgraph_passes: list[dict[str, Any]] = field(default_factory=list)
    # Users' register_replacement patterns and their matches (PatternReport.to_json()).
    patterns: list[dict[str, Any]] = field(default_factory=list)
    # With --converter torchair on the aclgraph path: whose graph the stage is, and how
    # TorchAir's own passes' graph compares with fxlab's ({"same": bool, "differences": [...]}).
    torchair_aclgraph: dict[str, Any] | None = None
    # Streams, events and stream core limits on the aclgraph path (aclgraph_streams.GraphStreams).
    streams: dict[str, Any] | None = None
    capture_code: str | None = field(default=None, repr=False, compare=False)  # saved as aclgraph_capture.py
    # Live objects, not serialized with the stages.
    modules: dict[str, fx.GraphModule] = field(default_factory=dict, repr=False, compare=False)
    ir: IrGraph | None = field(default=None, repr=False, compare=False)
    conversion: ConversionResult | None = field(default=None, repr=False, compare=False)
    conversion_rows: list[SummaryRow] | None = field(default=None, repr=False, compare=False)  # see conversion_summary()
    user_pass_runs: list[UserPassRun] = field(default_factory=list, repr=False, compare=False)

    def converted_module(self) -> fx.GraphModule | None:
        """The FX graph the Ascend IR was converted from: TorchAir's own after its passes
        (``--converter torchair``), else the ``pre_ge`` stage, else ``functional``."""
        converted = self.conversion.fx_graph if self.conversion is not None else None
        return converted or self.modules.get(PRE_GE) or self.modules.get(FUNCTIONAL)

    def conversion_summary(self) -> list[SummaryRow]:
        """The conversion summary of this graph (:func:`summarize_conversion`), made once:
        saving and printing both show it. Empty without a live conversion."""
        if self.conversion_rows is None:
            converted = self.converted_module()
            if self.conversion is None or converted is None:
                return []
            self.conversion_rows = summarize_conversion(converted, self.conversion)
        return self.conversion_rows


@dataclass
class CheckResult:
    """A numerical check (eager vs compiled, or the Ascend IR on CPU vs compiled).

    ``mismatches`` are numeric (or shape/dtype) disagreements only; ``skipped`` says why
    nothing was compared at all, ``not_run`` why some part (a graph) was not."""

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

    @property
    def verdict(self) -> str:
        if self.skipped:
            return f"not run: {self.skipped}"
        also = f"; not run: {'; '.join(self.not_run)}" if self.not_run else ""
        if self.ok:
            approx = f", except: {'; '.join(self.approximations)}" if self.approximations else ""
            same = f"; {self.compared_with}" if self.compared_with else ""
            return f"match ({self.compared} tensors, max |diff| {self.max_abs_diff:.3g}){approx}{same}{also}"
        return "MISMATCH: " + "; ".join(self.mismatches) + also

    @property
    def failed(self) -> bool:
        """A real disagreement (not a check that could not run)."""
        return not self.ok and not self.skipped

    @property
    def unverified(self) -> bool:
        """Something this check should have compared was not: it could not run at all,
        or not for every graph or value."""
        return bool(self.skipped or self.not_run)


def check_to_json(check: CheckResult | None) -> dict[str, Any] | None:
    if check is None:
        return None
    data = asdict(check)
    for key in ("approximations", "notes", "compared_with"):
        if not data[key]:
            del data[key]  # written only where there is something to say
    return data


def check_from_json(data: dict[str, Any] | None) -> CheckResult | None:
    return CheckResult(**data) if data else None


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

    def to_json(self) -> dict[str, Any]:
        return {"graph": self.graph, "reasons": list(self.reasons), "words": list(self.words)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Recompile:
        return cls(int(data["graph"]), list(data.get("reasons", [])), list(data.get("words", [])))


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
    ir_check: CheckResult | None = None  # the Ascend IR of the graphs that ran, on this call's inputs

    @property
    def reused(self) -> list[int]:
        return [g for g in self.graphs if g not in self.compiled]

    @property
    def failed(self) -> bool:
        return any(c is not None and c.failed for c in (self.check, self.ir_check))

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "inputs": self.inputs,
            "origin": self.origin,
            "graphs": list(self.graphs),
            "compiled": list(self.compiled),
            "reused": self.reused,
            "recompiles": [r.to_json() for r in self.recompiles],
            "check": check_to_json(self.check),
            "ir_check": check_to_json(self.ir_check),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CallRecord:
        return cls(
            index=int(data["index"]),
            inputs=str(data.get("inputs", "")),
            origin=str(data.get("origin", "given")),
            graphs=list(data.get("graphs", [])),
            compiled=list(data.get("compiled", [])),
            recompiles=[Recompile.from_json(r) for r in data.get("recompiles", [])],
            check=check_from_json(data.get("check")),
            ir_check=check_from_json(data.get("ir_check")),
        )


@dataclass
class Trace:
    model: str
    entry: str
    fxlab_version: str
    torch_version: str
    graphs: list[GraphTrace] = field(default_factory=list)
    stages: list[str] = field(default_factory=list)
    check: CheckResult | None = None
    ir_check: CheckResult | None = None
    status: str = "ok"  # ok | unverified | partial | failed (see STATUSES)
    notes: list[str] = field(default_factory=list)
    mode: str = "max-autotune"  # TorchAir's config.mode the trace followed
    options_set: list[str] = field(default_factory=list)  # "option=value (where)" the user set
    aclgraph_check: CheckResult | None = None  # the aclgraph graph on CPU vs the compiled run
    user_pass_check: CheckResult | None = None  # each user pass's graph before vs after
    options: TorchAirOptions | None = field(default=None, repr=False, compare=False)  # the options followed (live)
    # torch.compile options the model asked for (fxlab.capture.compile_options), if any.
    compile_options: dict[str, Any] = field(default_factory=dict)
    # Each call of the compiled model, in order (one, unless a warm-up or a second size ran).
    calls: list[CallRecord] = field(default_factory=list)

    def to_json(self, with_stages: bool = True) -> dict[str, Any]:
        return {
            "model": self.model,
            "entry": self.entry,
            "fxlab_version": self.fxlab_version,
            "torch_version": self.torch_version,
            "stages": list(self.stages),
            "status": self.status,
            "notes": list(self.notes),
            "check": check_to_json(self.check),
            "ir_check": check_to_json(self.ir_check),
            "mode": self.mode,
            "options_set": list(self.options_set),
            "aclgraph_check": check_to_json(self.aclgraph_check),
            "user_pass_check": check_to_json(self.user_pass_check),
            "graphs": [graph_to_json(g, with_stages) for g in self.graphs],
            **self.calls_json(),
        }

    def calls_json(self) -> dict[str, Any]:
        """The compile options the model asked for, and the calls when there was more than
        one (a warm-up, or a dynamic graph checked at a second size): only when there are."""
        extra: dict[str, Any] = {}
        if self.compile_options:
            extra["compile_options"] = dict(self.compile_options)
        if len(self.calls) > 1:
            extra["calls"] = [call.to_json() for call in self.calls]
        return extra

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Trace:
        return cls(
            model=data["model"],
            entry=data["entry"],
            fxlab_version=data["fxlab_version"],
            torch_version=data["torch_version"],
            stages=list(data.get("stages", [])),
            status=data.get("status", "ok"),
            notes=list(data.get("notes", [])),
            check=check_from_json(data.get("check")),
            ir_check=check_from_json(data.get("ir_check")),
            mode=data.get("mode", "max-autotune"),
            options_set=list(data.get("options_set", [])),
            aclgraph_check=check_from_json(data.get("aclgraph_check")),
            user_pass_check=check_from_json(data.get("user_pass_check")),
            graphs=[graph_from_json(g) for g in data.get("graphs", [])],
            compile_options=dict(data.get("compile_options", {})),
            calls=[CallRecord.from_json(item) for item in data.get("calls", [])],
        )


def graph_to_json(graph: GraphTrace, with_stages: bool = True) -> dict[str, Any]:
    return {
        "index": graph.index,
        "break_reason": graph.break_reason,
        "break_location": graph.break_location,
        "mutated_inputs": list(graph.mutated_inputs),
        "ir_summary": graph.ir_summary,
        "error": graph.error,
        "pre_ge_passes": list(graph.pre_ge_passes),
        "aclgraph_passes": list(graph.aclgraph_passes),
        "patterns": list(graph.patterns),
        "torchair_aclgraph": graph.torchair_aclgraph,
        "streams": graph.streams,
        "stages": {name: stage_to_json(stage) for name, stage in graph.stages.items()} if with_stages else sorted(graph.stages),
        "ir": (graph.ir.to_json() if with_stages else True) if graph.ir is not None else None,
    }


def graph_from_json(data: dict[str, Any]) -> GraphTrace:
    graph = GraphTrace(
        index=data["index"],
        break_reason=data.get("break_reason"),
        break_location=data.get("break_location"),
        mutated_inputs=list(data.get("mutated_inputs", [])),
        ir_summary=data.get("ir_summary"),
        error=data.get("error"),
        pre_ge_passes=list(data.get("pre_ge_passes", [])),
        aclgraph_passes=list(data.get("aclgraph_passes", [])),
        patterns=list(data.get("patterns", [])),
        torchair_aclgraph=data.get("torchair_aclgraph"),
        streams=data.get("streams"),
        capture_code=data.get("capture_code"),
        stages={name: stage_from_json(s) for name, s in data.get("stages", {}).items()},
    )
    if data.get("ir"):
        graph.ir = IrGraph.from_json(data["ir"])
    return graph


def stage_to_json(stage: StageTrace) -> dict[str, Any]:
    return {"name": stage.name, "code": stage.code, "nodes": [node_to_json(n) for n in stage.nodes]}


def node_to_json(node: NodeRecord) -> dict[str, Any]:
    # Written out by hand: dataclasses.asdict deep-copies every value and is the slowest
    # part of saving a large trace.
    prov = node.provenance
    return {
        "name": node.name,
        "op": node.op,
        "target": node.target,
        "args": node.args,
        "outputs": [{"shape": m.shape, "dtype": m.dtype, "stride": m.stride} for m in node.outputs],
        "provenance": {
            "file": prov.file,
            "line": prov.line,
            "code": prov.code,
            "module_path": prov.module_path,
            "from_node": prov.from_node,
            "original_aten": prov.original_aten,
            **({"library_location": prov.library_location} if prov.library_location else {}),
        },
        "mutates": node.mutates,
        "kind": node.kind,
        "scopes": node.scopes,
        "ge_ops": node.ge_ops,
    }


def stage_from_json(data: dict[str, Any]) -> StageTrace:
    return StageTrace(name=data["name"], code=data["code"], nodes=[node_from_json(n) for n in data["nodes"]])


def node_from_json(data: dict[str, Any]) -> NodeRecord:
    data = dict(data)
    data["outputs"] = [TensorMeta(**m) for m in data.get("outputs", [])]
    data["provenance"] = Provenance(**data.get("provenance", {}))
    return NodeRecord(**data)
