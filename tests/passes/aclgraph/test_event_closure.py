from __future__ import annotations

import torch

import fxlab.scope as scope
from tests.functional_graphs import functional_graph
from fxlab.passes.aclgraph.capture_info import CaptureInfo
from fxlab.passes.aclgraph.event_closure import apply_event_closure


def _two_streams(x, w):
    a = x @ w
    with scope.npu_stream_switch("side", 1):
        b = torch.relu(x)
    return (a + b,)


def _calls(gm):
    return [(str(n.target), n.args, dict(n.kwargs)) for n in gm.graph.nodes if n.op == "call_function" and "air." in str(n.target)]


def test_a_stream_region_waits_for_the_graphs_entry_and_the_output_waits_for_it():
    gm = functional_graph(_two_streams, torch.randn(2, 2), torch.randn(2, 2))
    info = CaptureInfo("graph_1")
    result = apply_event_closure(gm, info)
    assert result.changed and result.notes == ["stream region side (scope_enter) closed by events"]
    names = [n.name for n in gm.graph.nodes]
    assert names[0] == "tagged_event_record_default"  # before the first input
    assert _calls(gm) == [
        ("air.tagged_event_record.default", ("graph_1_arg0_1", True), {}),
        ("air.scope_enter.default", (["_user_stream_label", "_user_stream_priority", "_enable_inner_parallel"], ["side", "1", "True"]), {"need_execute": True}),
        ("air.tagged_event_wait.default", ("graph_1_arg0_1", True), {}),
        ("air.tagged_event_record.default", ("graph_1_scope_exit", True), {}),
        ("air.scope_exit.default", (), {"need_execute": True}),
        ("air.tagged_event_wait.default", ("graph_1_scope_exit", True), {}),
    ]
    assert names[-2:] == ["tagged_event_wait_default_1", "output"]
    assert info.tagged_event_names == ["graph_1_arg0_1", "graph_1_scope_exit"] and info.user_stream_labels == ["side"]
    assert info.stream_enter_nodes == {"scope_enter": "side"} and info.stream_exit_nodes == ["scope_exit"]
    torch.testing.assert_close(gm(torch.ones(2, 2), torch.ones(2, 2))[0], torch.full((2, 2), 3.0))


def test_scopes_without_streams_only_run_at_capture():
    def f(x):
        with scope.limit_core_num(4, 8):
            y = x * 2
        return (y,)

    gm = functional_graph(f, torch.randn(3))
    info = CaptureInfo("graph_1")
    assert apply_event_closure(gm, info).changed
    assert [dict(n.kwargs) for n in gm.graph.nodes if "scope" in str(n.target)] == [{"need_execute": True}] * 2
    assert info.tagged_event_names == [] and not any("tagged" in str(n.target) for n in gm.graph.nodes)


def test_npugraph_ex_closes_a_stream_a_users_pass_made_as_torchair_does():
    def f(x):
        torch.ops.npugraph_ex.scope_enter(["_user_stream_label"], ["mine"])
        y = x + 1
        torch.ops.npugraph_ex.scope_exit()
        return (y * 2,)

    gm = functional_graph(f, torch.randn(3))
    info = CaptureInfo("graph_2", namespace="npugraph_ex")
    apply_event_closure(gm, info)
    events = [(str(n.target), n.args) for n in gm.graph.nodes if "tagged" in str(n.target)]
    assert events == [
        ("npugraph_ex.tagged_event_record.default", ("graph_2_arg0_1", True)),
        ("npugraph_ex.tagged_event_wait.default", ("graph_2_arg0_1", True)),
        ("npugraph_ex.tagged_event_record.default", ("graph_2_scope_exit", True)),
        ("npugraph_ex.tagged_event_wait.default", ("graph_2_scope_exit", True)),
    ]
