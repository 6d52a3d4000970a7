"""The calls of the compiled model: a warm-up over several input sets, a dynamic graph
run at a second size, which graph each call ran and why Dynamo recompiled."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch.fx.experimental.symbolic_shapes import optimization_hint

from fxlab.capture.request import TraceRequest
from fxlab.capture.serialize import call_from_json, call_to_json, manifest
from fxlab.session import CaptureSession
from fxlab.capture.warmup import reason_in_words
from fxlab.ir import ge
from fxlab.passes.converters.registry import CONVERTERS, ORIGIN_USER, register_converter
from tests.sessions import trace_of

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
STAGES = ("dynamo", "functional", "ascend_ir")


def test_the_warm_up_example_reuses_the_dynamic_graph_and_says_why_it_recompiled():
    trace = trace_of(EXAMPLES / "warmup_batches.py", stages=STAGES)
    assert trace.status == "ok" and len(trace.graphs) == 2
    first, second, third = trace.calls
    assert [(c.graphs, c.compiled, c.reused) for c in trace.calls] == [([0], [0], []), ([1], [1], []), ([1], [], [1])]
    assert [c.inputs for c in trace.calls] == ["x: f32[2, 4, 16]", "x: f32[4, 4, 16]", "x: f32[8, 4, 16]"]
    assert [c.origin for c in trace.calls] == ["given", "input set 1", "input set 2"]
    (recompile,) = second.recompiles
    assert recompile.graph == 1 and recompile.reasons == ["0/0: tensor 'x' size mismatch at index 0. expected 2, actual 4"]
    assert recompile.words == ["input x: dim 0 is 4, graph 0 has it fixed at 2"]
    assert first.check is trace.check and third.recompiles == []
    for call in (second, third):  # each later call against eager, and the IR it ran on its inputs
        assert call.check.ok and call.check.compared > 0 and call.ir_check.ok and call.ir_check.compared > 0
    assert trace.ir_check.ok and trace.ir_check.compared > 0 and not trace.ir_check.not_run


def test_calls_are_saved_with_the_trace_and_read_back():
    trace = trace_of(EXAMPLES / "warmup_batches.py", stages=("functional",), verify=False)
    data = manifest(trace)
    assert [c["graphs"] for c in data["calls"]] == [[0], [1], [1]] and data["calls"][2]["reused"] == [1]
    assert "compile_options" not in data  # the file asks for nothing
    again = [call_from_json(c) for c in data["calls"]]
    assert again == trace.calls and [call_to_json(c) for c in again] == data["calls"]


DYNAMIC_MEAN = """
import torch

class Mean(torch.nn.Module):
    def forward(self, x):
        return x.mean(0) * 2

model = Mean()
example_inputs = (torch.randn(6, 3),)
compile_options = {"dynamic": True}
"""


def test_a_dynamic_graph_is_checked_at_a_second_size_derived_from_the_first(write_model):
    trace = trace_of(write_model(DYNAMIC_MEAN), stages=STAGES)
    assert trace.compile_options == {"dynamic": True, "source": "the model file's compile_options"}
    assert "compiled with torch.compile(dynamic=True) (the model file's compile_options)" in trace.notes
    assert trace.status == "ok" and len(trace.graphs) == 1
    first, second = trace.calls
    assert second.origin == "derived (+1): dim 0 of x: 6 -> 7; dim 1 of x: 3 -> 4" and second.inputs == "x: f32[7, 4]"
    assert (second.graphs, second.compiled) == ([0], []) and second.ir_check.ok and second.ir_check.compared > 0


def test_a_converter_that_bakes_the_traced_size_fails_only_at_the_second_size(write_model):
    """A user's converter of mean that divides by the traced row count: right at the traced
    size, wrong at any other; only the check at the second size sees it."""

    def baked_mean(self, dim, keepdim=False, dtype=None, *, meta_outputs=None):
        """mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
        total = ge.op1("ReduceSum", {"x": self, "axes": ge.const(list(dim))}, {"keep_dims": keepdim})
        rows = float(optimization_hint(self.symsize[dim[0]]))
        return ge.op1("RealDiv", {"x1": total, "x2": ge.const(rows)})

    register_converter(torch.ops.aten.mean.dim, origin=ORIGIN_USER)(baked_mean)
    try:
        trace = trace_of(write_model(DYNAMIC_MEAN), stages=STAGES)
    finally:
        CONVERTERS.unregister(torch.ops.aten.mean.dim)
    assert trace.ir_check.ok and trace.ir_check.compared > 0  # at the traced size the IR matches
    second = trace.calls[1]
    assert second.ir_check.failed and any("max |diff|" in m for m in second.ir_check.mismatches)
    assert trace.status == "partial"


