from __future__ import annotations

import pytest
import torch

from tests.functional_graphs import functional_graph
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.infra import PassFailedError
from fxlab.passes.pre_ge import pre_ge_graph
from tests.passes.planned import planned_passes
from fxlab.passes.torchair_options import TorchAirOptions


def _model(x, w):
    y = x.repeat(1, 1) @ w.t()  # a no-op repeat, a transposed weight
    return (y.view(2, 3).view(3, 2) * 2,)  # views back to the base's shape


def _names(options: TorchAirOptions) -> list[str]:
    return [p.name for p in planned_passes(options)]


def test_passes_run_in_torchairs_order_with_its_defaults():
    assert _names(TorchAirOptions()) == [
        "remove_noop_ops", "recover_view_inplace_pattern", "optimize_sym_input", "apply_pattern_passes", "view_to_reshape", "valid_graph", "optimize_views",
    ]
    user = TorchAirOptions(
        custom_pre_pass=lambda gm, inputs, config: None, custom_post_pass=lambda gm, inputs, config: None,
        remove_noop_ops=False, enable_view_optimize=False, pattern_fusion_pass=False,
    )
    assert _names(user) == ["post_grad_custom_pre_pass", "recover_view_inplace_pattern", "optimize_sym_input", "view_to_reshape", "post_grad_custom_post_pass", "valid_graph"]
    assert [p.origin for p in planned_passes(user)][0] == "user"


def test_pre_ge_is_the_ge_graph_whatever_the_mode_says():
    assert "optimize_sym_input" in _names(TorchAirOptions(mode="reduce-overhead"))


def test_each_pass_says_what_it_did_and_the_functional_graph_is_untouched():
    x, w = torch.randn(3, 4), torch.randn(2, 4)
    functional = functional_graph(_model, x, w)
    before = [n.name for n in functional.graph.nodes]
    result = pre_ge_graph(functional)
    assert [n.name for n in functional.graph.nodes] == before
    by_name = {r.name: r for r in result.records}
    assert by_name["remove_noop_ops"].removed == ["repeat"]
    assert by_name["recover_view_inplace_pattern"].changed is False
    assert by_name["view_to_reshape"].changed and not by_name["view_to_reshape"].removed
    assert by_name["view_to_reshape"].changed_nodes == ["view", "view_1"]
    assert by_name["optimize_views"].removed == ["t", "view", "view_1"]
    assert [str(n.target) for n in result.gm.graph.nodes if n.op == "call_function"] == ["aten.permute.default", "aten.mm.default", "aten.mul.Tensor"]
    torch.testing.assert_close(result.gm(x, w)[0], _model(x, w)[0])


def test_the_conversion_of_pre_ge_has_fewer_ops_than_of_functional():
    functional = functional_graph(_model, torch.randn(3, 4), torch.randn(2, 4))
    gm = pre_ge_graph(functional).gm
    plain = convert_to_ascend_ir(functional).graph.types
    optimized = convert_to_ascend_ir(gm).graph.types
    assert "Tile" in plain and "Tile" not in optimized and optimized.count("Reshape") == 0
    assert optimized == ["Data", "Data", "Const", "Transpose", "MatMul", "Const", "Mul", "Cast", "NetOutput"]


def test_disabled_passes_change_nothing():
    functional = functional_graph(_model, torch.randn(3, 4), torch.randn(2, 4))
    result = pre_ge_graph(functional, TorchAirOptions(remove_noop_ops=False, enable_view_optimize=False))
    assert [r.name for r in result.records if r.changed] == ["view_to_reshape"]
    assert "aten.repeat.default" in [str(n.target) for n in result.gm.graph.nodes]


def test_a_users_pass_is_called_as_torchair_calls_it_and_its_graphs_are_kept():
    seen = []

    def double_everything(gm, example_inputs, config):
        seen.append(([tuple(v.shape) for v in example_inputs], config))
        for node in gm.graph.nodes:
            if node.target is torch.ops.aten.mul.Tensor:
                node.args = (node.args[0], 4)

    config = object()
    functional = functional_graph(_model, torch.randn(3, 4), torch.randn(2, 4))
    result = pre_ge_graph(functional, TorchAirOptions(custom_post_pass=double_everything, config=config))
    assert seen == [([(3, 4), (2, 4)], config)]
    record = next(r for r in result.records if r.name == "post_grad_custom_post_pass")
    assert record.origin == "user" and record.changed and record.changed_nodes == [] and "double_everything" in record.notes[0]
    (run,) = result.user_runs
    assert run.name == "post_grad_custom_post_pass" and "test_pre_ge.py" in run.function
    assert [n.args[1] for n in run.before.graph.nodes if n.target is torch.ops.aten.mul.Tensor] == [2]
    assert [n.args[1] for n in run.after.graph.nodes if n.target is torch.ops.aten.mul.Tensor] == [4]


def test_a_failing_pass_is_named_in_the_error():
    def broken(gm, example_inputs, config):
        raise ValueError("bad rewrite")

    functional = functional_graph(_model, torch.randn(3, 4), torch.randn(2, 4))
    with pytest.raises(PassFailedError, match=r"the user's pass post_grad_custom_pre_pass failed: \S*broken \(test_pre_ge.py:\d+\) raised ValueError: bad rewrite"):
        pre_ge_graph(functional, TorchAirOptions(custom_pre_pass=broken))
