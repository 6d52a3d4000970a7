"""Stage contents of the examples, exactly as each stage of the pipeline makes them (docs/architecture.md, "The flow")."""
from __future__ import annotations

import pytest

from fxlab.capture.backend import DATA_DEPENDENT_BRANCH
from fxlab.capture.record_graph import readable_input_name
from tests.sessions import trace_of


def _targets(trace, stage, graph=0):
    return trace.graphs[graph].stages[stage].targets()


def _inplace(trace, stage, graph=0):
    return [n.target for n in trace.graphs[graph].stages[stage].nodes if n.kind == "inplace"]


def test_aten_inplace_ops_on_intermediate_view_and_input(example_trace):
    trace = example_trace("inplace_ops")
    assert len(trace.graphs) == 1
    assert _inplace(trace, "aten") == ["aten.mul_.Tensor", "aten.copy_.default", "aten.add_.Tensor"]
    assert trace.check.ok and trace.check.compared >= 3


def test_functional_stage_has_no_inplace_op_but_copy_epilogues(example_trace):
    trace = example_trace("inplace_ops")
    functional = trace.graphs[0].stages["functional"]
    assert _inplace(trace, "functional") == []
    epilogues = [n for n in functional.nodes if n.kind == "copy_epilogue"]
    assert [n.target for n in epilogues] == ["aten.copy_.default", "aten.copy_.default"]
    assert {"aten.mul.Tensor", "aten.slice_scatter.default", "aten.add.Tensor"} <= set(functional.targets())
    assert trace.graphs[0].mutated_inputs == ["arg2_1 (x)", "arg3_1 (cache)"]


def test_aclgraph_writes_the_input_in_place_and_drops_its_copy_back(example_trace):
    trace = example_trace("inplace_ops", stages=("aclgraph",), mode="reduce-overhead")
    aclgraph = trace.graphs[0].stages["aclgraph"]
    writes = [n for n in aclgraph.nodes if n.target == "aten.add_.Tensor"]
    assert [(n.name, n.mutates, n.args.split(",")[0]) for n in writes] == [("add", ["self"], "arg2_1"), ("add_1", ["self"], "sum_1")]
    assert [n.name for n in aclgraph.nodes if n.kind == "copy_epilogue"] == ["copy__1"]  # the cache's slice_scatter stays
    assert trace.aclgraph_check.ok and trace.aclgraph_check.compared == 5


def test_custom_inplace_op_through_the_stages(example_trace):
    trace = example_trace("my_inplace")
    assert _inplace(trace, "aten") == ["npu.my_inplace.default"] * 3
    functional = trace.graphs[0].stages["functional"]
    assert functional.count("auto_functionalized") == 3
    assert functional.count("inplace") == 0
    assert [n.target for n in functional.nodes if n.kind == "copy_epilogue"] == ["aten.copy_.default"] * 2
    auto = [n for n in functional.nodes if n.kind == "auto_functionalized"][0]
    assert auto.mutates == ["x"]
    acl = example_trace("my_inplace", stages=("aclgraph",), mode="reduce-overhead")
    assert _targets(acl, "aclgraph").count("npu.my_inplace.default") == 3
    assert trace.graphs[0].mutated_inputs == ["arg0_1 (x)", "arg2_1 (state)"]
    assert trace.check.ok


def test_graph_break_gives_two_graphs_with_reason_and_line(example_trace):
    trace = example_trace("graph_break")
    assert len(trace.graphs) == 2
    first, second = trace.graphs
    assert "item" in first.break_reason
    assert first.break_location.endswith("graph_break.py:19")
    assert second.break_reason is None
    assert trace.check.ok


def test_provenance_of_nodes(example_trace):
    trace = example_trace("inplace_ops")
    node = next(n for n in trace.graphs[0].stages["functional"].nodes if n.target == "aten.addmm.default")
    prov = node.provenance
    assert prov.file.endswith("inplace_ops.py") and prov.line == 21
    assert prov.code == "h = self.proj(x)"
    assert prov.module_path == ["proj (Linear)"]
    assert prov.from_node[0] == "h" and prov.original_aten == "aten.addmm.default"
    aten_node = next(n for n in trace.graphs[0].stages["aten"].nodes if n.target == "aten.mul_.Tensor")
    assert aten_node.provenance.line == 22 and aten_node.outputs[0].shape == [2, 4, 8]
    assert aten_node.outputs[0].dtype == "float32" and aten_node.outputs[0].stride == [32, 8, 1]


def test_readable_input_names():
    assert readable_input_name("l_self_modules_layers_modules_0_modules_attn_buffers_k_cache_") == "layers.0.attn.k_cache"
    assert readable_input_name("L_x_") == "x"


def test_functional_stage_records_the_ge_ops_each_node_became(example_capture):
    """From the final IR: the ops an FX node's conversion made, without the Assigns that
    became graph outputs (see output_reuse); no other stage has GE ops."""
    captured = example_capture("my_inplace")
    graph = captured.trace.graphs[0]
    nodes = {n.name: n for n in graph.stages["functional"].nodes}
    in_ir = {op.name for op in graph.ir.ops}
    for record in captured.graphs[0].conversion.nodes:
        assert nodes[record.node].ge_ops == [name for name in record.ge_ops if name in in_ir]
    assert nodes["arg0_1"].ge_ops == ["arg0_1"]  # a graph input's Data op
    assert nodes["output"].ge_ops == ["NetOutput"]
    copies = [n for n in nodes.values() if n.kind == "copy_epilogue"]
    assert len(copies) == 2 and all(n.ge_ops == [] for n in copies)  # Assigns turned into outputs
    autos = [n for n in nodes.values() if n.kind == "auto_functionalized"]
    types = {op.name: op.type for op in graph.ir.ops}
    autos_types = [[types[name] for name in n.ge_ops if types[name] != "Const"] for n in autos]
    assert autos_types == [["TensorMove", "MyInplace"]] * 2 + [["TensorMove", "AsStrided", "MyInplace", "ViewCopy"]]  # the last on a view
    assert all(not n.ge_ops for stage in ("dynamo", "aten") for n in graph.stages[stage].nodes)


