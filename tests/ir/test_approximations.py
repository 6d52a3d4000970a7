"""fxlab.ir.approximations: GE's Gelu runs as GE computes it (tanh form); the exact kernel
is chosen only for ops whose FX node asked for the erf form."""
from __future__ import annotations

import torch

from tests.functional_graphs import functional_graph
from fxlab.ir.approximations import GE_APPROXIMATIONS, exact_kernels
from fxlab.ir.execute import execute
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir


def two_gelus(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.nn.functional.gelu(x), torch.nn.functional.gelu(x, approximate="tanh")


def _converted(x: torch.Tensor):
    gm = functional_graph(two_gelus, x)
    return gm, convert_to_ascend_ir(gm, name="g").graph


def test_only_the_exact_gelu_gets_the_exact_kernel():
    x = torch.linspace(-3, 3, 7)
    gm, graph = _converted(x)
    gelus = [op for op in graph.ops if op.type == "Gelu"]
    assert len(gelus) == 2
    kernels = exact_kernels(graph.ops, {n.name: n for n in gm.graph.nodes})
    exact_node = next(n for n in gm.graph.nodes if n.op == "call_function" and "approximate" not in n.kwargs)
    assert list(kernels) == [op.name for op in gelus if op.fx_node == exact_node.name]
    assert kernels[next(iter(kernels))] is GE_APPROXIMATIONS["Gelu"].exact_kernel


def test_ges_semantics_by_default_and_the_exact_form_where_asked():
    x = torch.linspace(-3, 3, 7)
    gm, graph = _converted(x)
    as_ge = execute(graph, [x])
    tanh = torch.nn.functional.gelu(x, approximate="tanh")
    assert torch.equal(as_ge[0], tanh) and torch.equal(as_ge[1], tanh)
    as_exact = execute(graph, [x], kernels_by_op=exact_kernels(graph.ops, {n.name: n for n in gm.graph.nodes}))
    assert torch.equal(as_exact[0], torch.nn.functional.gelu(x)) and torch.equal(as_exact[1], tanh)
    assert not torch.equal(as_exact[0], tanh)


def test_an_op_whose_fx_node_is_unknown_is_taken_as_asking_the_exact_form():
    _, graph = _converted(torch.ones(2))
    assert len(exact_kernels(graph.ops, {})) == 2


def test_the_fused_add_rms_norm_quant_with_the_unfused_rounding_is_the_two_operators_it_replaced():
    """TorchAir's pattern pass fuses npu_add_rms_norm + npu_dynamic_quant into
    AddRmsNormDynamicQuant, which quantises the float32 RMSNorm result: its kernel keeps
    that precision, and its registered unfused form rounds as the two operators do."""
    from fxlab.ir.approximations import FUSED_PRECISION
    from fxlab.ir.kernels import npu_norm_reference, npu_quant_reference
    from fxlab.ir.model import IrOp, TensorDesc

    form = GE_APPROXIMATIONS["AddRmsNormDynamicQuant"]
    assert form.kind == FUSED_PRECISION
    torch.manual_seed(3)
    x1, x2, gamma = torch.randn(16, 64).half(), torch.randn(16, 64).half(), (torch.rand(64) + 0.5).half()
    op = IrOp("fused", "AddRmsNormDynamicQuant", ["x1:0", "x2:0", "gamma:0"], input_desc=tuple(map(TensorDesc, ("x1", "x2", "gamma"))))
    y, _, added = npu_norm_reference.add_rms_norm(x1, x2, gamma, 1e-6)
    quantised, scale = npu_quant_reference.dynamic_quant(y)
    unfused = form.exact_kernel(op, [x1, x2, gamma], {"epsilon": 1e-6, "output_mask": [True, False], "dst_type": 2})
    assert torch.equal(unfused[0], quantised) and torch.equal(unfused[3], scale) and torch.equal(unfused[2], added)
    fused = npu_norm_reference.add_rms_norm_dynamic_quant(x1, x2, gamma, epsilon=1e-6, output_mask=[True, False])
    assert not torch.equal(fused[3], scale)  # the float32 result gives other scales (its documented precision)
