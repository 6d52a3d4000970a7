"""fxlab's built-in conversion against TorchAir's own, on every example.

Each example is captured once (as ``fxlab trace`` captures it: inside the compat layer,
with one TorchAir session for the whole module); each graph is converted both ways —
fxlab's ``pre_ge`` module by the built-in converters, the ``functional`` module by
TorchAir's own passes and converters — and diffed op by op. Every difference must be explained by a row of
the table in docs/torchair-differences.md (kind, GE op type, detail, reason): a new
difference fails the test, and so does a row no example needs any more.
"""
from __future__ import annotations

from tests.conftest import torchair_session

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fxlab.compat.bridge import run_torchair_conversion
from fxlab.ir.model import IrGraph
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.diff.ir_diff import IrDiff, diff_ir
from fxlab.passes.ge_passes import ge_graph_passes
from fxlab.passes.torchair_options import to_torchair_config
from tests.sessions import open_capture

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.py"))
DIFFERENCES_DOC = ROOT / "docs" / "torchair-differences.md"
SEED_PLUGINS = ROOT / "tests" / "data" / "seed_plugins"
_ROW = re.compile(r"^\|\s*(D\d+)\s*\|\s*(\w+)\s*\|\s*`([^`]*)`\s*\|\s*`([^`]*)`\s*\|\s*(.+?)\s*\|\s*$")


@dataclass(frozen=True)
class Row:
    """One listed difference: ``kind`` exactly, ``op_type`` a full-match pattern,
    ``detail`` a search pattern."""

    id: str
    kind: str
    op_type: str
    detail: str
    reason: str

    def explains(self, issue: "Issue") -> bool:
        return self.kind == issue.kind and re.fullmatch(self.op_type, issue.op_type) is not None and re.search(self.detail, issue.detail) is not None


@dataclass(frozen=True)
class Issue:
    """One difference found: what kind, on which GE op type, with what detail."""

    kind: str
    op_type: str
    detail: str
    where: str


def listed_differences() -> list[Row]:
    lines = DIFFERENCES_DOC.read_text(encoding="utf-8").splitlines()
    # A pipe inside a table cell is written `\|` in Markdown.
    rows = [Row(*(g.replace("\\|", "|") for g in m.groups())) for line in lines if (m := _ROW.match(line))]
    assert rows, f"no difference rows (| D<n> | kind | `type` | `detail` | reason |) in {DIFFERENCES_DOC}"
    return rows


# -- classifying a diff ----------------------------------------------------------------------
class Classifier:
    """Turns an :class:`IrDiff` into :class:`Issue` s. ``targets`` maps FX node names to
    their op; ``views`` is TorchAir's own list of view ops it skips and rebuilds at
    their consumers (its view optimisation)."""

    def __init__(self, left: IrGraph, right: IrGraph, targets: dict[str, str], views: set[str]) -> None:
        self.targets, self.views = targets, views
        self.left_ops = {op.name: op for op in left.ops}
        self.right_ops = {op.name: op for op in right.ops}

    def node_detail(self, fx_node: str | None) -> str:
        target = self.targets.get(fx_node or "", "")
        return f"view node {target}" if target in self.views else target or "no fx node"

    def _from_view(self, ref: str | None, ops: dict[str, Any]) -> bool:
        op = ops.get((ref or "").rpartition(":")[0])
        return op is not None and (self.targets.get(op.fx_node or "", "") in self.views or op.type in ("Reshape", "Transpose"))

    def issues(self, diff: IrDiff) -> list[Issue]:
        found: list[Issue] = []
        for node in diff.nodes:
            detail = self.node_detail(node.fx_node)
            if node.moved:
                found.append(Issue("order", "", detail, node.fx_node))
            for op in node.ops:
                found.extend(self._op_issues(op, detail, node.fx_node))
        if diff.outputs[0] != diff.outputs[1]:
            found.append(Issue("graph_output", "", f"{diff.outputs[0]} vs {diff.outputs[1]}", "NetOutput"))
        found.extend(Issue("graph_attr", "", key, "graph") for key in diff.graph_attrs)
        return found

    def _op_issues(self, op: Any, detail: str, where: str) -> list[Issue]:
        if op.kind == "only_left":
            return [Issue("only_fxlab", op.left_type, detail, where)]
        if op.kind == "only_right":
            return [Issue("only_torchair", op.right_type, detail, where)]
        found = [Issue("order", op.left_type, detail, where)] if op.moved else []
        if op.left_type != op.right_type:
            found.append(Issue("type", f"{op.left_type}->{op.right_type}", detail, where))
        found.extend(Issue("attr", op.left_type, key, where) for key in op.attrs)
        for _, a, b in op.inputs:
            via_view = self._from_view(a, self.left_ops) or self._from_view(b, self.right_ops)
            found.append(Issue("input", op.left_type, "reads a view" if via_view else f"{a} vs {b}", where))
        for _, a, b in op.outputs:
            found.append(Issue("output", op.left_type, f"{(a or {}).get('dtype')}->{(b or {}).get('dtype')}", where))
        return found


# -- capture once, convert both ways -----------------------------------------------------------
@dataclass
class Comparison:
    example: str
    graph: int
    builtin: IrGraph
    torchair: IrGraph
    diff: IrDiff
    issues: list[Issue]
    statuses: dict[str, str]
    messages: dict[str, str]


@pytest.fixture(scope="module")
def torchair(torchair_path):
    yield from torchair_session(torchair_path)


