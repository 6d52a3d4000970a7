"""fxlab.capture.trace: the trace as plain data, and what it says of itself."""
from __future__ import annotations

import dataclasses

import torch.fx as fx

from fxlab.capture.trace import CheckResult, ConversionRecord, GraphTrace, Trace
from fxlab.passes.infra import PassRecord
from fxlab.reports.conversion_summary import summarize_conversion
from fxlab.stage_names import GE_GRAPH_PASSES, PRE_GE


def _live_values(value, path="trace"):
    """Every value under ``value`` that is not plain data (a graph module, a tensor, a function)."""
    if dataclasses.is_dataclass(value):
        return [found for f in dataclasses.fields(value) for found in _live_values(getattr(value, f.name), f"{path}.{f.name}")]
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in _live_values(item, f"{path}[{key!r}]")]
    if isinstance(value, (list, tuple)):
        return [found for index, item in enumerate(value) for found in _live_values(item, f"{path}[{index}]")]
    if value is None or isinstance(value, (str, int, float, bool, bytes)):
        return []
    return [f"{path}: {type(value).__name__}"]


def test_a_trace_holds_plain_data_only(example_trace):
    for name, mode in (("my_inplace", None), ("multi_stream", "reduce-overhead"), ("graph_break", None)):
        trace = example_trace(name, mode=mode)
        assert _live_values(trace) == []


def test_stage_records_keep_provenance_and_mutation(example_trace):
    aten = example_trace("inplace_ops").graphs[0].stages["aten"]
    add_ = next(n for n in aten.nodes if n.target == "aten.add_.Tensor")
    assert add_.kind == "inplace" and add_.mutates == ["self"]
    assert add_.provenance.code == "x.add_(1)  # in place on a graph input"
    assert add_.outputs[0].signature() == "float32[2, 4, 8]"


def test_a_node_record_names_the_nodes_it_reads_as_its_graph_module_does(example_capture):
    captured = example_capture("my_inplace")
    for graph, live in zip(captured.trace.graphs, captured.graphs):
        for name, stage in graph.stages.items():
            module_inputs = {n.name: [i.name for i in n.all_input_nodes] for n in live.modules[name].graph.nodes}
            assert {n.name: n.inputs for n in stage.nodes} == module_inputs
    output = captured.trace.graphs[0].stages["functional"].nodes[-1]
    assert output.op == "output" and output.inputs  # the graph's results are read by its output


def test_the_conversion_summary_is_that_of_the_converted_graph(example_capture):
    captured = example_capture("my_inplace")
    for graph, live in zip(captured.trace.graphs, captured.graphs):
        assert isinstance(live.converted_module(), fx.GraphModule) and live.converted_module() is live.modules[PRE_GE]
        assert graph.conversion.summary == summarize_conversion(live.modules[PRE_GE], live.conversion).rows
        assert [(r.target, r.count) for r in graph.conversion.summary] == [
            ("aten.mul.Tensor", 1),
            ("auto_functionalized_v2(npu.my_inplace.default)", 3),
            ("getitem", 5),
            ("aten.add.Tensor", 2),
            ("aten.copy_.default", 2),
        ]


def test_a_graph_is_partial_exactly_when_its_conversion_is():
    assert not GraphTrace(0).partial
    assert not GraphTrace(0, conversion=ConversionRecord(ops=3, partial=False)).partial
    assert GraphTrace(0, conversion=ConversionRecord(ops=3, partial=True)).partial


def test_pass_records_are_read_by_pass_list():
    sym_pack = PassRecord("optimize_sym_pack", changed=False)
    graph = GraphTrace(0, passes={GE_GRAPH_PASSES: [sym_pack]})
    assert graph.pass_records(GE_GRAPH_PASSES) == [sym_pack]
    assert graph.pass_records(PRE_GE) == [] and graph.pass_records("aclgraph") == []


def test_checks_are_listed_in_the_order_shown_and_only_those_that_ran():
    eager, ir = CheckResult(ok=True, compared=2), CheckResult(ok=False, compared=2, mismatches=["graph 0 output 0: max |diff| 1"])
    trace = Trace("m.py", "model", "0", "2", check=eager, ir_check=ir)
    assert trace.checks() == [("eager vs compiled", eager), ("Ascend IR on CPU vs compiled", ir)]
    user = CheckResult(ok=True)
    trace.ir_check, trace.aclgraph_check, trace.user_pass_check = None, ir, user
    assert [label for label, _ in trace.checks()] == ["eager vs compiled", "aclgraph graph on CPU vs compiled", "user passes (graph before vs after)"]


def test_a_check_says_what_it_found_in_one_verdict():
    note = "graph 0: GE's Gelu (1 op) is the tanh approximation of gelu(approximate='none'), the erf form: ..."
    assert CheckResult(ok=True, compared=3, max_abs_diff=0.5, approximations=[note]).verdict == f"match (3 tensors, max |diff| 0.5), except: {note}"
    skipped = CheckResult(ok=True, skipped="--no-verify was given")
    assert skipped.verdict == "not run: --no-verify was given" and skipped.unverified and not skipped.failed
    mismatch = CheckResult(ok=False, compared=1, mismatches=["output 0"], not_run=["graph 1: no IR"])
    assert mismatch.verdict == "MISMATCH: output 0; not run: graph 1: no IR" and mismatch.failed and mismatch.unverified
