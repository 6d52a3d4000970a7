"""What Dynamo asks the npu-device mode (:class:`~fxlab.compat.npu_device.NpuDeviceAsCpu`):
only the calls it could change.

Dynamo steps through every torch function mode on the stack for every torch call it
traces: it inlines the mode's ``__torch_function__``, a Python call of its own per
operator, about a quarter of a 32-layer decoder's compile. The npu-device mode changes a
call only when the call names a device (a string, ``device=``, ``pin_memory=``) or hands
over a stream; every other call it passes through unchanged. So while the mode is the
only one on Dynamo's stack, a traced call whose arguments are tensors, numbers, dtypes and
the like is not dispatched to it; Dynamo traces it as it does on an NPU machine, where no
such mode exists (``a + b`` stays an operator, not ``a.add(b)``). Any other call is
dispatched exactly as before. One call the mode changes has nothing to look at:
``x.pin_memory()`` inside a compiled function is traced as torch traces it.

This is Dynamo's own decision function, ``can_dispatch_torch_function``, wrapped where
Dynamo's modules look it up. Where they do not (another torch), nothing is wrapped and the
mode is dispatched every call: slower, the same result.

Dynamo also meets the mode outside the graphs it traces: a compiled function's prologue
turns an unspecialized float input (a module's ``self.temperature``) into a tensor with
``torch.as_tensor(value, dtype=...)``, a call the mode sees, and the mode's
``__torch_function__`` is then a Python frame of its own, which Dynamo would compile as a
graph of fxlab's, specialised on the float's value: a recompile per value, graphs no NPU
machine makes. :func:`plain_calls_skip` has that frame, and what it calls, run as plain
Python (Dynamo still inlines the mode into the graphs it traces).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import torch

# The calls' argument types the mode never changes (a torch.device is a CPU one: under the
# mode, torch.device("npu") is torch.device("cpu")).
_PLAIN = (
    int,
    float,
    bool,
    complex,
    type(None),
    type(Ellipsis),
    slice,
    range,
    torch.Tensor,
    torch.nn.Parameter,
    torch.dtype,
    torch.device,
    torch.layout,
    torch.memory_format,
    torch.Size,
    torch.SymInt,
    torch.SymFloat,
    torch.SymBool,
)
_DEVICE_KEYWORDS = frozenset({"device", "pin_memory"})
_DECIDER = "can_dispatch_torch_function"


def _dynamo_modules() -> tuple[list[Any], _Peek | None]:
    """The modules of Dynamo that hold ``can_dispatch_torch_function`` under that name, and
    how to look at Dynamo's variables."""
    try:
        # lazy: Dynamo's import is ~0.7 s, paid only once the mode is pushed
        from torch._dynamo.variables import torch as torch_variables
        from torch._dynamo.variables import torch_function
        from torch._dynamo.variables.dicts import ConstDictVariable
        from torch._dynamo.variables.lazy import LazyVariableTracker
        from torch._dynamo.variables.lists import BaseListVariable
    except ImportError:
        return [], None
    modules = [module for module in (torch_function, torch_variables) if callable(getattr(module, _DECIDER, None))]
    return modules, _Peek(LazyVariableTracker, BaseListVariable, ConstDictVariable)


@contextlib.contextmanager
def plain_calls_skip(mode: object) -> Iterator[bool]:
    """For the block, Dynamo does not dispatch plain calls to ``mode`` (see the module
    docstring). Yields whether Dynamo could be told so."""
    modules, peek = _dynamo_modules()
    if not modules or peek is None:
        yield False
        return
    _never_compiled_alone(type(mode).__torch_function__)  # type: ignore[attr-defined]
    original = getattr(modules[0], _DECIDER)
    decider = _skipping_plain_calls(original, mode, peek)
    saved = [(module, getattr(module, _DECIDER)) for module in modules]
    for module, _ in saved:
        setattr(module, _DECIDER, decider)
    try:
        yield True
    finally:
        for module, previous in saved:
            if getattr(module, _DECIDER) is decider:
                setattr(module, _DECIDER, previous)


def _never_compiled_alone(fn: Callable[..., Any]) -> None:
    """Dynamo runs ``fn``, entered as a frame of its own, and the frames it calls, as plain
    Python (see the module docstring); inlining it while tracing is unchanged."""
    try:
        # lazy: Dynamo's import is ~0.7 s, paid only once the mode is pushed (as in _dynamo_modules)
        from torch._dynamo.eval_frame import FrameExecStrategy, set_code_exec_strategy
        from torch._dynamo.types import FrameAction
    except ImportError:
        return
    set_code_exec_strategy(fn.__code__, FrameExecStrategy(FrameAction.SKIP, FrameAction.SKIP))


def _skipping_plain_calls(original: Callable[..., bool], mode: object, peek: _Peek) -> Callable[..., bool]:
    def can_dispatch_torch_function(tx: Any, args: Any, kwargs: dict[str, Any]) -> bool:
        if not original(tx, args, kwargs):
            return False
        stack = tx.symbolic_torch_function_state.mode_stack
        if len(stack) != 1 or peek.value(stack[0]) is not mode:  # another mode: dispatch as Dynamo does
            return True
        if kwargs and not _DEVICE_KEYWORDS.isdisjoint(kwargs):
            return True
        return not all(peek.plain(value) for value in (*args, *kwargs.values()))

    can_dispatch_torch_function.__wrapped__ = original  # type: ignore[attr-defined]
    return can_dispatch_torch_function


class _Peek:
    """Looks at Dynamo's variables without making Dynamo build the ones it has not built."""

    def __init__(self, lazy: Any, sequence: Any, mapping: Any) -> None:
        self.lazy, self.sequence, self.mapping = lazy, sequence, mapping

    def _built(self, variable: Any) -> Any:
        """The variable Dynamo built, or None for a lazy one not built yet."""
        if type(variable) is not self.lazy:
            return variable
        real = variable.unwrap()
        return None if real is variable else real

    def value(self, variable: Any) -> Any:
        """The Python object a mode's variable stands for."""
        built = self._built(variable)
        return variable.peek_value() if built is None else getattr(built, "value", None)

    def plain(self, variable: Any) -> bool:
        """Whether a traced argument is one the mode never changes: lists, tuples and dicts
        are looked into; a tensor subclass with a ``__torch_function__`` of its own is not
        plain (the original decision dispatches it)."""
        built = self._built(variable)
        if built is None:
            return _plain_type(variable.peek_type())
        if isinstance(built, self.sequence):  # a list or tuple: its items
            return all(self.plain(item) for item in built.items)
        if isinstance(built, self.mapping):  # a dict: its values
            return all(self.plain(item) for item in built.items.values())
        try:
            kind = built.python_type()
        except (NotImplementedError, AttributeError, TypeError):
            return False
        return _plain_type(kind)


def _plain_type(kind: type) -> bool:
    if kind in _PLAIN:
        return True
    if issubclass(kind, torch.Tensor):  # a subclass overriding __torch_function__ is not plain
        return kind is torch.nn.Parameter or _function_of(kind.__torch_function__) is _TENSOR_TORCH_FUNCTION
    return False


def _function_of(method: Any) -> Any:
    """The function behind a classmethod as a class hands it out (a new bound method each time)."""
    return getattr(method, "__func__", method)


_TENSOR_TORCH_FUNCTION = _function_of(torch.Tensor.__torch_function__)
