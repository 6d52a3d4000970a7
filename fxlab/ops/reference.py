"""``reference_kernel``: the CPU reference of a GE op type a user's converter emits.

The IR check (``fxlab trace``) and ``fxlab ops check`` run the Ascend IR on CPU, one
reference kernel per GE op type. The one GE op a converter emits for a custom op needs
none: it is run by the custom op's own CPU kernel
(:mod:`fxlab.passes.converters.custom_reference`). A converter that emits several ops
(the custom op, and a ``Cast`` or a second custom op around it) needs a kernel for each
GE type fxlab does not know; a plugin file registers it with :func:`reference_kernel`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from fxlab.errors import UsageError
from fxlab.ir.kernels.registry import KERNELS
from fxlab.ir.model import DataType, IrOp, torch_dtype

UserKernel = TypeVar("UserKernel", bound=Callable[..., Any])
# GE op type -> the user's function registered for it (and the wrapper in KERNELS).
_REGISTERED: dict[str, tuple[Callable[..., Any], Callable[..., list[Any]]]] = {}


def reference_kernel(*op_types: str) -> Callable[[UserKernel], UserKernel]:
    """Decorator: ``fn`` is the CPU reference of GE ops of ``op_types``.

    ``fn(*inputs, **attrs)`` gets the op's data inputs in order (``None`` for an optional
    input left out) and its attrs by name as plain Python values (a dtype attr as a
    ``torch.dtype``; the attrs TorchAir and fxlab add, named ``_...``, are left out), and
    returns the op's output tensor, or a tuple or list of one tensor per output. A GE type
    fxlab has a kernel for is refused, and so is a second function for one type (the same
    function again, as when a plugin file is imported twice, replaces it).
    """
    if not op_types or not all(isinstance(t, str) and t for t in op_types):
        raise UsageError('reference_kernel needs the GE op types it computes, e.g. @reference_kernel("ScaleAdd").')

    def decorate(fn: UserKernel) -> UserKernel:
        for op_type in op_types:
            _register(op_type, fn)
        return fn

    return decorate


def _register(op_type: str, fn: Callable[..., Any]) -> None:
    mine = _REGISTERED.get(op_type)
    if mine is not None and _where(mine[0]) != _where(fn):
        raise UsageError(f"two reference kernels for GE op type {op_type}: at {_where(mine[0])} and at {_where(fn)}. Keep one of them.")
    if mine is None and op_type in KERNELS:
        raise UsageError(f"fxlab already has a reference kernel for GE op type {op_type}; register yours only for the types it lacks.")

    def kernel(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
        own = {name: _plain(value) for name, value in attrs.items() if not name.startswith("_")}
        result = fn(*inputs, **own)
        return list(result) if isinstance(result, (tuple, list)) else [result]

    _REGISTERED[op_type] = (fn, kernel)
    KERNELS[op_type] = kernel


def _plain(value: Any) -> Any:
    if isinstance(value, DataType):
        return torch_dtype(value)
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _where(fn: Callable[..., Any]) -> str:
    code = getattr(inspect.unwrap(fn), "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else repr(fn)


def registered_reference_kernels() -> dict[str, str]:
    """GE op type -> where the user's reference kernel for it was defined."""
    return {op_type: _where(fn) for op_type, (fn, _) in _REGISTERED.items()}


__all__ = ["reference_kernel", "registered_reference_kernels"]