@pytest.mark.parametrize(
    "reason, words",
    [
        ("0/0: tensor 'x' size mismatch at index 1. expected 8, actual 16", "input x: dim 1 is 16, graph 0 has it fixed at 8"),
        ("0/0: tensor 'x' dtype mismatch. expected Float, actual Half", "input x: its dtype is Half, graph 0 was compiled for Float"),
        ("0/0: tensor 'x' stride mismatch at index 0. expected 4, actual 1", "input x: the stride of dim 0 is 1, graph 0 was compiled for 4"),
        ("0/0: tensor 'x' requires_grad mismatch. expected requires_grad=0", "input x: its requires grad differs from what graph 0 was compiled for"),
        (
            "0/0: L['x'].size()[0] <= 64  # return x[:64]  # m.py:3 in forward (_refs.py:9 in slice)",
            "graph 0 holds only while x.size(0) <= 64 (from return x[:64], at m.py:3); these inputs break it",
        ),
        (  # Dynamo cut a long path to its end: the file's name is shown
            "0/0: pos == 0  # self.cache[:, pos] = x  # mp/probe_acl/decode.py:13 in forward",
            "graph 0 holds only while pos == 0 (from self.cache[:, pos] = x, at decode.py:13); these inputs break it",
        ),
        ("1/3: 2*tokens.size()[1] == 16", "the graph Dynamo compiled as 1/3 holds only while 2*tokens.size(1) == 16; these inputs break it"),
    ],
)
def test_dynamos_reasons_in_words(reason, words):
    assert reason_in_words(reason, {"0/0": [0]}) == words


MARKED = """
import torch

def f(x, cache):
    return x * 2 + cache[: x.shape[0]]

x = torch.randn(4, 6)
torch._dynamo.mark_static(x, 1)
model = f
example_inputs = (x, torch.randn(16, 6))
compile_options = {"dynamic": True}
"""


def test_mark_static_keeps_a_dim_fixed_under_dynamic_true_and_the_second_size_leaves_it(write_model):
    trace = trace_of(write_model(MARKED), stages=STAGES)
    assert trace.status == "ok"
    data = [op for op in trace.graphs[0].ir.ops if op.type == "Data"]
    assert [op.output_desc[0].shape for op in data][:2] == [(-1, 6), (-1, 6)]  # x's rows and the cache's are symbols
    second = trace.calls[1]
    assert second.origin == "derived (+1): dim 0 of x: 4 -> 5; dim 0 of cache: 16 -> 17" and second.graphs == [0]
    assert second.check.ok and second.ir_check.ok and second.ir_check.compared > 0


WRAPPED_KWARGS = """
import functools
import torch

def returns_tuple(forward):
    @functools.wraps(forward)
    def wrapper(*args, **kwargs):  # as transformers' decorators wrap a model's forward
        return (forward(*args, **kwargs),)
    return wrapper

class Masked(torch.nn.Module):
    @returns_tuple
    def forward(self, ids, mask=None):
        return (ids * mask).float().cumsum(1)

def get_model_and_inputs():
    ids, mask = torch.arange(10).reshape(2, 5), torch.ones(2, 5, dtype=torch.int64)
    torch._dynamo.mark_dynamic(ids, 1)
    torch._dynamo.mark_dynamic(mask, 1)
    return Masked(), ((ids,), {"mask": mask})
"""


def test_the_second_size_grows_a_keyword_argument_a_wrapper_takes_as_kwargs_too(write_model):
    # Dynamo names the mask L['kwargs']['mask'] (the wrapper's **kwargs): it grows with the ids.
    trace = trace_of(write_model(WRAPPED_KWARGS), stages=STAGES)
    assert trace.status == "ok" and len(trace.graphs) == 1, trace.notes
    first, second = trace.calls
    assert second.origin == "derived (+1): dim 1 of ids: 5 -> 6; dim 1 of mask: 5 -> 6"
    assert second.inputs == "ids: i64[2, 6], mask: i64[2, 6]" and second.ir_check.ok and second.ir_check.compared > 0


