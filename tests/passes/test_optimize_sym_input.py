from __future__ import annotations

import torch
import torch.fx as fx

from fxlab.capture.stages import functional_stage
from tests.functional_graphs import functional_graph
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.ge_passes import ge_graph_passes
from fxlab.passes.optimize_sym_input import optimize_sym_input
from fxlab.passes.optimize_fx import optimize_fx_passes
from fxlab.passes.pre_ge import pre_ge_graph
from fxlab.passes.torchair_options import TorchAirOptions


def _functional(fn, *inputs: torch.Tensor, dynamic_dims: dict[int, int]) -> fx.GraphModule:
    graphs = []

    def backend(gm, example_inputs):
        functional, compiled = functional_stage(gm, example_inputs)
        graphs.append(functional)
        return compiled

    for index, dim in dynamic_dims.items():
        torch._dynamo.mark_dynamic(inputs[index], dim)
    torch._dynamo.reset()
    torch.compile(fn, backend=backend)(*inputs)
    (gm,) = graphs
    return gm


def _rows_of_noise(x, y):
    return x + torch.zeros(x.shape[0], 4), y.sum() * x.shape[0]


def _symbols(gm: fx.GraphModule) -> list[fx.Node]:
    return [n for n in gm.graph.nodes if n.op == "placeholder" and isinstance(n.meta.get("val"), torch.SymInt)]


def test_each_used_symbol_is_read_from_the_first_tensor_input_that_carries_it():
    x, y = torch.randn(6, 4), torch.randn(5)
    gm = _functional(_rows_of_noise, x, y, dynamic_dims={0: 0, 1: 0})
    placeholders = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    assert placeholders == ["arg0_1", "arg1_1", "arg2_1", "arg3_1"]  # s0, x, s1, y
    symbol = _symbols(gm)[0].meta["val"]
    assert [len(s.users) for s in _symbols(gm)] == [2, 0]  # y's size is never used
    assert optimize_sym_input(gm).changed is True
    (size,) = [n for n in gm.graph.nodes if n.target is torch.ops.aten.sym_size]
    assert size.args == (size.prev, 0) and size.prev.name == "arg1_1"  # x's dim 0, right after x
    assert str(size.meta["val"]) == str(symbol)
    assert [len(s.users) for s in _symbols(gm)] == [0, 0]
    for got, want in zip(gm(6, x, 5, y), _rows_of_noise(x, y)):
        torch.testing.assert_close(got, want)
    assert optimize_sym_input(gm).changed is False


def test_static_graphs_and_the_acl_graph_mode_are_left_alone():
    gm = functional_graph(lambda x: (x * 2,), torch.randn(3))
    assert optimize_sym_input(gm).changed is False
    names = [p.name for p in optimize_fx_passes(TorchAirOptions(mode="reduce-overhead")).passes]
    assert "optimize_sym_input" not in names


def _noise(x):
    return x + torch.rand(x.shape[0], 4) * 0, torch.randn(x.shape, dtype=x.dtype) * 0


def test_the_converted_graph_reads_the_size_from_the_tensor_and_drops_the_symbol_input():
    gm = _functional(_noise, torch.randn(6, 4), dynamic_dims={0: 0})
    result = pre_ge_graph(gm)
    pre_ge, records = result.gm, result.records
    assert next(r for r in records if r.name == "optimize_sym_input").changed
    ir = convert_to_ascend_ir(pre_ge, "graph").graph
    ge_graph_passes(ir)
    assert [op.type for op in ir.ops if op.type in ("Data", "Shape", "Gather", "Pack")] == ["Data", "Shape", "Gather", "Pack", "Data", "Pack"]
    assert [op.type for op in ir.ops if op.type.startswith("StatelessRandom")] == ["StatelessRandomUniformV2", "StatelessRandomNormalV2"]
