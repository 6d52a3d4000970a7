"""CPU reference kernels for the torch_npu operators Ascend models call most.

With these, a model written with ``torch_npu.npu_rms_norm``, ``npu_swiglu`` ...
runs eagerly on a CPU-only machine, so fxlab compares eager with compiled and the
Ascend IR's reference run with both. Each kernel computes what torch_npu's documentation
says the operator returns, in float32 for the reductions, for the options models use;
an option outside that raises ``NotImplementedError`` naming it. Outputs the operator
returns only for training or debugging (softmax statistics, dropout seeds) are zeros of
the shapes torch_npu's Meta function gives, so every output exists with the right shape.

Each family of operators keeps its math and CPU kernels in its own module
(``npu_attention_reference``, ``npu_rope_reference``, ...), added to :data:`CPU_KERNELS`
with :func:`register_cpu_kernels` when the module is imported (importing
:mod:`fxlab.ir.kernels` imports them all).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch.utils._pytree import tree_map

# torch's ScalarType numbering, which torch_npu's ``int? output_dtype`` arguments use.
SCALAR_TYPES = {1: torch.int8, 3: torch.int32, 5: torch.float16, 6: torch.float32, 15: torch.bfloat16}


def meta_outputs(op_name: str, args: Any, kwargs: dict[str, Any]) -> Any:
    """The operator's outputs as its Meta function gives them (shapes and dtypes), for
    outputs a kernel fills with zeros (statistics, reserved outputs)."""

    def to_meta(value: Any) -> Any:
        return value.to("meta") if isinstance(value, torch.Tensor) else value

    op = getattr(torch.ops.npu, op_name).default
    return op(*tree_map(to_meta, list(args)), **tree_map(to_meta, kwargs))


def zeros_like_meta(meta: torch.Tensor) -> torch.Tensor:
    return torch.zeros(meta.shape, dtype=meta.dtype)


# -- normalisation -----------------------------------------------------------------------------
def rms_norm(x: torch.Tensor, gamma: torch.Tensor, epsilon: float = 1e-6) -> tuple[torch.Tensor, torch.Tensor]:
    """(y, rstd): rstd over gamma's (trailing) dims, kept as size-1 dims."""
    dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
    x32 = x.float()
    rstd = torch.rsqrt(x32.pow(2).mean(dims, keepdim=True) + epsilon)
    return (x32 * rstd * gamma.float()).to(x.dtype), rstd


def add_rms_norm(x1: torch.Tensor, x2: torch.Tensor, gamma: torch.Tensor, epsilon: float = 1e-6) -> tuple[torch.Tensor, ...]:
    """(y, rstd, x1 + x2)."""
    x = x1 + x2
    y, rstd = rms_norm(x, gamma, epsilon)
    return y, rstd, x


