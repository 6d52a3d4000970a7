from __future__ import annotations

import torch

import fxlab.scope as scope
from tests.functional_graphs import functional_graph
from fxlab.passes.pattern_fusion import PatternFusion, RegisteredPattern


def _swish_to_silu() -> RegisteredPattern:
    def swish(x):
        return x * torch.sigmoid(x)

    def relu_it(x):  # an op the replacement's trace keeps whole
        return torch.ops.aten.relu.default(x)

    return RegisteredPattern(swish, relu_it, (torch.randn(4, 8),), where="here.py:1")


def test_each_match_is_recorded_with_the_nodes_replaced_and_added():
    def f(x, y):
        a = x * torch.sigmoid(x)
        b = y * torch.sigmoid(x)  # not the pattern: y times sigmoid of x
        return (a + b,)

    gm = functional_graph(f, torch.randn(4, 8), torch.randn(4, 8))
    fusion = PatternFusion((_swish_to_silu(),), "max-autotune")
    result = fusion(gm)
    targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    assert targets == ["aten.relu.default", "aten.sigmoid.default", "aten.mul.Tensor", "aten.add.Tensor"]  # mul_1 is no swish
    (entry,) = fusion.report.to_json()
    assert entry["pattern"].startswith("_swish_to_silu.<locals>.swish") and entry["registered_at"] == "here.py:1"
    (match,) = entry["matches"]
    assert [r["target"] for r in match["replaced"]] == ["aten.sigmoid.default", "aten.mul.Tensor"]
    assert [r["target"] for r in match["added"]] == ["aten.relu.default"]
    assert result.changed and result.notes == [f"{entry['pattern']}: 1 match(es)"]


def test_a_pattern_that_matches_nothing_is_named_and_no_pattern_is_a_note():
    gm = functional_graph(lambda x: (x + 1,), torch.randn(4, 8))
    fusion = PatternFusion((_swish_to_silu(),), "reduce-overhead")
    result = fusion(gm)
    assert not result.changed and fusion.report.unmatched() == fusion.patterns
    assert result.notes[-1].endswith("(here.py:1) matched nothing")
    assert PatternFusion((), "max-autotune")(gm).notes[0] == "no pattern registered (torchair.register_replacement)"


def test_a_match_across_two_streams_is_not_fused():
    def f(x):
        s = torch.sigmoid(x)
        with scope.npu_stream_switch("side", 0):
            y = x * s
        return (y,)

    gm = functional_graph(f, torch.randn(4, 8))
    assert not PatternFusion((_swish_to_silu(),), "reduce-overhead")(gm).changed


def test_the_users_extra_check_decides_last():
    seen = []

    def refuse(match):
        seen.append(len(match.nodes))
        return False

    pattern = _swish_to_silu()
    refusing = RegisteredPattern(pattern.search_fn, pattern.replace_fn, pattern.example_inputs, extra_check=refuse)
    gm = functional_graph(lambda x: (x * torch.sigmoid(x),), torch.randn(4, 8))
    assert not PatternFusion((refusing,), "max-autotune")(gm).changed and seen == [2]
