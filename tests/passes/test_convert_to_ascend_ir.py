"""The conversion pass itself: graph boundary, failure handling, symbolic shapes."""
from __future__ import annotations

import pytest
import torch

from tests.functional_graphs import functional_graph
from fxlab.ir import ge
from fxlab.ir.model import DataType
from fxlab.passes.conversion_result import UNSUPPORTED_OP_TYPE, Status
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.converters.registry import CONVERTERS, Converter, ConverterRegistry

aten = torch.ops.aten


def test_data_ops_index_and_netoutput():
    gm = functional_graph(lambda x, y: x * y, torch.randn(2, 3), torch.randn(2, 3))
    graph = convert_to_ascend_ir(gm).graph
    data = graph.ops_of_type("Data")
    assert [op.attr_value("index") for op in data] == [0, 1]
    assert [op.output_desc[0].name for op in data] == ["y", "y"]
    assert data[0].output_desc[0].dtype is DataType.DT_FLOAT and data[0].output_desc[0].shape == (2, 3)
    assert graph.ops[-1].type == "NetOutput" and graph.outputs == [graph.ops[-1].inputs[0]]
    assert graph.inputs == [op.name for op in data]


def test_unsupported_op_becomes_a_marked_placeholder_and_partial():
    gm = functional_graph(lambda x: torch.special.bessel_j0(x) + 1, torch.randn(3))
    result = convert_to_ascend_ir(gm)
    placeholder = result.graph.ops_of_type(UNSUPPORTED_OP_TYPE)
    assert len(placeholder) == 1 and result.partial
    assert placeholder[0].attr_value("_fxlab_unsupported") == "aten.special_bessel_j0.default"
    # No converter here, and TorchAir's only raises: the record gives TorchAir's reason.
    record = next(r for r in result.nodes if r.status is Status.REFUSED)
    assert record.message.startswith("TorchAir refuses aten.special_bessel_j0.default: its converter only raises NotImplementedError")
    assert "--convert-refused" not in record.message  # fxlab has no converter to offer
    # Later nodes still convert, reading the placeholder's output.
    assert result.graph.ops_of_type("Add")[0].inputs[0] == f"{placeholder[0].name}:0"


def _registry_with(target, fn) -> ConverterRegistry:
    registry = ConverterRegistry()
    for converter in CONVERTERS:
        registry.register(Converter(converter.target, converter.fn, converter.origin, converter.samples, converter.where))
    registry._by_target[target] = Converter(target, fn, origin="user", where="test")
    return registry


def test_raising_converter_names_node_and_source_line_and_goes_on():
    def broken(self, other, *, meta_outputs=None):
        raise ValueError("bad attr")

    def model(x):
        return torch.sin(x * 2.0)  # the line named in the message

    gm = functional_graph(model, torch.randn(3))
    for node in gm.graph.nodes:  # what capture caches from Dynamo's stack traces
        node.meta["fxlab.source"] = "model.py:7"
    result = convert_to_ascend_ir(gm, registry=_registry_with(aten.mul.Tensor, broken))
    record = next(r for r in result.nodes if r.status is Status.RAISED)
    assert record.node == "mul" and "model.py:7" in record.message and "ValueError: bad attr" in record.message
    assert result.partial and result.graph.ops_of_type("Sin"), "conversion goes on after a failure"


def test_a_raising_plugin_converter_is_named_by_its_function_file_and_line(tmp_path):
    from fxlab.capture.loader import load_python_file
    from fxlab.passes.converters.inplace import sample_inplace_op
    from fxlab.passes.converters.registry import ORIGIN_TORCHAIR

    op = sample_inplace_op()  # accumulate(Tensor(a!) x, Tensor y) -> Tensor: auto_functionalized_v2 once functional
    plugin = tmp_path / "acc_plugin.py"
    plugin.write_text("def convert_accumulate(x, y, meta_outputs=None):\n    outputs = (x,)\n    return outputs[1]\n")
    CONVERTERS.register(Converter(op, load_python_file(plugin, role="plugin").convert_accumulate, origin=ORIGIN_TORCHAIR))
    try:
        gm = functional_graph(lambda x, y: (op(x, y),), torch.randn(3), torch.randn(3))
        result = convert_to_ascend_ir(gm)
    finally:
        CONVERTERS.unregister(op)
    (record,) = [r for r in result.nodes if r.status is Status.RAISED]
    assert record.message.startswith("converter for fxlab_samples.accumulate.default (in auto_functionalized_v2) raised at node ")
    assert f" in convert_accumulate at {plugin}:3 (`return outputs[1]`): IndexError: tuple index out of range" in record.message


