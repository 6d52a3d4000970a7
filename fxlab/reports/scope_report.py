"""SuperKernel scopes and core-count limits of a traced model: what covers which op, why
a scope splits, which core limit wins, and what is wrong.

An analysis, no printing: :func:`build_scope_report` reads each graph's FX graph (scope
markers, dynamic shapes) and Ascend IR (the attrs every GE op ended up with) and returns
a :class:`ScopeReport` of plain data. The FX level, graph by graph as TorchAir checks it
(unpaired markers, scopes no GE op carries), is :mod:`fxlab.reports.scope_graphs`; the
options string, :mod:`fxlab.reports.superkernel_options`.

Segments follow GE's SuperKernel pass (``graph/passes/feature/super_kernel_pass.cc`` in
CANN's open-source GE): per stream, walk the ops in order from a scope's first op to its
last; an op of no or another scope, or an op that cannot be fused, cuts the scope there
(non-compute ops -- ``Data``, ``Const``, ``Variable``, ``Send``/``Recv`` -- are skipped).
With ``strict-scope-check=bypass`` GE drops the whole scope instead, with ``abort`` it
fails the compile. Which op kinds cannot be fused, and where that is documented, is in
docs/superkernel.md; :data:`UNFUSABLE_OP_TYPES` holds them (a ``--plugin`` file may add
its own op types, e.g. a custom op implemented in TBE rather than Ascend C).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Iterable, Sequence

import torch.fx as fx

from fxlab.ir.model import IrGraph, IrOp
from fxlab.passes.annotate_scopes import ScopeSpan
from fxlab.reports.scope_graphs import (
    EmptyScope,
    Finding,
    GraphScopes,
    empty_scope_findings,
    graph_break_in_scope,
    graph_scopes,
    pairing_findings,
)
from fxlab.scope import OP_AICORE_NUM, OP_VECTORCORE_NUM, SUPER_KERNEL_OPTIONS, SUPER_KERNEL_SCOPE, USER_STREAM_LABEL
from fxlab.socs import SocInfo, check_core_count
from fxlab.reports.superkernel_options import SuperKernelOptions, parse_super_kernel_options
from fxlab.stage_names import DYNAMO, FUNCTIONAL


# -- what SuperKernel cannot fuse (sources: docs/superkernel.md) ---------------------------
# Non-compute ops GE skips inside a scope: they neither join nor cut it (GE SuperKernelPass).
IGNORED_OP_TYPES = frozenset(
    {
        "Data",
        "RefData",
        "Variable",
        "Const",
        "Constant",
        "ConstPlaceHolder",
        "NetOutput",
        "Send",
        "SendNotify",
        "SendMem",
        "Recv",
        "RecvNotify",
        "RecvMem",
    }
)
# Collective ops SuperKernel can fuse (TorchAir docs: AllReduce, ReduceScatter, AllGather,
# AlltoAll); every other HCCL op cuts the scope.
FUSABLE_COLLECTIVES = frozenset({"HcomAllReduce", "HcomReduceScatter", "HcomAllGather", "HcomAllToAll", "HcomAllToAllV", "HcomAllToAllVC"})
# op type -> why SuperKernel cannot fuse it. Users extend this from a --plugin file.
UNFUSABLE_OP_TYPES: dict[str, str] = {}
# op type -> when it may still cut the scope (reported as a remark, not a cut).
MAYBE_UNFUSABLE_OP_TYPES: dict[str, str] = {
    "FxlabUnsupported": "was not converted by fxlab, so whether SuperKernel can fuse it is unknown",
    "IncreFlashAttention": "is fused only when its tiling is sunk to the device; otherwise it cuts the scope",
    "FusedInferAttentionScore": "is fused only when its tiling is sunk to the device; otherwise it cuts the scope",
}


def unfusable_reason(op_type: str) -> str | None:
    """Why GE's SuperKernel pass cuts a scope at an op of ``op_type`` (``None``: fusable
    as far as fxlab knows -- GE decides by the kernel's ``supportSuperKernel`` attr)."""
    if op_type in UNFUSABLE_OP_TYPES:
        return UNFUSABLE_OP_TYPES[op_type]
    if op_type.startswith("Hcom") and op_type not in FUSABLE_COLLECTIVES:
        return "SuperKernel fuses only the AllReduce, ReduceScatter, AllGather and AlltoAll collectives"
    return None


