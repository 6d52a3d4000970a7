"""The registry of the eager CPU kernels of torch_npu's operators, which every operator
family fills (:func:`cpu_kernel`; :func:`meta_kernel` for the few Meta functions
torch_npu lacks), and what the families' kernels share.

With these kernels, a model written with ``torch_npu.npu_rms_norm``,
``npu_fusion_attention`` ... runs eagerly on a CPU-only machine, so fxlab compares eager
with compiled and the Ascend IR's reference run with both. Each family keeps its math and
CPU kernels in its own ``npu_<family>_reference`` module, shared with the kernels of the
GE ops TorchAir makes for it (``npu_<family>``); importing :mod:`fxlab.ir.kernels`
imports them all. Each kernel computes what torch_npu's documentation says the operator
returns, in float32 for the reductions, for the options models use; an option outside
that raises ``NotImplementedError`` naming it, which the torch_npu definitions turn into
a :class:`~fxlab.ir.kernels.registry.KernelGap` naming the operator. Outputs the
operator returns only for training or debugging (softmax statistics, dropout seeds) are
zeros of the shapes torch_npu's Meta function gives, so every output exists with the
right shape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import torch
from torch.utils._pytree import tree_map

from fxlab.ir.npu_dtypes import TORCH_SCALAR_TYPES

# The output dtypes torch_npu's quantised operators take (``int? output_dtype``, torch's
# ScalarType numbers): int8, int32, float16, float32, bfloat16.
SCALAR_TYPES = {code: TORCH_SCALAR_TYPES[code] for code in (1, 3, 5, 6, 15)}

_Fn = TypeVar("_Fn", bound=Callable[..., Any])

# operator name (``npu_x`` for the default overload, ``npu_x.overload`` for another) ->
# its eager CPU kernel
CPU_KERNELS: dict[str, Callable[..., Any]] = {}
# operator name -> a Meta function, for the few operators torch_npu's Meta file leaves out
META_KERNELS: dict[str, Callable[..., Any]] = {}


def cpu_kernel(*names: str) -> Callable[[_Fn], _Fn]:
    """Register the decorated function as the eager CPU kernel of torch_npu operators
    ``names`` (``"npu_x"`` for the default overload, ``"npu_x.List"`` for another); a
    name taken twice raises. The torch_npu definitions register them with torch while
    the operators are defined."""

    def decorate(fn: _Fn) -> _Fn:
        for name in names:
            if name in CPU_KERNELS:
                raise ValueError(f"two CPU kernels registered for npu::{name}")
            CPU_KERNELS[name] = fn
        return fn

    return decorate


def meta_kernel(*names: str) -> Callable[[_Fn], _Fn]:
    """Register the decorated function as the Meta function of torch_npu operators
    ``names`` that have none of their own (registered only where the operator has no
    Meta kernel)."""

    def decorate(fn: _Fn) -> _Fn:
        for name in names:
            if name in META_KERNELS:
                raise ValueError(f"two Meta functions registered for npu::{name}")
            META_KERNELS[name] = fn
        return fn

    return decorate


def no_cpu_kernel(name: str, reason: str) -> Callable[..., Any]:
    """A CPU kernel that says why ``name`` has none: the eager check reports it as not run."""

    def kernel(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{name} has no CPU reference kernel: {reason}")

    return kernel


def meta_outputs(op_name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """The operator's outputs as its Meta function gives them (shapes and dtypes), for
    outputs a kernel fills with zeros (statistics, reserved outputs)."""

    def to_meta(value: Any) -> Any:
        return value.to("meta") if isinstance(value, torch.Tensor) else value

    op = getattr(torch.ops.npu, op_name).default
    return op(*tree_map(to_meta, list(args)), **tree_map(to_meta, kwargs))


def zeros_like_meta(meta: torch.Tensor) -> torch.Tensor:
    return torch.zeros(meta.shape, dtype=meta.dtype)