def compare_example(torchair: Any, example: str, plugins: list[Path] | None = None, dynamic: bool = False) -> list[Comparison]:
    """Capture ``example`` (under ``examples/``; with ``dynamic``, compiled with
    ``dynamic=True``) and convert each graph both ways, the built-in first (TorchAir's
    walk may settle size symbols the graphs share). The capture is fxlab's own (its
    session, without TorchAir: the module's TorchAir session is already open)."""
    views = set(torchair.module("_ge_concrete_graph.continguous_utils").view_white_list)
    path = ROOT / "examples" / f"{example}.py"
    with open_capture(path, plugins=plugins or (), stages=("functional", "pre_ge"), verify=False, dynamic=dynamic) as captured:
        out = []
        for graph in captured.graphs:
            gm = graph.modules["functional"]
            builtin = convert_to_ascend_ir(graph.modules["pre_ge"], f"graph_{graph.index}").graph
            ge_graph_passes(builtin)
            # The model file's config (its custom passes) drives TorchAir as it drives fxlab.
            config = to_torchair_config(torchair.package, captured.options, flat=False)
            theirs = run_torchair_conversion(gm, f"graph_{graph.index}", torchair, config=config)
            diff = diff_ir(builtin, theirs.graph, left_label="ascend_ir", right_label="ascend_ir:torchair")
            targets = {n.name: str(n.target) for g in (gm, theirs.fx_graph) for n in g.graph.nodes if n.op == "call_function"}
            issues = Classifier(builtin, theirs.graph, targets, views).issues(diff)
            statuses = {r.node: r.status.value for r in theirs.nodes}
            messages = {r.node: r.message for r in theirs.nodes if r.message}
            out.append(Comparison(example, graph.index, builtin, theirs.graph, diff, issues, statuses, messages))
    return out


@pytest.fixture(scope="module")
def comparisons(torchair) -> dict[str, list[Comparison]]:
    return {example: compare_example(torchair, example) for example in EXAMPLES}


# -- the checks ---------------------------------------------------------------------------------
@pytest.mark.parametrize("example", EXAMPLES)
def test_every_difference_on_the_example_is_listed_with_its_reason(comparisons, example):
    rows = listed_differences()
    unexplained = [
        f"graph {c.graph}: {i.kind} {i.op_type} [{i.detail}] at {i.where}"
        for c in comparisons[example]
        for i in c.issues
        if not any(row.explains(i) for row in rows)
    ]
    assert not unexplained, "differences not listed in docs/torchair-differences.md:\n" + "\n".join(unexplained)


def test_every_listed_difference_still_occurs(comparisons):
    issues = [i for graphs in comparisons.values() for c in graphs for i in c.issues]
    unused = [row.id for row in listed_differences() if not any(row.explains(i) for i in issues)]
    assert not unused, f"rows of docs/torchair-differences.md no example shows any more: {unused}"


@pytest.mark.parametrize("example", EXAMPLES)
def test_both_conversions_make_the_same_ops_in_the_same_order(comparisons, example):
    """The same op types in the same order of creation, views included (apart from the
    custom op TorchAir needs the user's converter for, D6)."""
    unconverted = {"FxlabUnsupported", "AddCustom"}
    for c in comparisons[example]:
        left = [t for t in c.builtin.types if t not in unconverted]
        right = [t for t in c.torchair.types if t not in unconverted]
        assert left == right, (c.graph, left, right)
        assert c.builtin.inputs and len(c.builtin.inputs) == len(c.torchair.inputs)


def test_with_the_seed_plugin_torchair_converts_npu_add_custom_as_fxlab_does(torchair, comparisons):
    import torch

    overload = torch.ops.npu.npu_add_custom.default
    try:
        (graph,) = compare_example(torchair, "npu_add_custom", plugins=[SEED_PLUGINS / "npu_add_custom_plugin.py"])
    finally:
        vars(overload).pop("_ge_converter", None)  # the plugin's converter must not reach other tests
    assert [i for i in graph.issues if i.kind == "type"] == []
    assert graph.torchair.ops_of_type("AddCustom") and graph.statuses["npu_add_custom"] == "converted"
    without = comparisons["npu_add_custom"][0]
    assert without.statuses["npu_add_custom"] == "unsupported"
    assert "No AscendIR NpuAddCustom" in without.messages["npu_add_custom"]


# -- with dynamic shapes -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def dynamic_comparisons(torchair) -> dict[str, list[Comparison]]:
    return {example: compare_example(torchair, example, dynamic=True) for example in EXAMPLES}


@pytest.mark.parametrize("example", EXAMPLES)
def test_compiled_with_dynamic_shapes_every_example_gives_torchairs_graph(dynamic_comparisons, example):
    """``dynamic=True``: symbolic sizes in every graph (a second size checked too), and the
    built-in conversion builds TorchAir's graph, up to the listed differences."""
    rows = listed_differences()
    comparisons = dynamic_comparisons[example]
    assert comparisons
    unexplained = [
        f"graph {c.graph}: {i.kind} {i.op_type} [{i.detail}] at {i.where}" for c in comparisons for i in c.issues if not any(row.explains(i) for row in rows)
    ]
    assert not unexplained, "\n".join(unexplained)
    unconverted = {"FxlabUnsupported", "AddCustom"}
    for c in comparisons:
        assert [t for t in c.builtin.types if t not in unconverted] == [t for t in c.torchair.types if t not in unconverted]


# Examples Dynamo compiles with fixed sizes whatever dynamic=True asks, and why.
STAYS_STATIC = {"inplace_ops": "its input is written into a slice of fixed size (cache[:, :4] = h), so Dynamo fixes its sizes"}


def test_with_dynamic_shapes_the_graphs_take_symbolic_sizes(dynamic_comparisons):
    symbolic = {
        example for example, graphs in dynamic_comparisons.items() for c in graphs
        if any(-1 in op.output_desc[0].shape for op in c.builtin.ops if op.type == "Data")
    }
    assert symbolic == set(EXAMPLES) - set(STAYS_STATIC)
