"""GE ops whose semantics are a known approximation of the ATen op they are converted from.

TorchAir converts ``aten.gelu`` to GE's ``Gelu`` whatever ``approximate`` says, and GE's
``Gelu`` is the tanh form: a model asking for the exact (erf) GELU gets, on an NPU, a
slightly different number. The reference executor runs GE's semantics (so the IR check
shows what the NPU computes); this registry holds, per GE op type, the exact kernel of
the ATen op it stands for, and which FX nodes asked for that exact form, so the IR check
can tell "differs only by GE's known approximation" from "converted wrongly".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from fxlab.ir.model import IrOp

Kernel = Callable[[IrOp, list[Any], dict[str, Any]], list[Any]]


@dataclass(frozen=True)
class GeApproximation:
    """GE op type ``ge_type`` computes ``ge_form``; the ATen op asked for ``exact_form``
    (when ``asks_exact(fx_node)``), which ``exact_kernel`` computes."""

    ge_type: str
    ge_form: str
    exact_form: str
    asks_exact: Callable[[Any], bool]
    exact_kernel: Kernel


GE_APPROXIMATIONS: dict[str, GeApproximation] = {}


def register_approximation(approximation: GeApproximation) -> GeApproximation:
    if approximation.ge_type in GE_APPROXIMATIONS:
        raise ValueError(f"two approximations registered for GE op type {approximation.ge_type}")
    GE_APPROXIMATIONS[approximation.ge_type] = approximation
    return approximation


def _gelu_asks_exact(node: Any) -> bool:
    # aten.gelu's default is approximate="none" (the erf form).
    return str(getattr(node, "target", "")).startswith("aten.gelu") and node.kwargs.get("approximate", "none") == "none"


def _exact_gelu(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [torch.nn.functional.gelu(inputs[0], approximate="none")]


register_approximation(
    GeApproximation(
        ge_type="Gelu",
        ge_form="the tanh approximation",
        exact_form="gelu(approximate='none'), the erf form",
        asks_exact=_gelu_asks_exact,
        exact_kernel=_exact_gelu,
    )
)


def exact_kernels(ops: list[IrOp], fx_nodes: dict[str, Any]) -> dict[str, Kernel]:
    """The exact kernel of every op in ``ops`` whose GE semantics approximate what its FX
    node asked for, keyed by op name. An op whose FX node is not known is taken to ask
    for the exact form (its GE type is the approximation either way)."""
    kernels: dict[str, Kernel] = {}
    for op in ops:
        approximation = GE_APPROXIMATIONS.get(op.type)
        if approximation is None:
            continue
        node = fx_nodes.get(op.fx_node) if op.fx_node else None
        if node is None or approximation.asks_exact(node):
            kernels[op.name] = approximation.exact_kernel
    return kernels
