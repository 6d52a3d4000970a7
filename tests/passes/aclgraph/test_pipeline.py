from __future__ import annotations

import inspect
import subprocess
import sys

import pytest
import torch

import fxlab.scope as scope
from tests.functional_graphs import functional_graph
from fxlab.passes.aclgraph.pipeline import aclgraph_graph, graph_name, mutated_user_inputs
from fxlab.passes.torchair_options import TorchAirOptions

TORCHAIR_ORDER = [
    "replace_stream_event_pass", "remove_noop_ops", "recover_view_inplace_pattern", "apply_pattern_passes", "view_to_reshape",
    "valid_graph", "remove_cat_ops", "apply_event_closure_with_multi_stream", "apply_event_record", "eliminate_dead_code",
    "reinplace_inplaceable_ops", "reinplace_input_mutated_ops", "decompose_auto_functionalized", "replace_dynamic_workspace_ops",
    "replace_core_limit_nodes", "resolve_default_stream_markers",
]


def _mix(x, cache):
    h = x * 2
    h.relu_()
    cache[:, :2] = h
    x.add_(1)
    return (h.sigmoid(),)


def test_reduce_overhead_runs_torchairs_passes_in_its_order():
    gm = functional_graph(_mix, torch.randn(2, 2), torch.zeros(2, 4))
    result = aclgraph_graph(gm, TorchAirOptions(mode="reduce-overhead"))
    assert [r.name for r in result.records] == TORCHAIR_ORDER
    assert "optimize_sym_input" not in [r.name for r in result.records]  # GE graph mode only


def test_npugraph_ex_adds_its_own_passes_and_options_turn_passes_off():
    gm = functional_graph(_mix, torch.randn(2, 2), torch.zeros(2, 4))
    names = [r.name for r in aclgraph_graph(gm, TorchAirOptions(mode="npugraph_ex")).records]
    assert names[names.index("decompose_auto_functionalized") + 1] == "eliminate_self_copy"
    assert names[names.index("replace_core_limit_nodes") + 1] == "replace_deterministic_nodes"
    off = TorchAirOptions(mode="reduce-overhead", remove_cat_ops=False, inplace_pass=False, input_inplace_pass=False, remove_noop_ops=False)
    names = [r.name for r in aclgraph_graph(gm, off).records]
    assert not {"remove_cat_ops", "reinplace_inplaceable_ops", "reinplace_input_mutated_ops", "decompose_auto_functionalized", "remove_noop_ops"} & set(names)


def test_the_aten_inplace_mix_is_written_in_place_and_computes_what_eager_does():
    x, cache = torch.randn(2, 2), torch.zeros(2, 4)
    gm = functional_graph(_mix, x, cache)
    before = [n.name for n in gm.graph.nodes]
    result = aclgraph_graph(gm, TorchAirOptions(mode="reduce-overhead"))
    assert [n.name for n in gm.graph.nodes] == before  # the functional graph is left as it was
    targets = [str(n.target) for n in result.gm.graph.nodes if n.op == "call_function"]
    assert {"aten.relu_.default", "aten.add_.Tensor", "aten.sigmoid_.default"} <= set(targets)
    x1, cache1, x2, cache2 = x.clone(), cache.clone(), x.clone(), cache.clone()
    want = _mix(x1, cache1)[0]
    got = result.gm(x2, cache2)[0]
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(x2, x1)
    torch.testing.assert_close(cache2, cache1)
    assert result.info.mutated_user_inputs == ["arg0_1", "arg1_1"]
    assert "def forward(*args, node_info=[], is_capturing: bool = False):" in result.capture_code


def test_graph_names_and_written_inputs_are_torchairs():
    assert graph_name(0) == "graph_1"
    gm = functional_graph(lambda x: (x.add_(1),), torch.randn(2))
    assert mutated_user_inputs(gm) == ["arg0_1"]


def test_a_graph_with_a_stream_switch_keeps_its_markers_and_gets_events():
    def f(x):
        with scope.npu_stream_switch("side", 0):
            y = x * 2
        return (y + 1,)

    result = aclgraph_graph(functional_graph(f, torch.randn(3)), TorchAirOptions(mode="reduce-overhead"))
    assert result.info.user_stream_labels == ["side"] and len(result.info.tagged_event_names) == 2
    assert "with torch.npu.stream(_GLOBAL_USER_TAG_TO_STREAM['side']):" in result.capture_code


FRESH_PROCESS = """
import torch
from tests.functional_graphs import functional_graph
from fxlab.passes.aclgraph.pipeline import aclgraph_graph
from fxlab.passes.torchair_options import TorchAirOptions

gm = functional_graph(lambda x: (x * 2,), torch.randn(3))
print(len(aclgraph_graph(gm, TorchAirOptions(mode=MODE)).records))
"""


@pytest.mark.parametrize("mode", ["reduce-overhead", "npugraph_ex"])
def test_the_passes_run_in_a_process_that_imported_nothing_else(mode):
    # Every operator a pass names (scope markers, event operators) is defined by the pass's
    # own imports, not by whatever a test process happened to import first.
    code = FRESH_PROCESS.replace("MODE", repr(mode))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.split()[-1]) > 10


@torch.library.custom_op("fxlab_test::scale_into", mutates_args=("out",))
def _scale_into(out: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    out.copy_(src * 3)
    return src + 1


@_scale_into.register_fake
def _(out: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(src)


def _writes_a_doubled_input(x, y):
    doubled = x * 2
    extra = torch.ops.fxlab_test.scale_into(doubled, y)
    return (doubled + extra,)


def _line(node: torch.fx.Node) -> int | None:
    """The line of this file the node's stack trace names (parsed, not the cached source)."""
    from fxlab.source_lines import parse_source

    found = parse_source(node)
    return int(found.rsplit(":", 1)[1]) if found and found.rsplit(":", 1)[0].endswith("test_pipeline.py") else None


@pytest.mark.parametrize("mode", ["reduce-overhead", "npugraph_ex"])
def test_every_node_keeps_its_own_source_line_through_the_passes(mode):
    # Inductor's decompose_auto_functionalized hands the custom op's base (the mul) the
    # stack trace of the getitem it replaces: without keeping sources, `doubled = x * 2`
    # was listed under the next statement.
    from tests.sessions import capture_of

    captured = capture_of(_writes_a_doubled_input, (torch.randn(2, 3), torch.randn(2, 3)), mode=mode)
    (graph,), (live,) = captured.trace.graphs, captured.graphs
    functional = {n.name: _line(n) for n in live.modules["functional"].graph.nodes if n.op == "call_function"}
    doubled = inspect.getsourcelines(_writes_a_doubled_input)[1] + 1
    assert functional["mul"] == doubled
    done = [r.name for r in graph.pass_records("aclgraph") if r.removed]
    assert "decompose_auto_functionalized" in done
    final = live.modules["aclgraph"]
    assert {n.name: _line(n) for n in final.graph.nodes if n.name in functional} == {
        n.name: functional[n.name] for n in final.graph.nodes if n.name in functional
    }
    code = final.print_readable(print_output=False)  # as aclgraph.py shows it: each node under its line
    assert code.index("doubled = x * 2") < code.index("torch.ops.aten.mul.Tensor") < code.index("extra = torch.ops.fxlab_test")
