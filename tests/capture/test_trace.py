from __future__ import annotations

import json

from fxlab.capture.trace import Trace


def test_json_round_trip_is_exact(example_trace):
    trace = example_trace("my_inplace")
    data = json.loads(json.dumps(trace.to_json()))
    back = Trace.from_json(data)
    assert back.to_json() == trace.to_json()
    graph = back.graphs[0]
    assert graph.stages["functional"].nodes == trace.graphs[0].stages["functional"].nodes
    assert graph.ir is not None and graph.ir.types == trace.graphs[0].ir.types


def test_stage_records_keep_provenance_and_mutation(example_trace):
    trace = Trace.from_json(json.loads(json.dumps(example_trace("inplace_ops").to_json())))
    aten = trace.graphs[0].stages["aten"]
    add_ = next(n for n in aten.nodes if n.target == "aten.add_.Tensor")
    assert add_.kind == "inplace" and add_.mutates == ["self"]
    assert add_.provenance.code == "x.add_(1)  # in place on a graph input"
    assert add_.outputs[0].signature() == "float32[2, 4, 8]"


def test_check_approximations_are_saved_only_when_there_are_some():
    from fxlab.capture.trace import CheckResult, Trace

    note = "graph 0: GE's Gelu (1 op) is the tanh approximation of gelu(approximate='none'), the erf form: ..."
    trace = Trace("m.py", "f", "0", "2", check=CheckResult(ok=True, compared=1), ir_check=CheckResult(ok=True, compared=1, approximations=[note]))
    data = trace.to_json()
    assert "approximations" not in data["check"] and data["ir_check"]["approximations"] == [note]
    again = Trace.from_json(data)
    assert again.check.approximations == [] and again.ir_check.approximations == [note]


def test_the_conversion_summary_is_that_of_the_converted_graph_made_once(example_trace):
    from fxlab.reports.conversion_summary import summarize_conversion

    for graph in example_trace("my_inplace").graphs:
        rows = graph.conversion_summary()
        assert rows == summarize_conversion(graph.modules["pre_ge"], graph.conversion)
        assert graph.conversion_summary() is rows
        assert [(r.target, r.count) for r in rows] == [
            ("aten.mul.Tensor", 1),
            ("auto_functionalized_v2(npu.my_inplace.default)", 3),
            ("getitem", 5),
            ("aten.add.Tensor", 2),
            ("aten.copy_.default", 2),
        ]
