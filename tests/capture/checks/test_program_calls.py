"""The eager run that checks a program's compiling call: it starts from the call's
snapshot, compares leaf by leaf, and leaves the program's state as the compiled call left it."""

from __future__ import annotations

import sys

import torch

from fxlab.capture.checks.program_calls import CallWatch, eager_check


class Counter(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("total", torch.zeros(3))
        self.weight = torch.nn.Parameter(torch.ones(3))
        self.steps = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.steps += 1
        self.total.add_(x)
        return self.total * self.weight


def _watched_call(module: Counter, x: torch.Tensor) -> CallWatch:
    watch = CallWatch((x,), {}, sys._getframe(), module)
    watch.saw_graph([module.total, module.weight, x], ["total", "weight", "x"])  # Dynamo hands the first graph over
    return watch


def test_a_compiled_call_that_differs_is_a_mismatch_naming_each_value_and_the_state_is_put_back():
    module, x = Counter(), torch.tensor([1.0, 2.0, 3.0])
    watch = _watched_call(module, x)
    with torch.no_grad():  # "compiled": adds twice where eager adds once
        module.steps += 1
        module.total.add_(2 * x)
        output = module.total * module.weight
    result = eager_check(watch, module, output)
    assert not result.ok
    assert result.mismatches == ["output: max |diff| 3", "total after the call: max |diff| 3"]
    assert torch.equal(module.total, 2 * x) and module.steps == 1  # as the compiled call left them


def test_a_faithful_call_matches_and_the_eager_run_leaves_no_trace():
    module, x = Counter(), torch.tensor([1.0, 2.0, 3.0])
    watch = _watched_call(module, x)
    with torch.no_grad():
        output = module(x)  # the compiled call, standing in: the same code
    before = torch.get_rng_state()
    result = eager_check(watch, module, output)
    assert result.verdict == "match (3 tensors, max |diff| 0)"  # output, x, total
    assert torch.equal(module.total, x) and module.steps == 1 and torch.equal(torch.get_rng_state(), before)


def test_inputs_written_before_dynamo_compiled_leave_no_snapshot():
    module, x = Counter(), torch.zeros(3)
    watch = CallWatch((x,), {}, sys._getframe(), module)
    x.add_(1)  # the call's own eager code ran first
    watch.saw_graph([x], ["x"])
    result = eager_check(watch, module, None)
    assert result.skipped == "Dynamo compiled during the call after part of it had run, so the call's inputs as they were before it are gone"


def test_a_call_that_writes_a_parameter_cannot_be_checked():
    module, x = Counter(), torch.ones(3)
    watch = _watched_call(module, x)
    with torch.no_grad():
        module.weight.mul_(2)
    result = eager_check(watch, module, None)
    assert result.skipped == "the call wrote into weight, whose value before the call fxlab does not keep (a parameter)"


def test_an_eager_run_that_raises_is_a_check_that_did_not_run():
    def broken(x: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("only compiled")

    x = torch.ones(2)
    watch = CallWatch((x,), {}, sys._getframe(), None)
    watch.saw_graph([x], ["x"])
    result = eager_check(watch, broken, x)
    assert result.skipped.startswith("the function raised RuntimeError when run eagerly on the call's inputs (at ")
    assert result.skipped.endswith(": only compiled")