def test_the_conversion_record_says_which_outputs_are_made_on_the_host(write_model):
    # TorchAir's view_to_reshape (pre_ge) made the view a reshape, still a view of x.
    source = "import torch\ndef f(x):\n    return x + x, x.view(-1)\nmodel = f\nexample_inputs = (torch.randn(2, 3),)\n"
    trace = trace_of(write_model(source), stages=("functional", "ascend_ir"))
    assert trace.graphs[0].conversion.host_outputs == [
        "output 1 (reshape_default): a view of graph input 0, not a GE output; re-made on the host after the run as torch.as_strided(input 0, [6], [1], 0)"
    ]
    plain = trace_of(write_model(source.replace(", x.view(-1)", "")), stages=("functional", "ascend_ir"))
    assert plain.graphs[0].conversion.host_outputs == []


def test_an_input_nothing_reads_is_dropped_noted_and_the_ir_check_still_feeds_each_data_its_input(write_model):
    from fxlab.ir.graph_inputs import INPUT_INDICES_ATTR

    # `shape_only` only lends its size: its Data is read by nothing, as TorchAir drops it;
    # Dynamo orders the inputs by first use, so it is input 0 and every later Data index
    # moves down, y's (written in place) too, and with it the reuse option.
    source = (
        "import torch\n"
        "def f(x, shape_only, y):\n"
        "    zeros = shape_only.new_zeros(3)\n"
        "    out = x + 1\n"
        "    y.mul_(2)\n"
        "    return out, zeros\n"
        "model = f\n"
        "example_inputs = (torch.randn(2, 3), torch.randn(4), torch.randn(2, 3))\n"
    )
    trace = trace_of(write_model(source), stages=("functional", "ascend_ir"))
    graph = trace.graphs[0]
    data = {op.name: op.attr_value("index") for op in graph.ir.ops if op.type == "Data"}
    assert graph.ir.attrs[INPUT_INDICES_ATTR].value == (1, 2)
    assert data == {"arg1_1": 0, "arg2_1": 1}
    assert graph.conversion.notes[0] == (
        "graph input(s) nothing reads dropped from the GE graph, as TorchAir drops them: arg0_1 (input 0); the other Data ops renumbered"
    )
    assert graph.conversion.ge_options["ge.exec.outputReuseInputMemIndexes"] == "1,2"
    assert trace.ir_check.ok and trace.ir_check.compared == 5 and not trace.ir_check.not_run


NO_GRAPH = {
    "lstm": (
        "import torch\n\nmodel = torch.nn.LSTM(4, 6, batch_first=True)\nexample_inputs = (torch.randn(2, 3, 4),)\n",
        "Dynamo captured no graph, so the model ran eagerly: Attempted to wrap RNN, GRU, or LSTM (Dynamo does not support RNN, GRU, or LSTM). "
        "Set torch._dynamo.config.allow_rnn=True to enable experimental support for RNN, GRU, and LSTM in Dynamo",
    ),
    "no tensor op": (
        "import torch\n\ndef f(x):\n    return [1, 2]\n\nmodel = f\nexample_inputs = (torch.randn(2),)\n",
        "Dynamo captured no graph: the code it traced ran no tensor operation, so there was nothing to compile",
    ),
}


@pytest.mark.parametrize("case", sorted(NO_GRAPH))
def test_a_run_with_no_graph_says_why(write_model, case):
    source, said = NO_GRAPH[case]
    trace = trace_of(write_model(source), stages=("dynamo", "functional"))
    assert trace.graphs == [] and trace.notes[0] == said


BRANCH = """
import torch


def f(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1


model = f
example_inputs = (torch.ones(3),)
"""


def test_a_break_at_a_branch_on_a_tensor_is_said_in_words(write_model):
    trace = trace_of(write_model(BRANCH), stages=("dynamo", "functional"))
    assert trace.graphs[0].break_reason == f"{DATA_DEPENDENT_BRANCH} [Dynamo: generic_jump TensorVariable()]"
    assert trace.graphs[0].break_location.endswith("model.py:7")


SCOPES = """
import torch
import torchair


def model(x):
    with torchair.scope.super_kernel("sk", "{options}"):
        with torchair.scope.limit_core_num(8, {vector}):
            return x * 2 + 1


example_inputs = (torch.randn(2, 3),)
"""


def test_scope_errors_fxlab_scopes_reports_are_pointed_at_from_the_trace(write_model):
    bad = write_model(SCOPES.format(options="stream-fusion=2:nosuch=1", vector=-1))
    trace = trace_of(bad)
    (note,) = [n for n in trace.notes if n.startswith("the scopes hold")]
    assert note.startswith("the scopes hold ") and note.endswith(f"`fxlab scopes {bad}` lists them")
    assert int(note.split()[3]) >= 2  # the unknown option and the negative core count, at least
    good = write_model(SCOPES.format(options="stream-fusion=1", vector=16))
    assert not [n for n in trace_of(good).notes if n.startswith("the scopes hold")]
