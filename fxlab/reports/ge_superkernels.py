"""The SuperKernel scopes fxlab predicted (``fxlab scopes``: each scope's segments, from the
Ascend IR) against the ``sk_*`` ops GE made (its dumps after the SuperKernel pass): which
segments GE fused as one SuperKernel, where GE cut one, and why when the dump says so (the
ops on either side of the cut run on different stream labels or core limits).

A predicted segment is a list of TorchAir's GE op names; a SuperKernel op holds the
TorchAir ops among its members' originals. Ops GE does not put into SuperKernels (Const,
Data) are left out of the comparison."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fxlab.npu_dumps.dump_model import DumpGraph, DumpOp
from fxlab.npu_dumps.names import SUPER_KERNEL_TYPE
from fxlab.reports.scope_report import ScopeReport

NOT_FUSED_TYPES = ("Const", "Constant", "Data", "NetOutput")


@dataclass
class SegmentVerdict:
    """One predicted segment of one scope, against GE's SuperKernel ops."""

    graph: int
    scope: str
    segment: int  # 1-based, as `fxlab scopes` numbers them
    predicted: list[str]
    super_kernels: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)  # predicted ops GE fused into no SuperKernel
    cuts: list[str] = field(default_factory=list)  # where and why GE cut the segment

    @property
    def as_predicted(self) -> bool:
        return len(self.super_kernels) == 1 and not self.outside

    def to_json(self) -> dict[str, Any]:
        return {
            "graph": self.graph,
            "scope": self.scope,
            "segment": self.segment,
            "predicted": list(self.predicted),
            "super_kernels": list(self.super_kernels),
            "outside": list(self.outside),
            "cuts": list(self.cuts),
            "as_predicted": self.as_predicted,
        }


def members_by_super_kernel(graphs: Sequence[DumpGraph]) -> dict[str, list[DumpOp]]:
    """SuperKernel op name -> its member ops (from the sub-graph dumps), in order."""
    members: dict[str, list[DumpOp]] = {}
    for graph in graphs:
        for op in graph.ops:
            if op.super_kernel_parent:
                members.setdefault(op.super_kernel_parent, []).append(op)
    return members


def compare_super_kernels(
    report: ScopeReport, graph_index: int, ge_graph: DumpGraph, every_graph: Sequence[DumpGraph]
) -> list[SegmentVerdict]:
    """Each predicted segment of graph ``graph_index``'s scopes against the SuperKernel
    ops of ``ge_graph`` (members read from ``every_graph``'s sub-graph dumps)."""
    members = members_by_super_kernel(every_graph)
    holder: dict[str, str] = {}
    for op in ge_graph.ops:
        if op.type == SUPER_KERNEL_TYPE:
            for name in op.originals:
                holder.setdefault(name, op.name)
    by_name = {op.name: op for g in every_graph for op in g.ops if not op.super_kernel_members}
    by_name.update((op.name, op) for op in ge_graph.ops)  # the phase compared says last
    unlisted = [op.name for op in ge_graph.ops if op.type == SUPER_KERNEL_TYPE and op.name not in members]
    verdicts = []
    for scope in report.super_kernels:
        if scope.graph != graph_index:
            continue
        for number, segment in enumerate(scope.segments, start=1):
            predicted = [op.name for op in segment.ops if op.type not in NOT_FUSED_TYPES]
            if predicted:
                verdicts.append(_verdict(graph_index, scope.name, number, predicted, holder, members, by_name, unlisted))
    return verdicts


def _verdict(
    graph: int,
    scope: str,
    number: int,
    predicted: list[str],
    holder: dict[str, str],
    members: dict[str, list[DumpOp]],
    by_name: dict[str, DumpOp],
    unlisted: Sequence[str] = (),
) -> SegmentVerdict:
    verdict = SegmentVerdict(graph, scope, number, predicted)
    for name in predicted:
        sk = holder.get(name)
        if sk is None:
            verdict.outside.append(name)
            verdict.cuts.append(_outside_reason(name, by_name.get(name), unlisted))
        elif sk not in verdict.super_kernels:
            verdict.super_kernels.append(sk)
    for left, right in zip(verdict.super_kernels, verdict.super_kernels[1:]):
        verdict.cuts.append(_cut_reason(left, right, members))
    return verdict


def _outside_reason(name: str, op: DumpOp | None, unlisted: Sequence[str] = ()) -> str:
    if op is not None and op.supports_super_kernel == 0:
        return f"{name} is in no SuperKernel: the dump marks it supportSuperKernel=0 (a kernel that cannot join one)"
    if unlisted:  # their super_kernel_sub_graph dumps were not given
        return f"{name} is in no SuperKernel the dumps list the members of; it may be in {', '.join(unlisted)}, whose sub-graph dump is missing"
    return f"{name} is in no SuperKernel; the dump does not say why"


def _cut_reason(left: str, right: str, members: dict[str, list[DumpOp]]) -> str:
    """Why GE put the ops on either side into two SuperKernels, when their attrs differ."""
    before = members.get(left, [])
    after = members.get(right, [])
    where = f"GE cut between {left} and {right}"
    if not before or not after:
        return f"{where}; no sub-graph dump of their members says why"
    last, first = before[-1], after[0]
    if (last.stream_label or "") != (first.stream_label or ""):
        return f"{where}: {last.name} runs on stream label {last.stream_label or '(default)'}, {first.name} on {first.stream_label or '(default)'}"
    if last.core_limit != first.core_limit:
        return f"{where}: {last.name} has core limit {last.core_limit or '(none)'}, {first.name} {first.core_limit or '(none)'}"
    return f"{where}; the dump does not say why (same stream label and core limit)"
