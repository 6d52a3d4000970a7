"""Whole-trace diffs: a trace with itself, traces with other graphs and stages, graph
selection."""
from __future__ import annotations

import copy
import json

import pytest

from fxlab.errors import UsageError
from fxlab.diff.trace_diff import diff_saved_traces, select_graphs


def test_a_trace_diffed_with_itself_is_identical_stage_by_stage(example_trace) -> None:
    trace = example_trace("inplace_ops")
    diff = diff_saved_traces(trace, trace, left_label="a", right_label="b")
    assert [(g.graph, g.left_stage, bool(g.fx), bool(g.ir)) for g in diff.graphs] == [
        (0, "dynamo", True, False), (0, "aten", True, False), (0, "functional", True, False),
        (0, "pre_ge", True, False), (0, "ascend_ir", False, True),
    ]
    assert diff.identical and diff.notes == []


def test_traces_with_other_graphs_and_stages_say_so(example_trace) -> None:
    full = example_trace("graph_break")
    fewer = copy.copy(full)
    fewer.graphs = full.graphs[:1]
    fewer.stages = [s for s in full.stages if s != "dynamo"]
    diff = diff_saved_traces(full, fewer, left_label="a", right_label="b")
    assert diff.notes == ["only a recorded stage(s) dynamo", "a has 2 graph(s), b has 1"]
    missing = [g for g in diff.graphs if g.missing]
    assert {g.graph for g in missing} == {1} and missing[0].missing == "b has no graph 1"
    assert not diff.identical
    assert json.loads(json.dumps(diff.to_json()))["graphs"][-1]["missing"] == "b has no graph 1"


def test_graph_selection() -> None:
    assert select_graphs(3, None) == [0, 1, 2]
    assert select_graphs(3, 2) == [2]
    with pytest.raises(UsageError, match="--graph 3 does not exist: the trace has 3 graph"):
        select_graphs(3, 3)
    with pytest.raises(UsageError, match="none at all"):
        select_graphs(0, 0)
