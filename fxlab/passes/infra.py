"""One shape for every pass, and the small manager that runs a list of them.

A pass takes a graph (an ``fx.GraphModule`` or an :class:`fxlab.ir.model.IrGraph`) and
returns a :class:`PassResult`: the graph it leaves (usually the same object, changed in
place), whether it changed anything, and what: the node (or GE op) names it removed and
added, and notes in words. :class:`PassManager` runs passes in order, as
``torch.fx.passes.infra.pass_manager.PassManager`` does, and after each one lints the graph
(``fx.Graph.lint`` for FX graphs, or the check it is given) and keeps a :class:`PassRecord`
of what the pass did, so a user sees each pass's work node by node.

The added and removed names are found by the manager (names before and after), so a pass
need only say whether it changed the graph; a pass that knows more (a rewrite that keeps
node names but changes their targets) lists the nodes it touched in ``changed_nodes``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import torch.fx as fx

G = TypeVar("G")


@dataclass
class PassResult(Generic[G]):
    """What one pass did: the graph after it, whether it changed, and how."""

    graph: G
    changed: bool
    changed_nodes: list[str] = field(default_factory=list)  # kept names whose node was rewritten
    notes: list[str] = field(default_factory=list)


@dataclass
class PassRecord:
    """One pass's entry in a stage's pass list (saved in the trace as JSON)."""

    name: str
    changed: bool
    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    changed_nodes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    origin: str = "torchair"  # "torchair" (a pass TorchAir runs) or "user" (a user's pass)

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {"pass": self.name, "changed": self.changed, "removed": list(self.removed), "added": list(self.added)}
        if self.changed_nodes:
            record["changed_nodes"] = list(self.changed_nodes)
        if self.notes:
            record["notes"] = list(self.notes)
        if self.origin != "torchair":
            record["origin"] = self.origin
        return record

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PassRecord:
        return cls(
            name=str(data["pass"]),
            changed=bool(data["changed"]),
            removed=list(data.get("removed", [])),
            added=list(data.get("added", [])),
            changed_nodes=list(data.get("changed_nodes", [])),
            notes=list(data.get("notes", [])),
            origin=str(data.get("origin", "torchair")),
        )


PassFn = Callable[[G], PassResult[G]]


@dataclass(frozen=True)
class NamedPass(Generic[G]):
    """A pass as the manager runs it: its name in the records, the function, and who wrote it."""

    name: str
    fn: Callable[[G], PassResult[G]]
    origin: str = "torchair"


class PassError(Exception):
    """A pass's failure said in full by the pass (shown as it is, not prefixed with its
    exception type)."""


class PassFailedError(RuntimeError):
    """A pass raised, or left a graph its lint rejects; names the pass."""

    def __init__(self, pass_name: str, origin: str, cause: BaseException) -> None:
        who = "the user's pass" if origin == "user" else "the pass"
        what = str(cause) if isinstance(cause, PassError) else f"{type(cause).__name__}: {cause}"
        super().__init__(f"{who} {pass_name} failed: {what}")
        self.pass_name = pass_name
        self.origin = origin


def node_names(graph: Any) -> list[str]:
    """The names a record compares: FX node names, or GE op names."""
    if isinstance(graph, fx.GraphModule):
        return [node.name for node in graph.graph.nodes]
    return [op.name for op in graph.ops]


def lint_fx(gm: fx.GraphModule) -> None:
    """FX's own well-formedness check (every use defined before it, one output)."""
    gm.graph.lint()


class PassManager(Generic[G]):
    """Run passes in order, lint after each that changed the graph, and record what each did."""

    def __init__(self, passes: Iterable[NamedPass[G]], lint: Callable[[G], None] | None = lint_fx) -> None:  # type: ignore[assignment]
        self.passes: list[NamedPass[G]] = list(passes)
        self.lint = lint

    def run(self, graph: G, after_each: Callable[[str, G], None] | None = None) -> tuple[G, list[PassRecord]]:
        """``after_each(name, graph)`` sees the graph after each pass (to keep a copy)."""
        records: list[PassRecord] = []
        for step in self.passes:
            graph, record = self._run_one(step, graph)
            records.append(record)
            if after_each is not None:
                after_each(step.name, graph)
        return graph, records

    def _run_one(self, step: NamedPass[G], graph: G) -> tuple[G, PassRecord]:
        before = node_names(graph)
        sources = node_sources(graph)
        try:
            result = step.fn(graph)
            if not isinstance(result, PassResult):
                raise TypeError(f"returned {type(result).__name__}, not a PassResult")
            after = node_names(result.graph)
            removed, added = _difference(before, after), _difference(after, before)
            changed = bool(result.changed or removed or added)
            # A graph the pass left as it was is the one linted after the last pass that changed it.
            if (changed or result.graph is not graph) and self.lint is not None:
                self.lint(result.graph)
        except Exception as exc:
            raise PassFailedError(step.name, step.origin, exc) from exc
        keep_sources(result.graph, sources)
        return result.graph, PassRecord(step.name, changed, removed, added, list(result.changed_nodes), list(result.notes), step.origin)


# Where a node came from in the user's code and model (``fxlab.source``: its cached
# ``file:line``). A pass may rewrite a node (its target, its arguments), never its origin:
# Inductor's ``decompose_auto_functionalized`` hands a custom op's base the meta of the
# getitem it replaces, which would list ``h = x * 2`` under the next statement.
SOURCE_META = ("stack_trace", "nn_module_stack", "source_fn_stack", "fxlab.source")


def node_sources(graph: Any) -> dict[fx.Node, dict[str, Any]]:
    """Each node's origin meta, by node (FX graphs only; empty for other graphs)."""
    if not isinstance(graph, fx.GraphModule):
        return {}
    return {node: {key: node.meta[key] for key in SOURCE_META if key in node.meta} for node in graph.graph.nodes}


def keep_sources(graph: Any, sources: dict[fx.Node, dict[str, Any]]) -> None:
    """Give each node still in ``graph`` the origin it had before the pass."""
    if not isinstance(graph, fx.GraphModule):
        return
    for node in graph.graph.nodes:
        kept = sources.get(node)
        if kept is None:
            continue
        for key in SOURCE_META:
            if key in kept:
                node.meta[key] = kept[key]
            else:
                node.meta.pop(key, None)


def _difference(names: Sequence[str], others: Sequence[str]) -> list[str]:
    """``names`` not in ``others``, in ``names``' order."""
    taken = set(others)
    return [name for name in names if name not in taken]
