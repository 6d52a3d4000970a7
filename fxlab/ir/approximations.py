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

from fxlab.ir.kernels.npu_norm import add_rms_norm_dynamic_quant_unfused
from fxlab.ir.model import IrOp

Kernel = Callable[[IrOp, list[Any], dict[str, Any]], list[Any]]


APPROXIMATION, FUSED_PRECISION = "approximation", "fused precision"


@dataclass(frozen=True)
class GeApproximation:
    """GE op type ``ge_type`` computes ``ge_form``; the ATen op asked for ``exact_form``
    (when ``asks_exact(fx_node)``), which ``exact_kernel`` computes. ``kind``:
    :data:`APPROXIMATION` (GE computes less exactly than asked), or
    :data:`FUSED_PRECISION` (a fused operator TorchAir's pattern pass made, documented to
    keep more precision than the unfused operators it replaced: a note, not a mismatch)."""

    ge_type: str
    ge_form: str
    exact_form: str
    asks_exact: Callable[[Any], bool]
    exact_kernel: Kernel
    kind: str = APPROXIMATION


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


def _is_fused_add_rms_norm_quant(node: Any) -> bool:
    # Where the user called the fused operator, the compiled run ran the same fused kernel
    # and its IR never differs for this reason: only a fusion TorchAir's pattern pass made can.
    return str(getattr(node, "target", "")).startswith("npu.npu_add_rms_norm_dynamic_quant")


register_approximation(
    GeApproximation(
        ge_type="AddRmsNormDynamicQuant",
        ge_form=(
            "quantises RMSNorm's float32 result as its documentation states (scale = row_max(|y|) / 127, y1 = round(y / scale)), "
            "where the unfused operators round that result to the inputs' dtype first"
        ),
        exact_form="npu_add_rms_norm and npu_dynamic_quant",
        asks_exact=_is_fused_add_rms_norm_quant,
        exact_kernel=add_rms_norm_dynamic_quant_unfused,
        kind=FUSED_PRECISION,
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