def test_wrong_number_of_outputs_is_reported():
    def one_output(self, split_size, dim=0, *, meta_outputs=None):
        return ge.op1("Identity", {"x": self})

    gm = functional_graph(lambda x: x.split(2), torch.randn(4))
    result = convert_to_ascend_ir(gm, registry=_registry_with(aten.split.Tensor, one_output))
    record = next(r for r in result.nodes if r.status is Status.RAISED)
    assert "one_output" in record.message and "the schema of aten.split.Tensor has 2 outputs" in record.message


@pytest.mark.parametrize("returned, said", [((1, 2, 3), "returned a 3-tuple"), (None, "returned None"), ("Mul", "returned a str ('Mul')")])
def test_a_converter_returning_no_tensor_is_blamed_not_the_next_op(returned, said):
    # The value was stored as it was and the next op (sin) failed on it.
    def wrong_return(self, other, *, meta_outputs=None):
        return returned

    gm = functional_graph(lambda x: torch.sin(x * 2.0), torch.randn(3))
    result = convert_to_ascend_ir(gm, registry=_registry_with(aten.mul.Tensor, wrong_return))
    (record,) = [r for r in result.nodes if r.status is Status.RAISED]
    assert record.node == "mul"
    assert f"converter test_a_converter_returning_no_tensor_is_blamed_not_the_next_op.<locals>.wrong_return (" in record.message
    assert f"{said}; the schema of aten.mul.Tensor has 1 tensor output" in record.message
    assert [r.status for r in result.nodes if r.node == "sin"] == [Status.CONVERTED]


def test_symbolic_dims_are_minus_one_and_the_symbol_is_kept():
    from torch.fx.experimental.proxy_tensor import make_fx

    gm = make_fx(lambda x: (x * 2,), tracing_mode="symbolic")(torch.randn(5, 3))
    result = convert_to_ascend_ir(gm)
    desc = result.graph.ops_of_type("Data")[0].output_desc[0]
    assert desc.shape == (-1, -1) or desc.shape == (-1, 3)
    assert "s" in desc.attrs["_fxlab_symbolic_shape"].value


def test_scope_markers_push_attrs_and_make_no_op():
    from fxlab import scope

    def model(x):
        with scope.super_kernel("sk", "stream-fusion=1"):
            y = x + 1
        return y * 2

    gm = functional_graph(model, torch.randn(3))
    graph = convert_to_ascend_ir(gm).graph
    add = graph.ops_of_type("Add")[0]
    assert add.attr_value("_super_kernel_scope") == "sk" and add.attr_value("_super_kernel_options") == "stream-fusion=1"
    assert "_super_kernel_scope" not in graph.ops_of_type("Mul")[0].attrs
    assert not [op for op in graph.ops if "scope" in op.type.lower()]


def _squeeze_dims(x):
    return (x.unsqueeze(1).squeeze((1,)) * 2,)


def test_an_op_torchair_refuses_is_refused_with_its_reason_though_fxlab_could_convert_it():
    gm = functional_graph(_squeeze_dims, torch.randn(3, 4))
    result = convert_to_ascend_ir(gm)
    (record,) = [r for r in result.nodes if r.status is Status.REFUSED]
    assert record.target == "aten.squeeze.dims" and result.partial
    assert record.message == (
        "TorchAir refuses aten.squeeze.dims: its converter only raises NotImplementedError: "
        "torch.ops.aten.squeeze.dims ge_converter is not implemented! (ge_converter/aten/squeeze.py:58); "
        "fxlab converts it only when asked (--convert-refused), since TorchAir would not"
    )
    assert result.graph.ops_of_type(UNSUPPORTED_OP_TYPE)[0].fx_node == "squeeze"


def test_convert_refused_runs_fxlabs_converter_and_says_so():
    gm = functional_graph(_squeeze_dims, torch.randn(3, 4))
    result = convert_to_ascend_ir(gm, convert_refused=True)
    assert not result.partial and "Squeeze" in result.graph.types
    assert result.warnings == [
        "TorchAir refuses aten.squeeze.dims: its converter only raises NotImplementedError: "
        "torch.ops.aten.squeeze.dims ge_converter is not implemented! (ge_converter/aten/squeeze.py:58); "
        "converted by fxlab's own converter as asked (--convert-refused)"
    ]