def maybe_unfusable_reason(op_type: str) -> str | None:
    return MAYBE_UNFUSABLE_OP_TYPES.get(op_type)


@dataclass
class GlobalCoreLimit:
    """``ge_config.aicore_num = "A|V"``, and where it came from."""

    aicore: int
    vectorcore: int
    origin: str

    def to_json(self) -> dict[str, Any]:
        return {"aicore": self.aicore, "vectorcore": self.vectorcore, "origin": self.origin}


@dataclass
class ScopeOp:
    name: str
    type: str
    fx_node: str | None
    source: str | None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "fx_node": self.fx_node, "source": self.source}


@dataclass
class SegmentBreak:
    """An op that cuts a SuperKernel scope. ``kind``: ``outside`` (in no scope),
    ``other_scope`` or ``unfusable``."""

    op: ScopeOp
    kind: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": "break", "op": self.op.to_json(), "cause": self.kind, "reason": self.reason}


@dataclass
class Segment:
    """Consecutive ops GE fuses into one SuperKernel."""

    ops: list[ScopeOp]

    def to_json(self) -> dict[str, Any]:
        return {"kind": "segment", "ops": [op.name for op in self.ops]}


@dataclass
class SuperKernelScope:
    graph: int
    name: str
    stream: str
    options: SuperKernelOptions
    ops: list[ScopeOp] = field(default_factory=list)
    timeline: list[Segment | SegmentBreak] = field(default_factory=list)

    @property
    def segments(self) -> list[Segment]:
        return [item for item in self.timeline if isinstance(item, Segment)]

    @property
    def breaks(self) -> list[SegmentBreak]:
        return [item for item in self.timeline if isinstance(item, SegmentBreak)]

    def to_json(self) -> dict[str, Any]:
        return {
            "graph": self.graph,
            "name": self.name,
            "stream": self.stream,
            "options": self.options.to_json(),
            "ops": [op.to_json() for op in self.ops],
            "timeline": [item.to_json() for item in self.timeline],
        }


@dataclass
class OpCoreLimit:
    """The core limit one GE op runs with, and which setting decided it."""

    graph: int
    op: ScopeOp
    op_level: tuple[str, str] | None
    aicore: str
    vectorcore: str
    winner: str  # "op-level" | "global" | "SoC default"

    def to_json(self) -> dict[str, Any]:
        op_level = list(self.op_level) if self.op_level else None
        return {
            "graph": self.graph,
            "op": self.op.to_json(),
            "op_level": op_level,
            "aicore": self.aicore,
            "vectorcore": self.vectorcore,
            "winner": self.winner,
        }


