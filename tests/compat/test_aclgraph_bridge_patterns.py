"""A user's ``register_replacement`` pattern and post pass on the aclgraph path: TorchAir's
own passes (and npugraph_ex's) give fxlab's graph, with the pattern fused. In a module of
its own: TorchAir's pattern pass is global to its package, so the session must not be
shared with other tests."""

from __future__ import annotations

from fxlab.compat.aclgraph_bridge import observe_user_registrations
from fxlab.compat.npugraph_ex_loader import locate_npugraph_ex, npugraph_ex_session
from tests.compat.test_aclgraph_bridge import MODES, ROOT, compare


def test_a_users_pattern_and_post_pass_give_torchairs_graph_in_both_modes(torchair_path) -> None:
    from fxlab.compat.bridge import open_torchair

    # A session of its own: TorchAir's pattern pass is global to its package.
    with open_torchair(torchair_path) as torchair, npugraph_ex_session(locate_npugraph_ex(torchair.report.path)) as npugraph_ex:
        observe_user_registrations(torchair.package)
        plugin = ROOT / "examples" / "plugins" / "swish_fusion.py"
        for mode in MODES:
            ((index, differences, ours),) = compare((torchair, npugraph_ex), ROOT / "examples" / "user_passes.py", mode, [plugin])
            assert differences == [], "\n".join(differences)
            targets = [str(n.target) for n in ours.gm.graph.nodes if n.op == "call_function"]
            assert "fxlab_example.swish.default" in targets and "aten.sigmoid.default" not in targets
            assert [r.name for r in ours.records if r.origin == "user"] == ["apply_pattern_passes", "post_grad_custom_post_pass"]
