from __future__ import annotations

import torch

from fxlab.capture.stages import functional_graph
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.pre_ge import PreGeOptions, planned_passes, pre_ge_graph


def _model(x, w):
    y = x.repeat(1, 1) @ w.t()  # a no-op repeat, a transposed weight
    return (y.view(2, 3).view(3, 2) * 2,)  # views back to the base's shape


def test_passes_run_in_torchairs_order_with_its_defaults():
    assert [name for name, _ in planned_passes(PreGeOptions())] == ["remove_noop_ops", "recover_view_inplace_pattern", "optimize_sym_input", "pattern_fusion", "view_to_reshape", "optimize_views"]
    user = PreGeOptions(custom_pre_pass=lambda gm: None, custom_post_pass=lambda gm: None, remove_noop_ops=False, enable_view_optimize=False, ge_graph_mode=False)
    # pattern fusion is its own setting, on in either mode
    assert [name for name, _ in planned_passes(user)] == ["post_grad_custom_pre_pass", "recover_view_inplace_pattern", "pattern_fusion", "view_to_reshape", "post_grad_custom_post_pass"]


def test_each_pass_says_what_it_did_and_the_functional_graph_is_untouched():
    x, w = torch.randn(3, 4), torch.randn(2, 4)
    functional = functional_graph(_model, x, w)
    before = [n.name for n in functional.graph.nodes]
    gm, records = pre_ge_graph(functional)
    assert [n.name for n in functional.graph.nodes] == before
    by_name = {r.name: r for r in records}
    assert by_name["remove_noop_ops"].removed == ["repeat"]
    assert by_name["recover_view_inplace_pattern"].changed is False
    assert by_name["view_to_reshape"].changed and not by_name["view_to_reshape"].removed
    assert by_name["optimize_views"].removed == ["t", "view", "view_1"]
    assert [str(n.target) for n in gm.graph.nodes if n.op == "call_function"] == ["aten.permute.default", "aten.mm.default", "aten.mul.Tensor"]
    torch.testing.assert_close(gm(x, w)[0], _model(x, w)[0])


def test_the_conversion_of_pre_ge_has_fewer_ops_than_of_functional():
    functional = functional_graph(_model, torch.randn(3, 4), torch.randn(2, 4))
    gm, _ = pre_ge_graph(functional)
    plain = convert_to_ascend_ir(functional).graph.types
    optimized = convert_to_ascend_ir(gm).graph.types
    assert "Tile" in plain and "Tile" not in optimized and optimized.count("Reshape") == 0
    assert optimized == ["Data", "Data", "Const", "Transpose", "MatMul", "Const", "Mul", "Cast", "NetOutput"]


def test_disabled_passes_change_nothing():
    functional = functional_graph(_model, torch.randn(3, 4), torch.randn(2, 4))
    gm, records = pre_ge_graph(functional, PreGeOptions(remove_noop_ops=False, enable_view_optimize=False))
    assert [r.name for r in records if r.changed] == ["view_to_reshape"]
    assert "aten.repeat.default" in [str(n.target) for n in gm.graph.nodes]


def test_a_failing_pass_is_named_in_the_error():
    import pytest

    def broken(gm):
        raise ValueError("bad rewrite")

    functional = functional_graph(_model, torch.randn(3, 4), torch.randn(2, 4))
    with pytest.raises(RuntimeError, match="TorchAir's pre-conversion pass post_grad_custom_pre_pass failed: ValueError: bad rewrite"):
        pre_ge_graph(functional, PreGeOptions(custom_pre_pass=broken))
