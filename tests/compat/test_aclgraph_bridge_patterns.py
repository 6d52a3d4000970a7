"""A user's ``register_replacement`` pattern and post pass on the aclgraph path: fxlab's
graph is the one TorchAir's own backend (and npugraph_ex's) makes end to end, with the
pattern fused. In a module of its own: TorchAir's pattern pass is global to its package,
so the session must not be shared with other tests."""

from __future__ import annotations

from fxlab.passes.aclgraph.pipeline import aclgraph_graph
from tests.compat.end_to_end import MODES, ROOT, compare, sides


def test_a_users_pattern_and_post_pass_give_torchairs_graph_in_both_modes(torchair_path) -> None:
    with sides(torchair_path) as side:
        plugin = ROOT / "examples" / "plugins" / "swish_fusion.py"
        for mode in MODES:
            comparison = compare(side, ROOT / "examples" / "user_passes.py", mode, plugins=[plugin])
            assert comparison.problems() == [], "\n".join(comparison.problems())
            (graph,) = comparison.captured.graphs
            ours = aclgraph_graph(graph.modules["functional"], comparison.captured.options, graph.index)
            targets = [str(n.target) for n in ours.gm.graph.nodes if n.op == "call_function"]
            assert "fxlab_example.swish.default" in targets and "aten.sigmoid.default" not in targets
            assert [r.name for r in ours.records if r.origin == "user"] == ["apply_pattern_passes", "post_grad_custom_post_pass"]