# -- activations and quantisation ----------------------------------------------------------------
def swiglu(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """silu(first half) * second half, halves split along ``dim``."""
    first, second = x.chunk(2, dim=dim)
    return (F.silu(first.float()) * second.float()).to(x.dtype)


def dynamic_quant(
    input: torch.Tensor,
    *,
    smooth_scales: torch.Tensor | None = None,
    group_index: torch.Tensor | None = None,
    dst_type: int | None = None,
    quant_mode: str = "pertoken",
    dst_type_max: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric int8 per token: scale = max|x| / 127 over the last dim, y = round(x / scale)."""
    if group_index is not None or quant_mode != "pertoken" or dst_type not in (None, 1):
        raise NotImplementedError("npu_dynamic_quant: only per-token int8 quantisation without group_index has a CPU reference kernel")
    x = input.float() * (smooth_scales.float() if smooth_scales is not None else 1.0)
    scale = x.abs().amax(dim=-1) / 127.0
    safe = torch.where(scale == 0, torch.ones_like(scale), scale)
    y = torch.round(x / safe.unsqueeze(-1)).clamp(-128, 127).to(torch.int8)
    return y, scale


def quant_matmul(
    x1: torch.Tensor,
    x2: torch.Tensor,
    scale: torch.Tensor,
    *,
    offset: torch.Tensor | None = None,
    pertoken_scale: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    output_dtype: int | None = None,
    **unused: Any,
) -> torch.Tensor:
    """int8 x int8 matmul accumulated in int32 (+ int32 bias), dequantised by ``scale``
    (per channel) and ``pertoken_scale`` (per row); int8 output (requantised) when no
    output dtype is given."""
    if any(v is not None for v in unused.values()):
        raise NotImplementedError(
            f"npu_quant_matmul: {', '.join(k for k, v in unused.items() if v is not None)} have no CPU reference kernel"
        )
    acc = torch.matmul(x1.to(torch.int64), x2.to(torch.int64))
    if bias is not None and bias.dtype == torch.int32:
        acc = acc + bias.to(torch.int64)
    out = acc.to(torch.float64) * scale.to(torch.float64)
    if pertoken_scale is not None:
        out = out * pertoken_scale.to(torch.float64).unsqueeze(-1)
    if bias is not None and bias.dtype != torch.int32:
        out = out + bias.to(torch.float64)
    if output_dtype is None or SCALAR_TYPES.get(output_dtype) == torch.int8:
        return (torch.round(out) + (offset.to(torch.float64) if offset is not None else 0)).clamp(-128, 127).to(torch.int8)
    return out.to(SCALAR_TYPES.get(output_dtype, torch.float16))


# -- MoE -----------------------------------------------------------------------------------------
def moe_gating_top_k_softmax(x: torch.Tensor, finished: torch.Tensor | None = None, k: int = 1) -> tuple[torch.Tensor, ...]:
    """(top-k softmax probabilities, their expert ids, row ids): the row id of the j-th
    choice of row i is ``j * rows + i`` (the order the routing op reads them in).
    A finished row routes every choice to expert ``num_experts``."""
    probs = torch.softmax(x.float(), dim=-1)
    values, experts = probs.topk(k, dim=-1)
    experts = experts.to(torch.int32)
    if finished is not None:
        experts = torch.where(finished.unsqueeze(-1), torch.full_like(experts, x.shape[-1]), experts)
    rows = math.prod(x.shape[:-1])
    row_idx = torch.arange(rows * k, dtype=torch.int32).reshape(k, rows).t().reshape(*x.shape[:-1], k)
    return values.to(x.dtype), experts, row_idx.contiguous()


def grouped_matmul(
    x: list[torch.Tensor],
    weight: list[torch.Tensor],
    *,
    bias: list[torch.Tensor] | None = None,
    group_list: torch.Tensor | None = None,
    split_item: int | None = 0,
    group_type: int | None = None,
    group_list_type: int | None = 0,
    **unused: Any,
) -> list[torch.Tensor]:
    """``y_i = x_i @ w_i (+ b_i)``. With one ``x`` and a ``group_list`` (group_type 0),
    the rows of ``x`` are split into groups (cumulative ends, or counts when
    group_list_type is 1) and group i uses weight i (or slice i of a 3-D weight).
    split_item 2/3 returns one tensor, 0/1 one per group."""
    if any(v not in (None, 0) for v in unused.values()):
        raise NotImplementedError(
            f"npu_grouped_matmul: {', '.join(k for k, v in unused.items() if v not in (None, 0))} have no CPU reference kernel"
        )
    weights = list(weight[0].unbind(0)) if len(weight) == 1 and weight[0].dim() == 3 else list(weight)
    biases = (list(bias[0].unbind(0)) if len(bias) == 1 and bias[0].dim() == 2 else list(bias)) if bias else [None] * len(weights)
    if len(x) == 1 and len(weights) > 1:
        if group_list is None:
            raise NotImplementedError("npu_grouped_matmul: one x and several weights need a group_list")
        counts = group_list.tolist() if group_list_type == 1 else torch.diff(group_list, prepend=group_list.new_zeros(1)).tolist()
        xs = list(x[0][: sum(counts)].split([int(c) for c in counts]))
    else:
        xs = list(x)
    outs = [_linear(xi, wi, bi) for xi, wi, bi in zip(xs, weights, biases)]
    return [torch.cat(outs)] if split_item in (2, 3) else outs


def _linear(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None) -> torch.Tensor:
    y = x.float() @ w.float()
    return (y + b.float() if b is not None else y).to(x.dtype)


# -- in-place --------------------------------------------------------------------------------------
def scatter_nd_update_(self: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor) -> torch.Tensor:
    """``self[indices[..., 0], indices[..., 1], ...] = updates``, in place."""
    with torch.no_grad():
        self[tuple(indices.long().unbind(-1))] = updates.to(self.dtype)
    return self


def scatter_nd_update(self: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor) -> torch.Tensor:
    return scatter_nd_update_(self.clone(), indices, updates)


CPU_KERNELS: dict[str, Callable[..., Any]] = {
    "npu_rms_norm": rms_norm,
    "npu_add_rms_norm": add_rms_norm,
    "npu_swiglu": swiglu,
    "npu_dynamic_quant": dynamic_quant,
    "npu_quant_matmul": quant_matmul,
    "npu_moe_gating_top_k_softmax": moe_gating_top_k_softmax,
    "npu_grouped_matmul": grouped_matmul,
    "npu_scatter_nd_update_": scatter_nd_update_,
    "npu_scatter_nd_update": scatter_nd_update,
}


def register_cpu_kernels(kernels: dict[str, Callable[..., Any]]) -> None:
    """Add a family's CPU kernels, by torch_npu operator name; a name taken twice raises."""
    for name, kernel in kernels.items():
        if name in CPU_KERNELS:
            raise ValueError(f"two CPU kernels for npu::{name}")
        CPU_KERNELS[name] = kernel


def no_cpu_kernel(name: str, reason: str) -> Callable[..., Any]:
    """A CPU kernel that says why ``name`` has none: the eager check reports it as not run."""

    def kernel(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{name} has no CPU reference kernel: {reason}")

    return kernel
