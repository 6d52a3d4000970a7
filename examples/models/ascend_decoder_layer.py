"""A decoder layer written for Ascend: torch_npu's RMSNorm, rotary embedding, fused
inference attention, SwiGLU, and a KV cache written in place by ``npu_scatter_nd_update_``.

One decode step: the new token's key and value go into the caches at its position, then
the token attends to the cache (positions after it masked out).

    fxlab trace examples/models/ascend_decoder_layer.py
    fxlab trace examples/models/ascend_decoder_layer.py --converter torchair

Without an NPU, fxlab defines torch_npu's operators from a torch_npu copy
(``fxlab torchair fetch``) and runs these with its CPU reference kernels.
"""
import torch
import torch_npu
from torch import nn

BATCH, DIM, HEADS, KV_HEADS, MAX_LEN = 2, 64, 4, 2, 16
HEAD_DIM = DIM // HEADS


class AscendDecoderLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.input_norm = nn.Parameter(torch.ones(DIM))
        self.post_norm = nn.Parameter(torch.ones(DIM))
        self.q_proj = nn.Linear(DIM, HEADS * HEAD_DIM, bias=False)
        self.kv_proj = nn.Linear(DIM, 2 * KV_HEADS * HEAD_DIM, bias=False)
        self.o_proj = nn.Linear(HEADS * HEAD_DIM, DIM, bias=False)
        self.gate_up = nn.Linear(DIM, 2 * 4 * DIM, bias=False)
        self.down = nn.Linear(4 * DIM, DIM, bias=False)
        self.register_buffer("k_cache", torch.zeros(BATCH, MAX_LEN, KV_HEADS * HEAD_DIM))
        self.register_buffer("v_cache", torch.zeros(BATCH, MAX_LEN, KV_HEADS * HEAD_DIM))

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
        batch, seq, _ = x.shape
        h, _ = torch_npu.npu_rms_norm(x, self.input_norm, 1e-6)
        q = self.q_proj(h).view(batch, seq, HEADS, HEAD_DIM)
        k, v = self.kv_proj(h).view(batch, seq, 2 * KV_HEADS, HEAD_DIM).chunk(2, dim=2)
        q, k = torch_npu.npu_apply_rotary_pos_emb(q, k.contiguous(), cos, sin, "BSND")

        # The cache write: (batch, position) index pairs, one per new token.
        rows = torch.arange(batch).view(batch, 1).expand(batch, seq)
        indices = torch.stack([rows, position.view(batch, seq)], dim=-1)
        torch_npu.npu_scatter_nd_update_(self.k_cache, indices, k.reshape(batch, seq, -1))
        torch_npu.npu_scatter_nd_update_(self.v_cache, indices, v.reshape(batch, seq, -1))

        future = torch.arange(MAX_LEN).view(1, MAX_LEN) > position.view(batch, 1)
        attn, _ = torch_npu.npu_fused_infer_attention_score(
            q.reshape(batch, seq, -1), self.k_cache, self.v_cache,
            atten_mask=future.view(batch, 1, 1, MAX_LEN), num_heads=HEADS, num_key_value_heads=KV_HEADS,
            input_layout="BSH", scale=HEAD_DIM ** -0.5,
        )
        normed, _, residual = torch_npu.npu_add_rms_norm(x, self.o_proj(attn), self.post_norm, 1e-6)
        return residual + self.down(torch_npu.npu_swiglu(self.gate_up(normed), dim=-1))


def get_model_and_inputs():
    torch.manual_seed(0)
    model = AscendDecoderLayer().eval()
    position = torch.tensor([[5], [9]])
    angles = position.view(BATCH, 1, 1, 1).float() * torch.arange(HEAD_DIM // 2).float().div(HEAD_DIM // 2).neg().exp2()
    cos = torch.cat([angles.cos(), angles.cos()], dim=-1)
    sin = torch.cat([angles.sin(), angles.sin()], dim=-1)
    return model, (torch.randn(BATCH, 1, DIM), cos, sin, position)