def test_a_rank_of_a_multi_rank_trace_runs_the_first_input_set_only(write_model):
    from fxlab.capture.ranks import RankHooks

    shown: list[int] = []
    hooks = RankHooks(lambda index, gm: shown.append(index), lambda: None, lambda indexes: indexes)
    with CaptureSession(TraceRequest(EXAMPLES / "warmup_batches.py", stages=STAGES)) as session:
        trace = session.capture(ranks=hooks).trace
    assert [call.inputs for call in trace.calls] == ["x: f32[2, 4, 16]"] and shown == [0]
    assert "2 later input set(s) not run: a multi-rank trace runs the first one only" in trace.notes
    assert trace.ir_check.ok and trace.ir_check.compared > 0


UNGUARDED_SIZE = """
import torch

lib = torch.library.Library("fxlabwarm", "DEF")
lib.define("mix(Tensor x, Tensor m) -> Tensor")
lib.impl("mix", lambda x, m: x @ m, "CPU")
lib.impl("mix", lambda x, m: x.new_empty((x.shape[0], m.shape[1])), "Meta")  # never compares x's width with m's


class Mix(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("m", torch.randn(4, 3))

    def forward(self, x):
        return torch.ops.fxlabwarm.mix(x, self.m) + 1

model = Mix()
example_inputs = (torch.randn(2, 4),)
compile_options = {"dynamic": True}
"""


def test_a_second_size_grows_one_symbol_alone_when_the_model_fixes_another_without_a_guard(write_model):
    # Both dims of x are symbolic, but the model only runs at width 4: the batch grows alone.
    trace = trace_of(write_model(UNGUARDED_SIZE), stages=STAGES)
    first, second = trace.calls
    assert second.origin == "derived (+1): dim 0 of x: 2 -> 3" and second.inputs == "x: f32[3, 4]"
    assert second.check.ok and second.ir_check.ok and second.ir_check.compared > 0  # unverified: the op has no GE prototype


FAILS_AFTER_THE_FIRST_GRAPH = """
import torch

lib = torch.library.Library("fxlabretry", "DEF")
lib.define("width4(Tensor x) -> Tensor")
lib.impl("width4", lambda x: x + 1, "CPU")


def _meta(x):
    if x.shape[1] != 4:  # the compiled model fails at another width, eager does not
        raise RuntimeError("width4 takes a width of 4")
    return torch.empty_like(x)


lib.impl("width4", _meta, "Meta")


def model(x):
    h = x * 2
    torch._dynamo.graph_break()
    return torch.ops.fxlabretry.width4(h)


example_inputs = (torch.randn(2, 4),)
compile_options = {"dynamic": True}
"""


def test_a_second_size_tried_again_records_the_graphs_it_runs(write_model):
    # Growing both dims runs graph 0 and then fails in graph 1; the retry with the batch
    # alone runs graph 0 again: its IR is checked on the retry's inputs.
    trace = trace_of(write_model(FAILS_AFTER_THE_FIRST_GRAPH), stages=STAGES)
    first, second = trace.calls
    assert second.origin == "derived (+1): dim 0 of x: 2 -> 3" and 0 in second.graphs
    assert second.ir_check is not None and second.ir_check.ok and not second.ir_check.not_run, second.ir_check


ROTARY = """
import torch
import torch_npu


class Rotary(torch.nn.Module):
    def forward(self, x, cos, sin):
        q = (x * 2).view(1, 4, 2, 16)  # the head dim fixed at 16 by the model
        return torch_npu.npu_rotary_mul(q, cos, sin)


torch.manual_seed(0)
model = Rotary()
example_inputs = (torch.randn(1, 4, 32), torch.randn(1, 4, 1, 16), torch.randn(1, 4, 1, 16))
compile_options = {"dynamic": True}
"""


def test_a_second_size_an_operator_refuses_is_no_call_and_no_fault_of_fxlabs_kernel(write_model):
    """Growing cos and sin's last dim makes inputs torch_npu's rotary op refuses (the
    model fixes the head dim): that size is dropped, as any the model cannot run at."""
    trace = trace_of(write_model(ROTARY), stages=STAGES)
    assert trace.status == "ok" and trace.check.ok and len(trace.calls) == 1
    (note,) = [n for n in trace.notes if n.startswith("the dynamic graph(s) were checked at the traced size only")]
    assert "npu.npu_rotary_mul does not take these inputs (RuntimeError: The size of tensor a (16) must match" in note
    assert "fxlab's fault" not in note