def test_a_users_converter_for_a_refused_op_replaces_torchairs():
    def user_squeeze(self, dim, *, meta_outputs=None):
        return ge.op1("Squeeze", {"x": self}, {"axis": list(dim)})

    from fxlab.ir import ge

    registry = _registry_with(torch.ops.aten.squeeze.dims, user_squeeze)
    result = convert_to_ascend_ir(functional_graph(_squeeze_dims, torch.randn(3, 4)), registry=registry)
    assert not result.partial and result.graph.ops_of_type("Squeeze")[0].fx_node == "squeeze"


def test_an_aten_op_torchair_has_no_converter_for_is_refused():
    from fxlab.passes.torchair_refusals import NO_CONVERTER, verdict_of

    fake_op = type("Op", (), {"__str__": lambda self: "aten.not_in_torchair.default"})()
    verdict = verdict_of(fake_op)
    assert verdict.verdict == NO_CONVERTER and verdict.fails
    assert verdict.message() == "TorchAir has no converter for aten.not_in_torchair.default, so its conversion fails on it"
    assert verdict_of(type("Op", (), {"__str__": lambda self: "npu.my_op.default"})()) is None  # its auto converter decides


def test_only_data_const_and_each_nodes_result_carry_a_dtype_as_in_torchairs_graph():
    # arange: Range (int32 here) then a Cast to the result's float: TorchAir writes a dtype
    # on the Cast (the node's result) and leaves the Range's unset (DT_FLOAT once normalized).
    gm = functional_graph(lambda x: x + torch.arange(3, dtype=torch.int64), torch.arange(3, dtype=torch.int64))
    graph = convert_to_ascend_ir(gm).graph
    by_node: dict[str, list] = {}
    for op in graph.ops:
        by_node.setdefault(op.fx_node, []).append(op)
    arange_ops = by_node["arange"]
    assert [op.type for op in arange_ops] == ["Const", "Const", "Const", "Range", "Cast"]
    assert [op.output_desc[0].dtype for op in arange_ops] == [DataType.DT_INT32, DataType.DT_INT32, DataType.DT_INT64, DataType.DT_FLOAT, DataType.DT_INT64]
    assert arange_ops[-1].input_desc[0].dtype is DataType.DT_FLOAT  # copied from the unset Range output
    add = next(op for op in graph.ops if op.type == "Add")
    assert [d.dtype for d in add.input_desc] == [DataType.DT_INT64, DataType.DT_INT64]  # a Data and a result


# -- NetOutput as TorchAir assembles it ---------------------------------------------------
def _eager_and_ir(fn, *inputs):
    from fxlab.passes.output_reuse import execute_fx_outputs

    graph = convert_to_ascend_ir(functional_graph(fn, *inputs)).graph
    return graph, fn(*[x.clone() for x in inputs]), execute_fx_outputs(graph, [x.clone() for x in inputs])


def test_views_of_graph_inputs_are_not_graph_outputs_and_are_remade_on_the_host():
    from fxlab.ir.host_outputs import fx_outputs_of

    def views(x, y):
        return x.t(), y + y, x, x[1:].unsqueeze(0), y.view(-1)

    graph, eager, ir = _eager_and_ir(views, torch.randn(3, 4), torch.randn(2, 2))
    assert graph.outputs == ["Add:0"]
    assert [(o.kind, o.input_index, o.ge_index) for o in fx_outputs_of(graph)] == [
        ("view", 0, None), ("ge", None, 0), ("view", 0, None), ("view", 0, None), ("view", 1, None)
    ]
    # The ops converted for the views stay, read by nothing (as in TorchAir's graph).
    read = {ref.rpartition(":")[0] for op in graph.ops for ref in op.inputs}
    assert {op.type for op in graph.ops if op.name not in read} == {"Transpose", "Unsqueeze", "Reshape", "NetOutput"}
    assert len(ir) == len(eager)
    for got, want in zip(ir, eager):
        torch.testing.assert_close(got, want)
        assert got.stride() == want.stride()


def test_a_value_returned_twice_is_one_graph_output():
    from fxlab.ir.host_outputs import fx_outputs_of

    def twice(x):
        y = x + 1
        return y, x - y, y

    graph, eager, ir = _eager_and_ir(twice, torch.randn(3))
    assert graph.outputs == ["Add:0", "Sub:0"]
    assert [o.ge_index for o in fx_outputs_of(graph)] == [0, 1, 0]
    assert graph.ops[-1].input_desc[-1].name == "x1"  # two NetOutput inputs, no third
    for got, want in zip(ir, eager):
        torch.testing.assert_close(got, want)


