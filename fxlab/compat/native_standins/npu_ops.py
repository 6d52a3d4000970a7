"""The torch_npu operators TorchAir's FX passes name, defined for a machine without torch_npu.

TorchAir's pattern fusion pass (``experimental_config.pattern_fusion_pass``, on by
default) registers, whenever torch_npu is present, replacement patterns written with
torch_npu's own operators: ``npu_add_rms_norm`` followed by ``npu_dynamic_quant`` becomes
``npu_add_rms_norm_dynamic_quant``, ``npu_add_rms_norm`` followed by a cast becomes
``npu_add_rms_norm_cast``. On an NPU machine those operators exist, the patterns are
traced (with fake tensors) and matched against the graph, and a graph without them is
left as it was. Here they are defined (schema as torch_npu declares it, a Meta function
giving the output shapes and dtypes of the default options, no compute kernel), so the
same pass runs the same way: patterns registered, matcher run, nothing found unless the
model itself calls these operators.

Only the operators of the patterns TorchAir registers for its max-autotune (GE) mode are
here; the batch-matmul-transpose and add-rms-norm-quant patterns are registered for its
other modes only. Operators torch.ops already has (a real torch_npu) are left alone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import torch

from fxlab.compat.torchair_state import destroy_library
from fxlab.passes.torchair_refusals import TORCH_NPU_OPERATORS

NAMESPACE = "npu"

# Operator name -> its schema as torch_npu declares it (torch_npu 2.13.0's op-plugin yaml).
SCHEMAS: dict[str, str] = {
    "npu_add_rms_norm": "npu_add_rms_norm(Tensor x1, Tensor x2, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor, Tensor)",
    "npu_add_rms_norm_cast": "npu_add_rms_norm_cast(Tensor x1, Tensor x2, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor, Tensor, Tensor)",
    "npu_dynamic_quant": (
        "npu_dynamic_quant(Tensor input, *, Tensor? smooth_scales=None, Tensor? group_index=None, int? dst_type=None, "
        'str quant_mode="pertoken", float dst_type_max=0.0) -> (Tensor, Tensor)'
    ),
    "npu_add_rms_norm_dynamic_quant": (
        "npu_add_rms_norm_dynamic_quant(Tensor x1, Tensor x2, Tensor gamma, *, Tensor? smooth_scale1=None, "
        "Tensor? smooth_scale2=None, Tensor? beta=None, float epsilon=1e-06, bool[2]? output_mask=None, "
        "int? y_dtype=None) -> (Tensor, Tensor, Tensor, Tensor, Tensor)"
    ),
    "_npu_dtype_cast": "_npu_dtype_cast(Tensor self, ScalarType dtype) -> Tensor",
}


def _rstd_shape(x1: torch.Tensor, gamma: torch.Tensor) -> list[int]:
    """The normalised (trailing, gamma-shaped) dims reduce to 1; the rest stay."""
    kept = x1.dim() - gamma.dim()
    return [*x1.shape[:kept], *([1] * gamma.dim())]


def _add_rms_norm(x1: torch.Tensor, x2: torch.Tensor, gamma: torch.Tensor, epsilon: float = 1e-6) -> tuple[torch.Tensor, ...]:
    rstd = x1.new_empty(_rstd_shape(x1, gamma), dtype=torch.float32)
    return x1.new_empty(x1.shape), rstd, x1.new_empty(x1.shape)


def _add_rms_norm_cast(x1: torch.Tensor, x2: torch.Tensor, gamma: torch.Tensor, epsilon: float = 1e-6) -> tuple[torch.Tensor, ...]:
    y, rstd, x = _add_rms_norm(x1, x2, gamma, epsilon)
    return x1.new_empty(x1.shape, dtype=torch.float32), y, rstd, x


def _dynamic_quant(input: torch.Tensor, *, quant_mode: str = "pertoken", **_: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """int8 output of the input's shape; one float32 scale per token (per row of the last
    dim), per channel, or one for the tensor."""
    if quant_mode == "pertensor":
        scale_shape = [1]
    elif quant_mode == "perchannel":
        scale_shape = [*input.shape[:-2], input.shape[-1]]
    else:
        scale_shape = list(input.shape[:-1])
    return input.new_empty(input.shape, dtype=torch.int8), input.new_empty(scale_shape, dtype=torch.float32)


def _add_rms_norm_dynamic_quant(
    x1: torch.Tensor,
    x2: torch.Tensor,
    gamma: torch.Tensor,
    *,
    smooth_scale1: torch.Tensor | None = None,
    smooth_scale2: torch.Tensor | None = None,
    output_mask: list[bool] | None = None,
    **_: Any,
) -> tuple[torch.Tensor, ...]:
    """(y1, y2, x, scale1, scale2); an output the mask (or the absent smooth scales) turns
    off is an empty tensor."""
    out_y1, out_y2 = output_mask if output_mask is not None else (True, smooth_scale1 is not None and smooth_scale2 is not None)

    def quantized(on: bool) -> torch.Tensor:
        return x1.new_empty(x1.shape if on else (0,), dtype=torch.int8)

    def scale(on: bool) -> torch.Tensor:
        return x1.new_empty(x1.shape[:-1] if on else (0,), dtype=torch.float32)

    return quantized(out_y1), quantized(out_y2), x1.new_empty(x1.shape), scale(out_y1), scale(out_y2)


def _dtype_cast(self: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return self.new_empty(self.shape, dtype=dtype)


META_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "npu_add_rms_norm": _add_rms_norm,
    "npu_add_rms_norm_cast": _add_rms_norm_cast,
    "npu_dynamic_quant": _dynamic_quant,
    "npu_add_rms_norm_dynamic_quant": _add_rms_norm_dynamic_quant,
    "_npu_dtype_cast": _dtype_cast,
}


def missing_operators() -> list[str]:
    """The operators of :data:`SCHEMAS` this process has not defined (no torch_npu)."""
    namespace = getattr(torch.ops, NAMESPACE)
    return [name for name in SCHEMAS if not _defined(namespace, name)]


def _defined(namespace: Any, name: str) -> bool:
    try:
        getattr(namespace, name)
    except (AttributeError, RuntimeError):
        return False
    return True


@contextlib.contextmanager
def torch_npu_operators() -> Iterator[list[str]]:
    """Define the missing operators for the block (yields their names); they are removed
    again on exit, so nothing of them outlives a TorchAir session."""
    TORCH_NPU_OPERATORS.update(SCHEMAS)  # torch_npu's operators, not custom ops
    names = missing_operators()
    if not names:
        yield []
        return
    library = torch.library.Library(NAMESPACE, "FRAGMENT")
    try:
        for name in names:
            library.define(SCHEMAS[name])
            torch.library.register_fake(f"{NAMESPACE}::{name}", META_FUNCTIONS[name], lib=library)
        yield names
    finally:
        destroy_library(library)
        namespace = getattr(torch.ops, NAMESPACE)
        for name in names:
            # torch.ops caches the packet on the namespace object; drop it with the definition.
            namespace.__dict__.pop(name, None)
