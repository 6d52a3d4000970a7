"""``npu_ffn`` on CPU, and why the attention-FFN disaggregation operators have no kernel.

``npu_ffn``: ``y = act(x @ W1 + b1) @ W2 + b2`` in float32, per expert when the weights
have an expert dim (rows of ``x`` in groups of ``expert_tokens``, or up to the cumulative
``expert_tokens_index``); the gated activations (``geglu``, ``swiglu``, ``reglu``) halve
the first product, activation of the first half times the second. Quantised FFNs have no
kernel here.

The disaggregation operators (``npu_attention_to_ffn``, ``npu_ffn_to_attention``, the
worker schedulers, ``npu_attention_worker_combine``, ``npu_ffn_worker_batching``) move
tokens between attention and FFN ranks through a schedule context, a device buffer the
ranks share: there is no single-process computation to stand for them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from fxlab.ir.kernels.npu_attention_reference import unsupported
from fxlab.ir.kernels.npu_reference import no_cpu_kernel, cpu_kernel

ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "relu": F.relu,
    "gelu": F.gelu,
    "fastgelu": lambda x: x * torch.sigmoid(1.702 * x),
    "silu": F.silu,
}
GATED: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {"geglu": F.gelu, "swiglu": F.silu, "reglu": F.relu}
SHARED_CONTEXT = "it moves tokens between attention and FFN ranks through a schedule context the ranks share on the device"


def _activate(h: torch.Tensor, activation: str) -> torch.Tensor:
    if activation in GATED:
        first, second = h.chunk(2, dim=-1)
        return GATED[activation](first) * second
    if activation not in ACTIVATIONS:
        raise NotImplementedError(f"npu_ffn: activation {activation!r} has no CPU reference kernel")
    return ACTIVATIONS[activation](h)


def _layer(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, b1: Any, b2: Any, activation: str) -> torch.Tensor:
    h = x.float() @ w1.float()
    if b1 is not None:
        h = h + b1.float()
    y = _activate(h, activation) @ w2.float()
    return y + b2.float() if b2 is not None else y


def ffn(
    x: torch.Tensor, weight1: torch.Tensor, weight2: torch.Tensor, activation: str, counts: list[int] | None, options: dict[str, Any]
) -> torch.Tensor:
    """The FFN; ``counts`` are the tokens per expert (None without experts)."""
    quant = (
        "scale",
        "offset",
        "deq_scale1",
        "deq_scale2",
        "antiquant_scale1",
        "antiquant_scale2",
        "antiquant_offset1",
        "antiquant_offset2",
    )
    unsupported("npu_ffn", options, quant)
    b1, b2 = options.get("bias1"), options.get("bias2")
    if weight1.dim() == 2:
        return _layer(x, weight1, weight2, b1, b2, activation).to(x.dtype)
    counts = counts if counts is not None else [x.shape[0]]
    outs = []
    for e, part in enumerate(x[: sum(counts)].split(counts)):
        outs.append(_layer(part, weight1[e], weight2[e], b1[e] if b1 is not None else None, b2[e] if b2 is not None else None, activation))
    y = torch.cat(outs)
    if y.shape[0] < x.shape[0]:
        y = torch.cat([y, y.new_zeros(x.shape[0] - y.shape[0], y.shape[1])])
    return y.to(x.dtype)


def counts_from(tokens: Any, as_index: bool) -> list[int] | None:
    """Tokens per expert from ``expert_tokens`` (counts) or ``expert_tokens_index`` (cumulative)."""
    if tokens is None:
        return None
    values = [int(v) for v in (tokens.tolist() if isinstance(tokens, torch.Tensor) else tokens)]
    return [b - a for a, b in zip([0, *values[:-1]], values)] if as_index else values


@cpu_kernel("npu_ffn")
def npu_ffn(x: torch.Tensor, weight1: torch.Tensor, weight2: torch.Tensor, activation: str, **options: Any) -> torch.Tensor:
    index = options.pop("expert_tokens_index", None)
    tokens = options.pop("expert_tokens", None)
    counts = counts_from(index, True) if index is not None else counts_from(tokens, False)
    options.pop("inner_precise", None)
    options.pop("output_dtype", None)
    return ffn(x, weight1, weight2, activation, counts, options)


for _name in (
    "npu_attention_to_ffn",
    "npu_ffn_to_attention",
    "attention_worker_scheduler",
    "ffn_worker_scheduler",
    "npu_attention_worker_combine",
    "npu_ffn_worker_batching",
):
    cpu_kernel(_name)(no_cpu_kernel(_name, SHARED_CONTEXT))
