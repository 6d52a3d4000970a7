"""The one GE op a converter emits for a custom op runs, on CPU, as the custom op's own kernel."""
from __future__ import annotations

import json

import pytest
import torch

from tests.functional_graphs import functional_graph
from fxlab.ir import ge
from fxlab.ir.execute import ExecutionError
from tests.ir.executing import execute_converted
from fxlab.ir.kernels.inplace import TORCH_CALL_ATTR
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.converters.registry import CONVERTERS, ORIGIN_TORCHAIR, Converter

_LIB = torch.library.Library("fxlab_ref_test", "DEF")
_LIB.define("mix(Tensor x, Tensor w, float k) -> (Tensor, Tensor)")
_LIB.impl("mix", lambda x, w, k: (x * w + k, x - w), "CPU")
_LIB.impl("mix", lambda x, w, k: (torch.empty_like(x), torch.empty_like(x)), "Meta")
_LIB.define("clamp_acc(Tensor(a!) acc, Tensor v) -> Tensor")


def _clamp_acc_cpu(acc, v):
    acc.add_(v.clamp(-1, 1))
    return v * 2


_LIB.impl("clamp_acc", _clamp_acc_cpu, "CPU")
_LIB.impl("clamp_acc", lambda acc, v: torch.empty_like(v), "Meta")
MIX, CLAMP_ACC = torch.ops.fxlab_ref_test.mix.default, torch.ops.fxlab_ref_test.clamp_acc.default


@pytest.fixture
def converter_of():
    """Register a TorchAir-style converter for a custom op for the test, unregistered after."""
    registered = []

    def register(op, fn):
        CONVERTERS.register(Converter(op, fn, origin=ORIGIN_TORCHAIR))
        registered.append(op)

    yield register
    for op in registered:
        CONVERTERS.unregister(op)


def _mix_converter(inputs, attrs=None, outputs=("y1", "y2"), order=(0, 1)):
    def convert(x, w, k, *, meta_outputs=None):
        outs = ge.op("Mix", inputs({"x": x, "w": w}), attrs({"k": k}) if attrs else {}, outputs=outputs)
        return tuple(outs[i] for i in order)

    return convert


def _mix_model(x, w):
    a, b = MIX(x, w, 0.5)
    return (a * b,)


def _run(model, *inputs):
    gm = functional_graph(model, *inputs)
    graph = convert_to_ascend_ir(gm).graph
    return graph, execute_converted(graph, list(inputs))


def test_one_ge_op_runs_the_custom_ops_kernel_with_inputs_by_name(converter_of) -> None:
    converter_of(MIX, _mix_converter(lambda named: named, lambda attrs: {"k": float(attrs["k"])}))
    x, w = torch.randn(3, 4), torch.randn(3, 4)
    graph, (out,) = _run(_mix_model, x, w)
    (mix,) = graph.ops_of_type("Mix")
    call = json.loads(mix.attr_value(TORCH_CALL_ATTR))
    assert call == {
        "op": "fxlab_ref_test.mix.default",
        "args": [{"input": 0}, {"input": 1}, {"attr": "k"}],
        "kwargs": {},
        "outputs": [{"return": 0}, {"return": 1}],
        "by_name": True,
    }
    torch.testing.assert_close(out, (x * w + 0.5) * (x - w))


def test_inputs_fed_to_the_wrong_names_are_caught(converter_of) -> None:
    converter_of(MIX, _mix_converter(lambda named: {"x": named["w"], "w": named["x"]}))
    x, w = torch.randn(3, 4), torch.randn(3, 4)
    _, (out,) = _run(_mix_model, x, w)
    torch.testing.assert_close(out, (w * x + 0.5) * (w - x))  # what GE's Mix would compute: not the model's


def test_outputs_returned_out_of_order_are_caught(converter_of) -> None:
    converter_of(MIX, _mix_converter(lambda named: named, order=(1, 0)))
    x, w = torch.randn(3, 4), torch.randn(3, 4)
    graph, (out,) = _run(_mix_model, x, w)
    assert json.loads(graph.ops_of_type("Mix")[0].attr_value(TORCH_CALL_ATTR))["outputs"] == [{"return": 1}, {"return": 0}]
    torch.testing.assert_close(out, (x - w) * (x * w + 0.5))  # the same product: ...
    a, b = MIX(x, w, 0.5)
    assert not torch.allclose(a, b)  # ... but each output is the other's value, as the converter wired it


def test_inputs_not_named_as_the_schema_are_taken_as_fed(converter_of) -> None:
    converter_of(MIX, _mix_converter(lambda named: {"x1": named["x"], "x2": named["w"]}))
    x, w = torch.randn(3, 4), torch.randn(3, 4)
    graph, (out,) = _run(_mix_model, x, w)
    call = json.loads(graph.ops_of_type("Mix")[0].attr_value(TORCH_CALL_ATTR))
    assert call["by_name"] is False and call["args"] == [{"input": 0}, {"input": 1}, {"value": 0.5}]
    torch.testing.assert_close(out, (x * w + 0.5) * (x - w))


def test_a_ref_output_is_its_input_written_in_place(converter_of) -> None:
    def convert(acc, v, meta_outputs=None):
        return ge.op("ClampAcc", {"acc": acc, "v": v}, outputs=("acc", "y"))[1]

    converter_of(CLAMP_ACC, convert)

    def model(acc, v):
        return (CLAMP_ACC(acc, v) + 1,)  # auto_functionalized_v2 once functional; acc written back

    acc, v = torch.zeros(3, 4), torch.randn(3, 4) * 3
    gm = functional_graph(model, acc.clone(), v)
    graph = convert_to_ascend_ir(gm).graph
    (clamp,) = graph.ops_of_type("ClampAcc")
    assert json.loads(clamp.attr_value(TORCH_CALL_ATTR))["outputs"] == [{"input": 0}, {"return": 0}]
    graph_input = acc.clone()
    (out,) = execute_converted(graph, [graph_input, v])
    torch.testing.assert_close(out, v * 2 + 1)
    # The copy_ epilogue's Assign writes ClampAcc's ref output (the moved acc, updated) back.
    torch.testing.assert_close(graph_input, v.clamp(-1, 1))


def test_a_converter_emitting_several_ops_gets_no_stand_in(converter_of) -> None:
    def convert(x, w, k, *, meta_outputs=None):
        y1, y2 = ge.op("Mix", {"x": x, "w": w}, {}, outputs=("y1", "y2"))
        return ge.op1("Neg", {"x": y1}), y2

    converter_of(MIX, convert)
    graph = convert_to_ascend_ir(functional_graph(_mix_model, torch.randn(2), torch.randn(2))).graph
    assert TORCH_CALL_ATTR not in graph.ops_of_type("Mix")[0].attrs
    with pytest.raises(ExecutionError, match="no reference kernel for GE op type Mix"):
        execute_converted(graph, [torch.randn(2), torch.randn(2)])
