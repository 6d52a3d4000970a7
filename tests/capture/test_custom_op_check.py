"""Custom ops inside a trace: a wrong fake function and an op left out of the graph make
the trace partial, with the op named."""
from __future__ import annotations

from fxlab.capture import capture_trace, load_model
from fxlab.capture.custom_op_check import op_left_out_of_graph

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
    trace = capture_trace(load_model(write_model(WRONG_META)), stages=("functional",))
    assert trace.check.ok and trace.status == "partial"
    (graph,) = trace.graphs
    assert "custom op fxlabwrongmeta::twice (node twice, " in graph.error
    assert "output 0: its fake (Meta) function gives float16[4], the kernel float32[3] on the traced inputs" in graph.error


def test_custom_op_without_meta_is_named_with_reason_and_fix(write_model):
    trace = capture_trace(load_model(write_model(NO_META)), stages=("dynamo",))
    assert trace.status == "partial"
    assert trace.graphs[0].error.startswith("custom op fxlabnometa::twice ran outside the graph: Dynamo could not run it on fake tensors")
    assert '@torch.library.register_fake("fxlabnometa::twice")' in trace.graphs[0].error


def test_right_meta_of_an_inplace_op_passes(write_model):
    from fxlab.capture.pipeline import assumed_ge_types

    trace = capture_trace(load_model(write_model(RIGHT_META_INPLACE)))
    assert [g.error for g in trace.graphs] == [None] and trace.check.ok and trace.ir_check.ok
    # Only the GE op is unverified: no Ascend C prototype says a GE op Bump exists.
    assert trace.status == "unverified" and assumed_ge_types(trace) == ["graph 0: fxlabrightmeta.bump.default -> Bump"]


def test_graph_break_of_an_aten_op_is_not_blamed_on_a_custom_op():
    assert op_left_out_of_graph("Developer debug context: unsupported operator: aten.nonzero.default") is None
    assert op_left_out_of_graph(None) is None
