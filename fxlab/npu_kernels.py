"""A program's npu kernels, run for npu tensors where npu tensors are CPU tensors.

On an NPU machine a custom op's kernel for the NPU is registered under the
``PrivateUse1`` dispatch key: ``Library.impl(name, fn, "PrivateUse1")`` (vLLM Ascend's
``direct_register_custom_op`` does this), ``torch.library.impl(name, "npu")``, or
``@torch.library.custom_op(..., device_types="npu")`` / ``register_kernel("npu")``. Where
fxlab runs the npu device on the CPU (:mod:`fxlab.compat.npu_device`), such a kernel would
never run: the op called on the tensors that stand for npu tensors fails with "Could not
run ... with arguments from the 'CPU' backend", and ``device_types="npu"`` does not even
parse, as torch knows no ``npu`` device type.

:func:`npu_kernels_serve_cpu` makes both work, for one ``with`` block:

- the device type ``npu`` names the ``PrivateUse1`` key, as it does once torch_npu has
  renamed that backend;
- a kernel registered for ``PrivateUse1``, for an op with no ``CPU`` kernel, is registered
  for ``CPU`` too (the same function, in a library of fxlab's: :func:`serves_cpu`). When the
  program registers a ``CPU`` kernel of its own, that copy is dropped first and the
  program's kernel is the one run, as it would be for CPU tensors on an NPU machine. The
  copies are dropped when the block ends.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch

NPU_KEY = "PrivateUse1"
_COPIES: dict[str, torch.library.Library] = {}  # op name -> the library holding its CPU copy


def serves_cpu(qualname: str) -> bool:
    """Whether the op's ``CPU`` kernel (``ns::name`` or ``ns::name.overload``) is its npu
    kernel, registered for ``CPU`` by fxlab."""
    return qualname in _COPIES


@contextlib.contextmanager
def npu_kernels_serve_cpu() -> Iterator[None]:
    """For the block, npu kernels serve CPU tensors (see the module docstring)."""
    real_impl, real_key_for_device = torch.library.Library.impl, torch._C._dispatch_key_for_device

    def impl(lib: torch.library.Library, op_name: Any, fn: Any, dispatch_key: str = "", *args: Any, **kwargs: Any) -> Any:
        key = dispatch_key or lib.dispatch_key
        name = _qualname(lib, op_name)
        if key == "CPU":
            _drop_copy(name)
        result = real_impl(lib, op_name, fn, dispatch_key, *args, **kwargs)
        if key == NPU_KEY and name not in _COPIES and not torch._C._dispatch_has_kernel_for_dispatch_key(name, "CPU"):
            copy = torch.library.Library(lib.ns, "FRAGMENT")
            real_impl(copy, op_name, fn, "CPU", *args, **kwargs)
            _COPIES[name] = copy
        return result

    def key_for_device(device_type: str) -> str:
        return NPU_KEY if device_type == "npu" else real_key_for_device(device_type)

    torch.library.Library.impl, torch._C._dispatch_key_for_device = impl, key_for_device  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        torch.library.Library.impl, torch._C._dispatch_key_for_device = real_impl, real_key_for_device  # type: ignore[method-assign]
        for name in list(_COPIES):
            _drop_copy(name)


def _qualname(lib: torch.library.Library, op_name: Any) -> str:
    """``ns::name[.overload]`` of the op ``lib.impl`` was given (a name, a qualified name or
    an overload object): the dispatcher keeps kernels per overload."""
    if isinstance(op_name, torch._ops.OpOverload):
        return op_name.name()
    text = str(op_name)
    return text if "::" in text else f"{lib.ns}::{text}"


def _drop_copy(name: str) -> None:
    copy = _COPIES.pop(name, None)
    if copy is not None:
        copy._destroy()
