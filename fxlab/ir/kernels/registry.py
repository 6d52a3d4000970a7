"""The registry of CPU reference kernels, one per GE op type, that the executor
(:mod:`fxlab.ir.execute`) runs; the kernel modules of this package fill it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fxlab.ir.model import IrOp

Kernel = Callable[[IrOp, list[Any], dict[str, Any]], list[Any]]
KERNELS: dict[str, Kernel] = {}
# Kernels chosen per op rather than per type, asked before KERNELS: an op that says which
# torch op it came from (an auto-converted custom op) runs that op, whatever its GE type.
KernelResolver = Callable[[IrOp], "Kernel | None"]
KERNEL_RESOLVERS: list[KernelResolver] = []


class KernelGap(NotImplementedError):
    """One of fxlab's CPU reference kernels of an operator does not implement the call it
    got (an option, a dtype, a layout): ``op`` is the operator (``npu.npu_x``), ``detail``
    what it lacks. A check that meets it cannot run; it is no failure of the model."""

    def __init__(self, op: str, detail: str) -> None:
        super().__init__(f"{op}: {detail}")
        self.op = op
        self.detail = detail

    def reason(self) -> str:
        """Why a check that met this gap could not run, in one clause."""
        return f"{self.op}: fxlab's CPU reference kernel does not implement this call ({self.detail})"


class KernelFault(KernelGap):
    """One of fxlab's CPU reference kernels of an operator failed on its call (a shape it
    mishandles): ``detail`` is the error and where in the kernel it was raised. The
    operator is torch_npu's: on an NPU its own kernel computes the call, so the fault is
    fxlab's, never the model's."""

    def reason(self) -> str:
        return (
            f"{self.op}: fxlab's CPU reference kernel failed on this call ({self.detail}); this is fxlab's fault, not the "
            "model's (torch_npu's own kernel computes the call on an NPU): please report it"
        )


def register_kernel(*op_types: str) -> Callable[[Kernel], Kernel]:
    """Register the CPU reference kernel of GE op types (one kernel per type)."""

    def decorate(fn: Kernel) -> Kernel:
        for op_type in op_types:
            if op_type in KERNELS:
                raise ValueError(f"two reference kernels registered for GE op type {op_type}")
            KERNELS[op_type] = fn
        return fn

    return decorate


def named_inputs(op: IrOp, inputs: Sequence[Any]) -> dict[str, Any]:
    """A kernel's inputs by their names in the op's descs; an absent optional input is ``None``."""
    return {desc.name: value for desc, value in zip(op.input_desc, inputs)}
