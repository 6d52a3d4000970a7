"""Two pieces around attention, on CPU: combining sequence-parallel partial results
(``npu_attention_update``) and Swin's windowed softmax (``npu_masked_softmax_with_rel_pos_bias``).

``npu_attention_update`` (``update_type`` 0, the only one the NPU implements): each of the
``sp`` partial outputs ``o_i`` came with the log-sum-exp ``lse_i`` of its scores, so the
whole is ``sum_i exp(lse_i - lse) o_i`` with ``lse = log(sum_i exp(lse_i))``, returned
with ``lse``. ``npu_masked_softmax_with_rel_pos_bias``: ``softmax(x * scale + mask +
bias)`` over the last dim, the mask and bias broadcast. Float32 math.
"""

from __future__ import annotations

import torch

from fxlab.ir.kernels.npu_reference import cpu_kernel


@cpu_kernel("npu_attention_update")
def attention_update(lse: list[torch.Tensor], local_out: list[torch.Tensor], update_type: int) -> tuple[torch.Tensor, torch.Tensor]:
    if int(update_type) != 0:
        raise NotImplementedError(f"npu_attention_update: update_type {update_type} has no CPU reference kernel (0, decode, has)")
    stacked = torch.stack([x.float() for x in lse])
    total = torch.logsumexp(stacked, dim=0)
    weights = torch.exp(stacked - total).unsqueeze(-1)
    out = (weights * torch.stack([o.float() for o in local_out])).sum(0)
    return out.to(local_out[0].dtype), total.to(lse[0].dtype)


@cpu_kernel("npu_masked_softmax_with_rel_pos_bias")
def masked_softmax_with_rel_pos_bias(
    x: torch.Tensor,
    atten_mask: torch.Tensor | None,
    relative_pos_bias: torch.Tensor,
    scale_value: float = 1.0,
    inner_precision_mode: int = 0,
) -> torch.Tensor:
    scores = x.float() * scale_value + relative_pos_bias.float()
    if atten_mask is not None:
        scores = scores + atten_mask.float()
    return torch.softmax(scores, dim=-1).to(x.dtype)
