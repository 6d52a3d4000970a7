from __future__ import annotations

import torch

from tests.functional_graphs import functional_graph
from fxlab.passes.infra import PassManager
from fxlab.passes.optimize_fx import example_inputs, optimize_fx_passes
from fxlab.passes.torchair_options import TorchAirOptions


def test_the_modes_share_the_passes_but_only_the_ge_graph_reads_sizes_from_tensors():
    ge = [p.name for p in optimize_fx_passes(TorchAirOptions()).passes]
    acl = [p.name for p in optimize_fx_passes(TorchAirOptions(mode="reduce-overhead")).passes]
    assert ge == ["remove_noop_ops", "recover_view_inplace_pattern", "optimize_sym_input", "apply_pattern_passes", "view_to_reshape"]
    assert acl == [p for p in ge if p != "optimize_sym_input"]
    assert [p.name for p in optimize_fx_passes(TorchAirOptions(pattern_fusion_pass=False)).passes].count("apply_pattern_passes") == 0


def test_users_passes_come_first_and_last_and_keep_their_graphs():
    def pre(gm, inputs, config):
        for node in gm.graph.nodes:
            if node.target is torch.ops.aten.add.Tensor:
                node.args = (node.args[0], 2)

    def post(gm, inputs, config):
        return None  # looks, changes nothing

    plan = optimize_fx_passes(TorchAirOptions(custom_pre_pass=pre, custom_post_pass=post))
    assert [(p.name, p.origin) for p in plan.passes][:: len(plan.passes) - 1] == [("post_grad_custom_pre_pass", "user"), ("post_grad_custom_post_pass", "user")]
    gm = functional_graph(lambda x: (x + 1,), torch.randn(3))
    gm, records = PassManager(plan.passes).run(gm)
    assert records[0].changed and not records[-1].changed
    assert [run.name for run in plan.user_runs] == ["post_grad_custom_pre_pass", "post_grad_custom_post_pass"]
    before, after = plan.user_runs[0].before, plan.user_runs[0].after
    assert before(torch.ones(3))[0].tolist() == [2.0] * 3 and after(torch.ones(3))[0].tolist() == [3.0] * 3
    assert [tuple(v.shape) for v in example_inputs(gm)] == [(3,)]


def test_a_user_pass_that_returns_a_new_graph_is_named_with_its_line():
    import pytest

    from fxlab.passes.infra import PassFailedError

    def rebuild(gm, inputs, config):
        return torch.fx.GraphModule(gm, gm.graph)

    plan = optimize_fx_passes(TorchAirOptions(custom_post_pass=rebuild))
    with pytest.raises(PassFailedError) as raised:
        PassManager(plan.passes).run(functional_graph(lambda x: (x + 1,), torch.randn(3)))
    message = str(raised.value)
    assert message.startswith("the user's pass post_grad_custom_post_pass failed: ") and ".rebuild (test_optimize_fx.py:" in message
    assert message.endswith("returned a new GraphModule; TorchAir ignores what a custom pass returns, so the pass must change gm in place")
