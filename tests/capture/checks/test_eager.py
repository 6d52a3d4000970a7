"""Eager against compiled (fxlab.capture.checks.eager): one model state and one seed, the
model's state put back, random draws compared by shape where they cannot agree."""

from __future__ import annotations

import pytest
import torch

from fxlab.capture.checks.eager import compare_eager_compiled, undefined_op_hint
from fxlab.capture.loader import LoadedModel
from fxlab.errors import CaptureError
from tests.sessions import capture_of, trace_of


BUFFER_SHAPE_CHANGES_IN_PLACE = """
import pytest
import torch
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("square", torch.arange(6.0).reshape(2, 3))
        self.register_buffer("row", torch.arange(4.0))
    def forward(self, x):
        self.square.t_()
        self.row.unsqueeze_(0)
        return x + self.square.sum(0), self.row * 2
model = M()
example_inputs = (torch.ones(2),)
"""


def test_buffer_whose_shape_changes_in_place_is_restored_with_its_shape(write_model):
    # _restore copied values only: the transposed buffer no longer took them (a crash).
    captured = capture_of(write_model(BUFFER_SHAPE_CHANGES_IN_PLACE), stages=("dynamo",))
    trace, loaded = captured.trace, captured.loaded
    assert trace.check.ok and trace.check.compared == 5, trace.check.verdict
    square, row = loaded.fn.square, loaded.fn.row
    assert square.shape == (2, 3) and square.stride() == (3, 1)
    assert torch.equal(square, torch.arange(6.0).reshape(2, 3))
    assert row.shape == (4,) and torch.equal(row, torch.arange(4.0))


def test_random_draws_in_another_order_than_eager_are_not_a_mismatch():
    def model(x):
        return x + torch.rand(3)  # the output and the input after the call: 2 tensors

    def compiled(fn):
        def run(x):
            torch.rand(1)  # one more draw first: other numbers than eager's
            return fn(x)

        return run

    loaded = LoadedModel(fn=model, args=(torch.zeros(3),))
    assert compare_eager_compiled(loaded, compiled).failed  # without knowing it draws: a mismatch
    result = compare_eager_compiled(loaded, compiled, lambda: ["aten.rand.default"])
    assert not result.failed and result.skipped == (
        "values not compared: the model draws random numbers (aten.rand.default) and the compiled run drew other ones "
        "than eager from the same seed; the shapes and dtypes of all 2 tensor(s) match"
    )

    def wrong_shape(fn):
        return lambda x: torch.rand(4)

    bad = compare_eager_compiled(loaded, wrong_shape, lambda: ["aten.rand.default"])
    assert bad.failed and bad.mismatches == ["output: torch.float32[4] vs torch.float32[3]"]


CALLS_AN_UNDEFINED_OP = """
import pytest
import torch
class M(torch.nn.Module):
    def forward(self, x):
        return torch.ops.acme_lab.fused_gate(x, 0.5)
model = M()
example_inputs = (torch.ones(2),)
"""


def test_a_custom_op_nothing_defined_names_the_op_and_the_plugin_option(write_model):
    with pytest.raises(CaptureError) as info:
        capture_of(write_model(CALLS_AN_UNDEFINED_OP), stages=("dynamo",))
    message = str(info.value)
    assert "No library defines the op acme_lab::fused_gate: pass the file that defines it" in message
    assert "with --plugin FILE" in message


def test_an_attribute_error_of_the_models_own_gives_no_op_hint() -> None:
    assert undefined_op_hint(AttributeError("'Linear' object has no attribute 'weights'")) == ""
    assert undefined_op_hint(KeyError("'_OpNamespace' 'x' object has no attribute 'y'")) == ""


HALF_PRECISION_ATTENTION = """
import torch
import torch_npu  # noqa: F401 - torch_npu's operators: SDPA takes the fused kernel, as on an NPU


class Attention(torch.nn.Module):
    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True) * 3


torch.manual_seed(0)
model = Attention()
example_inputs = tuple(torch.randn(1, 4, 64, 32).{dtype}() * 4 for _ in range(3))
"""


def test_half_precision_attention_is_checked_against_eager_with_the_npus_kernel_when_cpus_rounds_otherwise(write_model):
    # The compiled graph runs SDPA as torch_npu's fused kernel (as on an NPU); CPU's own SDPA
    # rounds float16 otherwise. Eager with the fused kernel matches, and the check says by how much CPU's differs.
    trace = trace_of(write_model(HALF_PRECISION_ATTENTION.replace("{dtype}", "half")))
    assert trace.status == "ok" and trace.check.ok and trace.check.max_abs_diff == 0
    (said,) = trace.check.approximations
    assert said.startswith("F.scaled_dot_product_attention (1 call(s)) is torch_npu's fused kernel in the compiled graph")
    assert "against CPU's own SDPA the outputs differ by rounding (output: max |diff| " in said
    # float32 is compared with CPU's own SDPA, as before: nothing to explain
    full = trace_of(write_model(HALF_PRECISION_ATTENTION.replace("{dtype}", "float")))
    assert full.check.ok and full.check.approximations == []


CACHE_IN_A_PLAIN_ATTRIBUTE = """
import torch


class Cache:  # as transformers' StaticCache: its tensors made on first use, then written into
    def __init__(self):
        self.keys = None
        self.seen = 0

    def update(self, k):
        if self.keys is None:
            self.keys = torch.zeros(8, k.shape[-1])
        self.keys[self.seen : self.seen + k.shape[0]] = k
        self.seen += k.shape[0]
        return self.keys


class Step(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = Cache()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x):
        keys = self.cache.update(self.proj(x))
        return keys.sum(0) * 2


torch.manual_seed(0)
model = Step()
example_inputs = (torch.randn(3, 4),)
"""


def test_a_cache_object_held_as_a_plain_attribute_starts_each_run_as_it_was(write_model):
    # Eager fills the cache's rows 0..2 and moves it on; the compiled run must start from
    # the empty cache too (it wrote rows 3..5 and differed), and the model is left as it was found.
    trace = trace_of(write_model(CACHE_IN_A_PLAIN_ATTRIBUTE))
    assert trace.check.ok and trace.check.max_abs_diff < 1e-6, trace.check.mismatches
    assert trace.status == "ok"


def test_plain_state_is_put_back_in_place():
    from fxlab.capture.checks.plain_state import PlainState

    class Holder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = [{"k": torch.zeros(2)}, {"k": None}]
            self.steps = 0
            self.weight = torch.nn.Parameter(torch.ones(2))
            self.alias = [self.weight]  # the model's own parameter, kept as itself

    holder = Holder()
    first, kept = holder.layers[0]["k"], holder.layers
    state = PlainState(holder)
    holder.layers[0]["k"].add_(5)
    holder.layers[1]["k"] = torch.ones(3)
    holder.steps = 7
    state.put_back()
    assert holder.layers is kept and holder.layers[0]["k"] is first and torch.equal(first, torch.zeros(2))
    assert holder.layers[1]["k"] is None and holder.steps == 0 and holder.alias[0] is holder.weight
