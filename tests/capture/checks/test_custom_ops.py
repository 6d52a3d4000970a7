"""Custom ops inside a trace: a wrong fake function and an op left out of the graph make
the trace partial, with the op named."""
from __future__ import annotations

from tests.sessions import capture_of, trace_of
from fxlab.capture.checks.custom_ops import op_left_out_of_graph

WRONG_META = """
import torch
lib = torch.library.Library("fxlabwrongmeta", "DEF")
lib.define("twice(Tensor x) -> Tensor")
lib.impl("twice", lambda x: x * 2, "CPU")
lib.impl("twice", lambda x: x.new_empty((x.shape[0] + 1,), dtype=torch.float16), "Meta")
def f(x):
    return torch.ops.fxlabwrongmeta.twice(x + 1)
model = f
example_inputs = (torch.randn(3),)
"""

NO_META = """
import torch
lib = torch.library.Library("fxlabnometa", "DEF")
lib.define("twice(Tensor x) -> Tensor")
lib.impl("twice", lambda x: x * 2, "CPU")
def f(x):
    return torch.ops.fxlabnometa.twice(x + 1) - 1
model = f
example_inputs = (torch.randn(3),)
"""

RIGHT_META_INPLACE = """
import torch
lib = torch.library.Library("fxlabrightmeta", "DEF")
lib.define("bump(Tensor(a!) x, Tensor y) -> Tensor")
def bump(x, y):
    x.add_(y)
    return y * 2
lib.impl("bump", bump, "CPU")
lib.impl("bump", lambda x, y: torch.empty_like(y), "Meta")
def f(x, y):
    return torch.ops.fxlabrightmeta.bump(x, y) + 1
model = f
example_inputs = (torch.randn(3), torch.randn(3))
"""


def test_wrong_meta_shape_and_dtype_make_the_trace_partial(write_model):
    # The compiled run calls the real kernel, so eager matched and the trace said ok.
    trace = trace_of(write_model(WRONG_META), stages=("functional",))
    assert trace.check.ok and trace.status == "partial"
    (graph,) = trace.graphs
    assert "custom op fxlabwrongmeta::twice (node twice, " in graph.error
    assert "output 0: its fake (Meta) function gives float16[4], the kernel float32[3] on the traced inputs" in graph.error


def test_custom_op_without_meta_is_named_with_reason_and_fix(write_model):
    trace = trace_of(write_model(NO_META), stages=("dynamo",))
    assert trace.status == "partial"
    assert trace.graphs[0].error.startswith("custom op fxlabnometa::twice ran outside the graph: Dynamo could not run it on fake tensors")
    assert '@torch.library.register_fake("fxlabnometa::twice")' in trace.graphs[0].error


# The op is the function's first call: the code before the break compiles to nothing, so
# no graph ends there to carry Dynamo's reason.
NO_META_FIRST = """
import torch
lib = torch.library.Library("fxlabnometafirst", "DEF")
lib.define("scale_add(Tensor x, Tensor y, float alpha) -> Tensor")
lib.impl("scale_add", lambda x, y, alpha: x + alpha * y, "CPU")
def f(x, y):
    return torch.ops.fxlabnometafirst.scale_add(x, y, 0.5).relu()
model = f
example_inputs = (torch.randn(3, 4), torch.randn(3, 4))
"""


def test_custom_op_without_meta_before_any_graph_is_a_problem_of_the_trace(write_model, tmp_path):
    from fxlab.capture.serialize import load_trace
    from fxlab.cli.files import save_trace

    trace = trace_of(write_model(NO_META_FIRST))
    assert [g.error for g in trace.graphs if g.error] == [] and trace.check.ok
    assert trace.status == "partial" and len(trace.problems) == 1
    assert trace.problems[0].startswith("custom op fxlabnometafirst::scale_add ran outside the graph: Dynamo could not run it")
    save_trace(trace, tmp_path / "saved")
    assert load_trace(tmp_path / "saved").problems == trace.problems


def test_right_meta_of_an_inplace_op_passes(write_model):
    from fxlab.capture.pipeline import assumed_ge_types

    trace = trace_of(write_model(RIGHT_META_INPLACE))
    assert [g.error for g in trace.graphs] == [None] and trace.check.ok and trace.ir_check.ok
    # Only the GE op is unverified: no Ascend C prototype says a GE op Bump exists.
    assert trace.status == "unverified" and assumed_ge_types(trace) == ["graph 0: fxlabrightmeta.bump.default -> Bump"]


def test_graph_break_of_an_aten_op_is_not_blamed_on_a_custom_op():
    assert op_left_out_of_graph("Developer debug context: unsupported operator: aten.nonzero.default") is None
    assert op_left_out_of_graph(None) is None


DYNAMIC_RIGHT_AND_WRONG = """
import torch
lib = torch.library.Library("fxlabdynmeta", "DEF")
lib.define("rows(Tensor x) -> Tensor")
lib.define("short(Tensor x) -> Tensor")
lib.impl("rows", lambda x: x.sum(-1), "CPU")
lib.impl("rows", lambda x: x.new_empty(x.shape[:-1]), "Meta")
lib.impl("short", lambda x: x.sum(-1), "CPU")
lib.impl("short", lambda x: x.new_empty((x.shape[0] - 1,)), "Meta")
def f(x):
    return torch.ops.fxlabdynmeta.rows(x) * 2, torch.ops.fxlabdynmeta.short(x)
model = f
example_inputs = (torch.randn(4, 3),)
compile_options = {"dynamic": True}
"""


def test_with_symbolic_sizes_the_fake_sizes_are_compared_at_the_runs_values_without_fixing_them(write_model):
    from torch._guards import detect_fake_mode

    captured = capture_of(write_model(DYNAMIC_RIGHT_AND_WRONG), stages=("functional",))
    (graph,) = captured.trace.graphs
    # rows is right at every size; short's fake is one row short: s0 - 1 is 3, the kernel 4.
    assert "fxlabdynmeta::rows" not in graph.error
    assert "custom op fxlabdynmeta::short (node short, " in graph.error and "gives float32[s" in graph.error
    functional = captured.graphs[0].modules["functional"]
    shape_env = detect_fake_mode([n.meta.get("val") for n in functional.graph.nodes if n.op == "placeholder"]).shape_env
    assert not {s: v for s, v in shape_env.replacements.items() if v.is_number}  # no size symbol was fixed by the check