def test_plain_outputs_leave_no_record():
    graph = convert_to_ascend_ir(functional_graph(lambda x: (x + 1, x - 2), torch.randn(3))).graph
    assert graph.outputs == ["Add:0", "Sub:0"] and "_fxlab_fx_outputs" not in graph.attrs


def test_a_static_size_is_a_plain_value_and_no_op():
    import torch.fx as fx
    from torch._subclasses.fake_tensor import FakeTensorMode

    from fxlab.ir.host_outputs import fx_outputs_of

    graph = fx.Graph()
    x = graph.placeholder("x")
    size = graph.call_function(aten.sym_size.int, (x, 1))
    graph.output((size,))
    x.meta["val"] = FakeTensorMode().from_tensor(torch.randn(2, 3))
    size.meta["val"] = 3
    ir = convert_to_ascend_ir(fx.GraphModule({}, graph)).graph
    assert ir.types == ["Data", "NetOutput"] and ir.outputs == []
    (out,) = fx_outputs_of(ir)
    assert (out.kind, out.value) == ("value", 3)


def _empty_and_nonempty(x):
    # bessel_j0 has no converter anywhere: of an empty tensor it needs none.
    empty = torch.special.bessel_j0(x[:0])
    return empty, x.new_empty(2, 0).t(), x + 1


def test_a_node_whose_outputs_are_all_empty_becomes_a_const_of_an_empty_tensor():
    """TorchAir's walk runs no converter for such a node (its ``make_real_tensor_like``)."""
    gm = functional_graph(_empty_and_nonempty, torch.randn(3))
    result = convert_to_ascend_ir(gm)
    by_node = {r.node: r for r in result.nodes}
    empty_ops = [op for op in result.graph.ops if op.type == "Const" and op.output_desc[0].shape in ((0,), (0, 2), (2, 0))]
    # The slice, bessel_j0 of it, new_empty and its transpose: one Const each, no other op.
    assert [op.attr_value("_readable_value") for op in empty_ops] == ["tensor([])", "tensor([])", "tensor([], size=(2, 0))", "tensor([], size=(0, 2))"]
    assert [by_node[n].ge_ops for n in ("slice_1", "special_bessel_j0", "new_empty", "t")] == [[op.name] for op in empty_ops]
    assert not result.partial and UNSUPPORTED_OP_TYPE not in result.graph.types
    assert result.graph.types.count("Add") == 1


def test_a_node_that_is_not_converted_reads_the_base_of_the_views_rebuilt_for_it():
    """TorchAir rebuilds a view while converting its reader: a reader it refuses keeps no
    Reshape of the view optimisation and reads the view's base."""
    import torch.nn.functional as F

    from fxlab.passes.pre_ge import pre_ge_graph

    gm = functional_graph(lambda x, w, b: F.instance_norm(x, weight=w, bias=b), torch.randn(2, 4, 3, 3), torch.randn(4), torch.randn(4))
    result = convert_to_ascend_ir(pre_ge_graph(gm).gm, "g")
    (refused,) = result.graph.ops_of_type(UNSUPPORTED_OP_TYPE)
    assert refused.inputs[0] == "arg0_1:0"
    before = [op.type for op in result.graph.ops[: result.graph.ops.index(refused)]]
    assert before == ["Data", "Data", "Data", "Const", "Tile", "Const", "Tile"]


STREAM_WAIT = """
import torch
import torch_npu


class SideStream(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.eye(8))
        self.side = torch.npu.Stream()

    def forward(self, x):
        main = x @ self.w
        with torch.npu.stream(self.side):
            side = torch.sigmoid(main)
        torch.npu.current_stream().wait_stream(self.side)
        return main + side


model = SideStream()
example_inputs = (torch.ones(4, 8),)
"""


def test_a_higher_order_op_with_no_value_of_its_own_is_left_out_with_its_outputs_read_by_index(write_model):
    # Dynamo puts a stream wait in a control_deps higher-order op, whose outputs only its
    # getitem readers describe: left out (TorchAir's converter raises on it), never a crash.
    from fxlab.session import capture
    from fxlab.capture.request import TraceRequest

    trace = capture(TraceRequest(write_model(STREAM_WAIT), stages=("functional", "pre_ge", "ascend_ir"))).trace
    (graph,) = trace.graphs
    assert trace.status == "partial" and graph.conversion.not_converted[0]["op"] == "control_deps"
    placeholder = [op for op in graph.ir.ops if op.fx_node == "control_deps"]
    assert len(placeholder) == 1 and len(placeholder[0].output_desc) == 3  # (the wait, main, side), as its readers index them
    assert trace.check.ok