@dataclass
class ScopeReport:
    soc: SocInfo | None
    global_limit: GlobalCoreLimit | None
    graphs: list[GraphScopes] = field(default_factory=list)
    super_kernels: list[SuperKernelScope] = field(default_factory=list)
    core_limits: list[OpCoreLimit] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    ops_under_global_limit: int = 0
    empty_scopes: list[EmptyScope] = field(default_factory=list)  # scopes no GE op carries

    @property
    def has_errors(self) -> bool:
        return any(f.severity == "error" for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {
            "soc": self.soc.to_json() if self.soc else None,
            "global_limit": self.global_limit.to_json() if self.global_limit else None,
            "graphs": [g.to_json() for g in self.graphs],
            "super_kernels": [sk.to_json() for sk in self.super_kernels],
            "core_limits": [row.to_json() for row in self.core_limits],
            "ops_under_global_limit": self.ops_under_global_limit,
            "empty_scopes": [e.to_json() for e in self.empty_scopes],
            "findings": [f.to_json() for f in self.findings],
        }


@dataclass
class GraphInput:
    """What the report needs of one Dynamo graph: an FX stage with the scope markers
    (``functional`` preferred) and its Ascend IR when converted."""

    index: int
    gm: fx.GraphModule | None
    ir: IrGraph | None = None
    break_reason: str | None = None


# -- entry points -------------------------------------------------------------------------
def build_scope_report(
    graphs: Sequence[GraphInput], soc: SocInfo | None = None, global_limit: GlobalCoreLimit | None = None
) -> ScopeReport:
    report = ScopeReport(soc=soc, global_limit=global_limit)
    _check_global_limit(report)
    for graph in graphs:
        scopes = graph_scopes(graph.index, graph.gm, graph.break_reason)
        report.graphs.append(scopes)
        if graph.ir is not None:
            _analyse_ir(report, graph.index, graph.ir, scopes.dynamic)
        empty, findings = empty_scope_findings(scopes, _covered_by(report, graph.index), soc)
        report.empty_scopes += empty
        report.findings += findings
    report.findings += pairing_findings(report.graphs)
    return report


def _covered_by(report: ScopeReport, index: int) -> Callable[[ScopeSpan], bool]:
    """Whether GE ops of graph ``index`` carry a scope (the IR level checked it then)."""
    names = {sk.name for sk in report.super_kernels if sk.graph == index}
    limits = {row.op_level for row in report.core_limits if row.graph == index}

    def covered(span: ScopeSpan) -> bool:
        if span.attrs.get(SUPER_KERNEL_SCOPE):
            return span.attrs[SUPER_KERNEL_SCOPE] in names
        return (span.attrs.get(OP_AICORE_NUM, "None"), span.attrs.get(OP_VECTORCORE_NUM, "None")) in limits

    return covered


def report_for_trace(captured: Any, soc: SocInfo | None = None, global_limit: GlobalCoreLimit | None = None) -> ScopeReport:
    """:func:`build_scope_report` over a capture (its trace's IR, its live graph modules)."""
    return build_scope_report(_graph_inputs(captured), soc, global_limit)


def graph_break_in_scopes(captured: Any) -> Finding | None:
    """A graph break inside a scope, in a capture of any mode (see :func:`graph_break_in_scope`)."""
    return graph_break_in_scope([graph_scopes(g.index, g.gm, g.break_reason) for g in _graph_inputs(captured)])


def _graph_inputs(captured: Any) -> list[GraphInput]:
    inputs = []
    for graph, live in zip(captured.trace.graphs, captured.graphs):
        gm = live.modules.get(FUNCTIONAL) or live.modules.get(DYNAMO)
        inputs.append(GraphInput(graph.index, gm, graph.ir, graph.break_reason))
    return inputs


def global_limit_of(module: Any) -> tuple[str, str] | None:
    """``(value, where)`` of ``ge_config.aicore_num`` set on a CompilerConfig at module
    level of the user's model file (``compiler_config`` first, then any other)."""
    if module is None:
        return None
    names = ["compiler_config"] + sorted(n for n in vars(module) if n != "compiler_config")
    for name in names:
        value = getattr(getattr(getattr(module, name, None), "ge_config", None), "aicore_num", None)
        if isinstance(value, str) and value.strip():
            return value, f"{name}.ge_config.aicore_num in the model file"
    return None


# -- IR level: SuperKernel scopes ---------------------------------------------------------
def _scope_op(op: IrOp) -> ScopeOp:
    return ScopeOp(op.name, op.type, op.fx_node, op.source)


def _sk_name(op: IrOp) -> str | None:
    value = op.attr_value(SUPER_KERNEL_SCOPE)
    return value if isinstance(value, str) and value else None


def _analyse_ir(report: ScopeReport, index: int, ir: IrGraph, dynamic: bool) -> None:
    compute = [op for op in ir.ops if op.type not in IGNORED_OP_TYPES]
    streams: dict[str, list[IrOp]] = {}
    for op in compute:
        streams.setdefault(str(op.attr_value(USER_STREAM_LABEL, "")), []).append(op)
    for stream, ops in streams.items():
        for name in _ordered_names(_sk_name(op) for op in ops):
            scope = _super_kernel_scope(report, index, name, stream, ops)
            report.super_kernels.append(scope)
            if dynamic:
                report.findings.append(
                    Finding(
                        "warning",
                        "dynamic-shapes",
                        f"SuperKernel scope {name!r} is in graph {index}, which has dynamic shapes: "
                        "SuperKernel fuses static graphs only (GE skips the fusion). Compile with dynamic=False or mark the shapes static.",
                        index,
                        name,
                    )
                )
    _core_limits(report, index, compute)


def _ordered_names(names: Iterable[str | None]) -> list[str]:
    seen: dict[str, None] = {}
    for name in names:
        if name is not None:
            seen.setdefault(name, None)
    return list(seen)


def _super_kernel_scope(report: ScopeReport, index: int, name: str, stream: str, ops: list[IrOp]) -> SuperKernelScope:
    members = [op for op in ops if _sk_name(op) == name]
    options_text = str(members[0].attr_value(SUPER_KERNEL_OPTIONS, ""))
    options = parse_super_kernel_options(options_text, report.soc)
    scope = SuperKernelScope(index, name, stream, options, [_scope_op(op) for op in members])
    for error in options.errors:
        report.findings.append(Finding("error", "bad-option", f"SuperKernel scope {name!r}: {error}", index, name))
    others = {str(op.attr_value(SUPER_KERNEL_OPTIONS, "")) for op in members} - {options_text}
    if others:
        report.findings.append(
            Finding(
                "warning",
                "mixed-options",
                f"SuperKernel scope {name!r} has ops with different options: {sorted(others | {options_text})}; GE reads them per op.",
                index,
                name,
            )
        )
    first, last = ops.index(members[0]), ops.index(members[-1])
    scope.timeline = _timeline(name, ops[first : last + 1])
    _check_breaks(report, scope)
    _check_debug_core_nums(report, scope, members)
    return scope


def _timeline(name: str, window: list[IrOp]) -> list[Segment | SegmentBreak]:
    timeline: list[Segment | SegmentBreak] = []
    current: list[ScopeOp] = []
    for op in window:
        cut = _cut_of(name, op)
        if cut is None:
            current.append(_scope_op(op))
            continue
        if current:
            timeline.append(Segment(current))
            current = []
        timeline.append(cut)
    if current:
        timeline.append(Segment(current))
    return timeline


def _cut_of(name: str, op: IrOp) -> SegmentBreak | None:
    scope = _sk_name(op)
    if scope is None:
        return SegmentBreak(_scope_op(op), "outside", f"{op.name} ({op.type}) is in no SuperKernel scope but runs between the scope's ops")
    if scope != name:
        return SegmentBreak(_scope_op(op), "other_scope", f"{op.name} ({op.type}) belongs to SuperKernel scope {scope!r}")
    reason = unfusable_reason(op.type)
    if reason is not None:
        return SegmentBreak(_scope_op(op), "unfusable", f"{op.type} cannot be fused: {reason}")
    return None


def _check_breaks(report: ScopeReport, scope: SuperKernelScope) -> None:
    for op in scope.ops:
        remark = maybe_unfusable_reason(op.type)
        if remark is not None:
            report.findings.append(
                Finding("info", "maybe-unfusable", f"SuperKernel scope {scope.name!r}: {op.type} {op.name} {remark}", scope.graph, op.name)
            )
    if not scope.breaks:
        return
    check = scope.options.values.get("strict-scope-check")
    first = scope.breaks[0]
    parts = len(scope.segments)
    if check == "abort":
        message = f"SuperKernel scope {scope.name!r} is cut ({first.reason}); with strict-scope-check=abort GE fails the compile."
        report.findings.append(Finding("error", "scope-split", message, scope.graph, first.op.name))
    elif check == "bypass":
        message = (
            f"SuperKernel scope {scope.name!r} is cut ({first.reason}); with strict-scope-check=bypass GE does not fuse this scope at all."
        )
        report.findings.append(Finding("warning", "scope-split", message, scope.graph, first.op.name))
    else:
        causes = "; ".join(b.reason for b in scope.breaks)
        message = f"SuperKernel scope {scope.name!r} splits into {parts} SuperKernel(s): {causes}."
        report.findings.append(Finding("warning", "scope-split", message, scope.graph, first.op.name))


def _check_debug_core_nums(report: ScopeReport, scope: SuperKernelScope, members: list[IrOp]) -> None:
    for option, attr in (("debug-aic-num", OP_AICORE_NUM), ("debug-aiv-num", OP_VECTORCORE_NUM)):
        wanted = scope.options.values.get(option)
        if wanted is None or not wanted.isdigit():
            continue
        limits = [int(v) for v in (str(op.attr_value(attr, "")) for op in members) if v.isdigit()]
        if limits and int(wanted) > min(limits):
            message = f"SuperKernel scope {scope.name!r}: {option}={wanted} exceeds the limit_core_num of ops inside ({min(limits)}); the op-level limit caps it."
            report.findings.append(Finding("warning", "debug-core-num", message, scope.graph, scope.name))


# -- IR level: core limits ----------------------------------------------------------------
def _check_global_limit(report: ScopeReport) -> None:
    limit = report.global_limit
    if limit is None:
        return
    for kind, value in (("aicore", limit.aicore), ("vectorcore", limit.vectorcore)):
        problem = check_core_count(str(value), kind, report.soc)
        if problem is not None:
            report.findings.append(Finding("error", "bad-core-limit", f"global aicore_num ({limit.origin}): {problem}", None, limit.origin))


def _core_limits(report: ScopeReport, index: int, ops: list[IrOp]) -> None:
    for op in ops:
        aicore, vectorcore = op.attr_value(OP_AICORE_NUM), op.attr_value(OP_VECTORCORE_NUM)
        if aicore is None and vectorcore is None:
            if report.global_limit is not None:
                report.ops_under_global_limit += 1
            continue
        row = _limit_row(report, index, op, aicore, vectorcore)
        report.core_limits.append(row)
        for kind, value in (("aicore", aicore), ("vectorcore", vectorcore)):
            if value is None:
                continue
            problem = check_core_count(str(value), kind, report.soc)
            if problem is not None:
                report.findings.append(
                    Finding(
                        "error",
                        "bad-core-limit",
                        f"{op.type} {op.name} (limit_core_num at {op.source or op.fx_node}): {problem}",
                        index,
                        op.name,
                    )
                )


def _limit_row(report: ScopeReport, index: int, op: IrOp, aicore: Any, vectorcore: Any) -> OpCoreLimit:
    """Op-level values win over the global ones (TorchAir, max-autotune); a key the op
    lacks falls back to the global value, then to all cores of the SoC."""
    effective = [
        _fallback(report, kind) if value is None else str(value) for value, kind in ((aicore, "aicore"), (vectorcore, "vectorcore"))
    ]
    return OpCoreLimit(index, _scope_op(op), (str(aicore), str(vectorcore)), effective[0], effective[1], "op-level")


def _fallback(report: ScopeReport, kind: str) -> str:
    if report.global_limit is not None:
        return str(report.global_limit.aicore if kind == "aicore" else report.global_limit.vectorcore)
    if report.soc is not None:
        return str(report.soc.ai_core_cnt if kind == "aicore" else report.soc.vector_core_cnt)
    return "all"
