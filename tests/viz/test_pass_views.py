from __future__ import annotations

from rich.console import Console

from fxlab.capture.trace import GraphTrace
from fxlab.passes.infra import PassRecord
from fxlab.viz.pass_views import aclgraph_scopes_view, passes_view, patterns_view, streams_lines, torchair_aclgraph_line


def _text(renderable) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def _graph() -> GraphTrace:
    graph = GraphTrace(index=0)
    graph.passes["aclgraph"] = [
        PassRecord("remove_noop_ops", False),
        PassRecord("post_grad_custom_post_pass", True, removed=["a"], added=["b", "c"], origin="user", notes=["the user's f (m.py:3)"]),
        PassRecord("view_to_reshape", True, changed_nodes=["view"]),
    ]
    graph.patterns = [
        {"pattern": "p (x.py:1)", "replacement": "r (x.py:4)", "registered_at": "x.py:9", "registrar": "torchair.register_replacement",
         "matches": [{"replaced": [{"name": "mul", "target": "aten.mul.Tensor", "source": "/m/model.py:7"}], "added": [{"name": "silu", "target": "aten.silu.default", "source": ""}]}]},
        {"pattern": "q (x.py:12)", "replacement": "r (x.py:4)", "registered_at": "x.py:20", "registrar": "npugraph_ex.register_replacement", "matches": []},
    ]
    return graph


def test_the_pass_list_marks_the_users_passes_and_says_what_each_changed():
    text = _text(passes_view(_graph(), "aclgraph"))
    assert "remove_noop_ops: no change" in text
    assert "post_grad_custom_post_pass (user): -1 node(s) (a); +2 node(s) (b, c)" in text and "the user's f (m.py:3)" in text
    assert "view_to_reshape: ~1 node(s) (view)" in text


def test_each_pattern_shows_its_matches_and_one_without_is_named():
    text = _text(patterns_view(_graph()))
    assert "pattern p (x.py:1) -> r (x.py:4) (registered at x.py:9): 1 match(es)" in text
    assert "match 1: replaced mul (aten.mul.Tensor, model.py:7)" in text and "added silu (aten.silu.default)" in text
    assert "pattern q (x.py:12) -> r (x.py:4) (registered at x.py:20): matched nothing" in text


def test_torchairs_graph_and_the_streams_are_summed_up():
    graph = _graph()
    assert torchair_aclgraph_line(graph) is None
    graph.torchair_aclgraph = {"same": False, "differences": ["-call_function relu", "+call_function sigmoid"]}
    assert "give another graph than fxlab's" in _text(torchair_aclgraph_line(graph))
    graph.streams = {"streams": {"default": 3, "side": 1}, "limits": {"default": ["8|16"], "side": ["8|16"]}, "events": [], "core_limit_calls": [], "warnings": ["[stream-cores] x"], "notes": []}
    text = "\n".join(_text(line) for line in streams_lines(graph))
    assert "streams: default (3 op(s), core limit 8|16), side (1 op(s), core limit 8|16)" in text and "graph 0: [stream-cores] x" in text

    class Trace:
        mode, graphs = "reduce-overhead", [graph]

    assert "a limit_core_num scope is a stream core limit" in _text(aclgraph_scopes_view(Trace()))
