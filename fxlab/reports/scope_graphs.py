"""Each graph's scopes at the FX level, checked as TorchAir checks them: graph by graph.

TorchAir pairs the ``air::scope_enter`` / ``scope_exit`` markers of each graph on its own
(``_valid_graph`` in its ``npu_fx_compiler.py``, run on every graph before conversion): a
scope_enter with no scope_exit after it in the same graph, or a scope_exit with no
scope_enter before it, fails the compile with a ``RuntimeError``. No scope carries over
from one graph to the next.

A graph break inside a ``with torchair.scope...`` block gives exactly such graphs: Dynamo
cannot resume inside a user context manager, so it runs the function holding the ``with``
eagerly from that ``with`` on (what comes before it compiles as usual; the ops in the
block are in no graph, none in a SuperKernel or under a core limit) and compiles the
scope's ``__enter__`` / ``__exit__`` alone, a graph each, holding only a marker (the
marker's line is the model's ``with``: :mod:`fxlab.capture.scope_frames`).

A scope that covers no GE op (all of those, and an empty one) is still checked: its
SuperKernel options and its core counts, as the IR-level report checks the scopes whose
ops carry them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Sequence

import torch
import torch.fx as fx

from fxlab.passes.annotate_scopes import ScopeAnnotation, ScopeSpan, annotate_scopes, is_scope_enter, is_scope_exit
from fxlab.passes.torchair_refusals import UNCLOSED_SCOPE_ERROR, UNOPENED_SCOPE_ERROR
from fxlab.reports.superkernel_options import parse_super_kernel_options
from fxlab.scope import OP_AICORE_NUM, OP_VECTORCORE_NUM, SUPER_KERNEL_OPTIONS, SUPER_KERNEL_SCOPE
from fxlab.socs import SocInfo, check_core_count
from fxlab.source_lines import node_source


@dataclass
class Finding:
    """One problem or remark. ``severity``: ``error`` (GE/TorchAir will fail or ignore
    the setting), ``warning`` (likely not what was meant) or ``info``."""

    severity: str
    code: str
    message: str
    graph: int | None = None
    where: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"severity": self.severity, "code": self.code, "message": self.message, "graph": self.graph, "where": self.where}


@dataclass
class GraphScopes:
    """FX-level view of one graph's scopes: each scope_enter's and scope_exit's model
    line, and whether the graph holds nothing but markers."""

    index: int
    dynamic: bool
    annotation: ScopeAnnotation
    enter_sources: dict[str, str | None] = field(default_factory=dict)
    break_reason: str | None = None
    exit_sources: dict[str, str | None] = field(default_factory=dict)
    markers_only: bool = False

    def where(self, marker: str) -> str:
        return self.enter_sources.get(marker) or self.exit_sources.get(marker) or marker

    def to_json(self) -> dict[str, Any]:
        spans = []
        for span in self.annotation.spans:
            data = span.to_json()
            data["source"] = self.enter_sources.get(span.enter)
            spans.append(data)
        return {
            "index": self.index,
            "dynamic": self.dynamic,
            "break_reason": self.break_reason,
            "scopes": spans,
            "balanced": self.annotation.balanced,
            "markers_only": self.markers_only,
        }


@dataclass
class EmptyScope:
    """A scope of one graph that no GE op carries: opened (and maybe closed) there with no
    op converted inside, as the scopes a graph break leaves."""

    graph: int
    scope: str
    attrs: dict[str, str]
    opened_at: str
    closed: bool

    def to_json(self) -> dict[str, Any]:
        return {"graph": self.graph, "scope": self.scope, "attrs": dict(self.attrs), "opened_at": self.opened_at, "closed": self.closed}


def graph_scopes(index: int, gm: fx.GraphModule | None, break_reason: str | None = None) -> GraphScopes:
    if gm is None:
        return GraphScopes(index, False, ScopeAnnotation(), break_reason=break_reason)
    annotation = annotate_scopes(gm)
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    enters = {n.name: node_source(n) for n in calls if is_scope_enter(n)}
    exits = {n.name: node_source(n) for n in calls if is_scope_exit(n)}
    markers_only = bool(calls) and len(enters) + len(exits) == len(calls)
    return GraphScopes(index, _is_dynamic(gm), annotation, enters, break_reason, exits, markers_only)


def _is_dynamic(gm: fx.GraphModule) -> bool:
    for node in gm.graph.nodes:
        if node.op != "placeholder":
            continue
        val = node.meta.get("val", node.meta.get("example_value"))
        if isinstance(val, torch.SymInt):
            return True
        if isinstance(val, torch.Tensor) and any(not isinstance(d, int) for d in val.shape):
            return True
    return False


def describe_attrs(attrs: dict[str, str]) -> str:
    if SUPER_KERNEL_SCOPE in attrs:
        return f"super_kernel({attrs[SUPER_KERNEL_SCOPE]!r})"
    if OP_AICORE_NUM in attrs:
        return f"limit_core_num({attrs.get(OP_AICORE_NUM)}, {attrs.get(OP_VECTORCORE_NUM)})"
    return "{" + ", ".join(f"{k}={v}" for k, v in attrs.items()) + "}"


# -- pairing, graph by graph ---------------------------------------------------------------
def pairing_findings(graphs: Sequence[GraphScopes]) -> list[Finding]:
    """An error per unpaired marker of each graph, as TorchAir fails the compile on it,
    and one explaining the graph break when the unpaired markers stand alone."""
    findings: list[Finding] = []
    for scopes in graphs:
        for span in scopes.annotation.unclosed:
            where = scopes.where(span.enter)
            message = (
                f"{describe_attrs(span.attrs)} opened at {where} has no scope_exit in graph {scopes.index}: TorchAir pairs each "
                f'graph\'s scope markers on their own and fails the compile ("{UNCLOSED_SCOPE_ERROR}").'
            )
            findings.append(Finding("error", "unbalanced-scope", message, scopes.index, where))
        for exit_node in scopes.annotation.unmatched_exits:
            where = scopes.where(exit_node)
            message = (
                f"the scope_exit at {where} has no scope_enter before it in graph {scopes.index}: TorchAir pairs each graph's "
                f'scope markers on their own and fails the compile ("{UNOPENED_SCOPE_ERROR}").'
            )
            findings.append(Finding("error", "unbalanced-scope", message, scopes.index, where))
    broken = graph_break_in_scope(graphs)
    return findings + ([broken] if broken else [])


def graph_break_in_scope(graphs: Sequence[GraphScopes]) -> Finding | None:
    """The error explaining a graph break inside a scope, when some graphs hold nothing but
    unpaired scope markers (the enter and exit calls Dynamo compiled alone); else None."""
    alone = [scopes for scopes in graphs if scopes.markers_only and not scopes.annotation.balanced]
    return _graph_break_finding(alone) if alone else None


def _graph_break_finding(alone: Sequence[GraphScopes]) -> Finding:
    lines = sorted({s.where(m) for s in alone for m in [*s.enter_sources, *s.exit_sources]})
    numbers = ", ".join(str(s.index) for s in alone)
    message = (
        f"Dynamo did not trace the `with` block(s) at {', '.join(lines)}: a graph break inside a torchair.scope block "
        "(Dynamo cannot resume inside a user context manager) makes it run the function eagerly from that `with` on (what "
        "comes before it compiles as usual), so the ops inside the scopes are in no graph, and no SuperKernel, core limit or "
        "stream switch applies to them. Only "
        f"the scopes' own enter and exit calls were compiled, each a graph of its own (graph(s) {numbers}), which TorchAir "
        "refuses. Move the graph break (an .item(), a print, a data-dependent branch) out of the block."
    )
    return Finding("error", "graph-break-in-scope", message, alone[0].index, lines[0] if lines else None)


# -- scopes no GE op carries ---------------------------------------------------------------
def empty_scope_findings(
    scopes: GraphScopes, covered: Callable[[ScopeSpan], bool], soc: SocInfo | None
) -> tuple[list[EmptyScope], list[Finding]]:
    """The scopes of the graph that ``covered`` says no GE op carries, and what is wrong
    with their SuperKernel options and core counts."""
    empty: list[EmptyScope] = []
    findings: list[Finding] = []
    for span in scopes.annotation.spans:
        if covered(span) or not _checked_attrs(span.attrs):
            continue
        where = scopes.where(span.enter)
        empty.append(EmptyScope(scopes.index, describe_attrs(span.attrs), dict(span.attrs), where, span.exit is not None))
        findings += _span_findings(span, scopes.index, where, soc)
    return empty, findings


def _checked_attrs(attrs: dict[str, str]) -> bool:
    return bool(attrs.get(SUPER_KERNEL_SCOPE)) or OP_AICORE_NUM in attrs or OP_VECTORCORE_NUM in attrs


def _span_findings(span: ScopeSpan, index: int, where: str, soc: SocInfo | None) -> list[Finding]:
    attrs = span.attrs
    findings = []
    if attrs.get(SUPER_KERNEL_SCOPE):
        options = parse_super_kernel_options(attrs.get(SUPER_KERNEL_OPTIONS, ""), soc)
        name = attrs[SUPER_KERNEL_SCOPE]
        findings += [
            Finding("error", "bad-option", f"SuperKernel scope {name!r} (opened at {where}): {e}", index, name) for e in options.errors
        ]
    for key, kind in ((OP_AICORE_NUM, "aicore"), (OP_VECTORCORE_NUM, "vectorcore")):
        problem = check_core_count(attrs[key], kind, soc) if key in attrs else None
        if problem is not None:
            findings.append(Finding("error", "bad-core-limit", f"{describe_attrs(attrs)} at {where}: {problem}", index, where))
    return findings
