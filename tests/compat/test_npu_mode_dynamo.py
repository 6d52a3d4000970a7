"""Dynamo asks the npu-device mode only about the calls it could change: a compiled
function naming the npu device still compiles to CPU ops and gives eager's numbers, the
other calls are traced as on an NPU machine (operators stay operators), another mode on
the stack is dispatched every call as before, and the block restores Dynamo."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch.overrides import TorchFunctionMode

from fxlab.compat import npu_mode_dynamo
from fxlab.compat.npu_device import NpuDeviceAsCpu, npu_on_cpu
from fxlab.compat.npu_mode_dynamo import plain_calls_skip


def _names_the_npu(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = x.to("npu") + torch.ones(2, device="npu") + x.to("npu", torch.float32) + torch.zeros(2, device=x.device)
    z = torch.cat([y, y * 2]).reshape((2, 2)) @ w
    return torch.nn.functional.relu(z).sum(dim=(0,), keepdim=True) + y.new_ones(2, device="npu")


def _graph_of(fn: Callable[..., Any], *args: Any) -> tuple[torch.fx.GraphModule, Any]:
    graphs: list[torch.fx.GraphModule] = []

    def backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    try:
        out = torch.compile(fn, backend=backend, fullgraph=True)(*args)
    finally:
        torch._dynamo.reset()
    return graphs[0], out


def _calls(gm: torch.fx.GraphModule) -> list[Any]:
    return [(n.target, n.kwargs.get("device")) for n in gm.graph.nodes if n.op in ("call_function", "call_method")]


def test_a_compiled_function_naming_the_npu_compiles_to_cpu_ops_and_eagers_numbers() -> None:
    x, w = torch.ones(2), torch.arange(4.0).reshape(2, 2)
    with npu_on_cpu():
        gm, out = _graph_of(_names_the_npu, x, w)
        expected = _names_the_npu(x, w)
    torch.testing.assert_close(out, expected, rtol=0, atol=0)
    assert _calls(gm) == [
        ("to", None),
        (torch.ones, "cpu"),
        (operator.add, None),
        ("to", None),
        (operator.add, None),
        (torch.zeros, torch.device("cpu")),
        (operator.add, None),
        (operator.mul, None),
        (torch.cat, None),
        ("reshape", None),
        (operator.matmul, None),
        (torch.nn.functional.relu, None),
        ("sum", None),
        ("new_ones", "cpu"),
        (operator.add, None),
    ]
    to_calls = [n.args[1:] for n in gm.graph.nodes if n.target == "to"]
    assert to_calls == [("cpu",), ("cpu", torch.float32)]


class _Temperature(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.t = 1.0

    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        return (logits / self.t).softmax(-1)


def test_a_float_attribute_that_changes_compiles_as_without_the_mode() -> None:
    """The compiled prologue's torch.as_tensor(float) runs under the mode: no graph of the
    mode's own, no recompile per value (plain torch: the first value, then one graph
    taking the float as an input)."""
    graphs: list[list[str]] = []

    def backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        graphs.append([getattr(n.target, "__name__", n.target) for n in gm.graph.nodes if n.op in ("call_function", "call_method")])
        return gm.forward

    model, x = _Temperature(), torch.tensor([1.0, 2.0, 3.0])
    torch._dynamo.reset()
    try:
        compiled = torch.compile(model, backend=backend)
        with npu_on_cpu():
            for t in (1.0, 0.7, 0.5, 0.3):
                model.t = t
                torch.testing.assert_close(compiled(x), (x / t).softmax(-1))
    finally:
        torch._dynamo.reset()
    assert graphs == [["truediv", "softmax"], ["item", "truediv", "softmax"]]


def test_without_the_skip_every_call_goes_through_the_mode() -> None:
    """The same function with the mode pushed alone (no skip): Dynamo records the
    operators as the mode's calls of tensor methods, which the skip avoids."""
    x, w = torch.ones(2), torch.arange(4.0).reshape(2, 2)
    with NpuDeviceAsCpu():
        gm, out = _graph_of(_names_the_npu, x, w)
    targets = [target for target, _ in _calls(gm)]
    assert operator.add not in targets and "add" in targets and "mul" in targets
    with npu_on_cpu():
        torch.testing.assert_close(out, _names_the_npu(x, w), rtol=0, atol=0)


class _Counting(TorchFunctionMode):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        self.seen.append(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))


def test_another_mode_on_the_stack_is_dispatched_every_call() -> None:
    counting = _Counting()
    with npu_on_cpu(), counting:
        gm, _ = _graph_of(lambda a, b: torch.relu(a + b) * 2, torch.ones(2), torch.ones(2))
    # Dynamo stepped through the modes for each call: the operators became their methods,
    # and the counting mode's appends were replayed when the graph ran
    assert [t for t, _ in _calls(gm)] == ["add", torch.relu, "mul"]
    assert counting.seen[-3:] == ["add", "relu", "mul"]


def test_the_block_restores_dynamos_decision() -> None:
    from torch._dynamo.variables import torch as torch_variables
    from torch._dynamo.variables import torch_function

    before = (torch_function.can_dispatch_torch_function, torch_variables.can_dispatch_torch_function)
    mode = NpuDeviceAsCpu()
    with plain_calls_skip(mode) as skipping:
        assert skipping  # torch's Dynamo has the decision where fxlab looks for it
        assert torch_function.can_dispatch_torch_function is torch_variables.can_dispatch_torch_function
        assert torch_function.can_dispatch_torch_function is not before[0]
    assert (torch_function.can_dispatch_torch_function, torch_variables.can_dispatch_torch_function) == before
    with npu_on_cpu():
        assert torch_function.can_dispatch_torch_function is not before[0]
    assert torch_function.can_dispatch_torch_function is before[0]


def test_a_dynamo_without_the_decision_leaves_every_call_dispatched(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(npu_mode_dynamo, "_DECIDER", "no_such_function")
    with plain_calls_skip(NpuDeviceAsCpu()) as skipping:
        assert not skipping


class _PlainSubclass(torch.Tensor):
    pass


class _OwnTorchFunction(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        return super().__torch_function__(func, types, args, kwargs)


def test_which_argument_types_the_mode_never_changes() -> None:
    plain = npu_mode_dynamo._plain_type
    assert plain(torch.Tensor) and plain(torch.nn.Parameter) and plain(_PlainSubclass)
    assert plain(int) and plain(torch.dtype) and plain(torch.device)
    assert not plain(_OwnTorchFunction) and not plain(str) and not plain(object)
