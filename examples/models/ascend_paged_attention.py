"""One decode step of paged attention, written as Ascend serving code writes it.

The KV cache lives in blocks of BLOCK_SIZE tokens shared by every sequence; each
sequence's blocks are listed in its row of the block table. The step embeds the new
token's query and key with torch_npu's rotary embedding, writes its key and value into
their cache slots with ``npu_scatter_pa_kv_cache`` (in place), then attends with
``npu_fused_infer_attention_score`` over the blocks the block table names, each
sequence's length given as a Python list (``actual_seq_lengths_kv``), as serving code
passes it. Grouped-query heads (4 query heads share 2 key/value heads).

    fxlab trace examples/models/ascend_paged_attention.py
    fxlab trace examples/models/ascend_paged_attention.py --converter torchair

Without an NPU, fxlab defines torch_npu's operators from a torch_npu copy
(``fxlab torchair fetch``) and runs them with its CPU reference kernels. The sequence
lengths are the model's (a list attribute), as a serving step receives them from its
scheduler.
"""
import torch
import torch_npu
from torch import nn

BATCH, DIM, HEADS, KV_HEADS = 2, 64, 4, 2
HEAD_DIM = DIM // HEADS
BLOCK_SIZE, NUM_BLOCKS = 4, 8


class PagedAttentionDecode(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q_proj = nn.Linear(DIM, HEADS * HEAD_DIM, bias=False).half()
        self.kv_proj = nn.Linear(DIM, 2 * KV_HEADS * HEAD_DIM, bias=False).half()
        self.o_proj = nn.Linear(HEADS * HEAD_DIM, DIM, bias=False).half()
        self.register_buffer("key_cache", torch.randn(NUM_BLOCKS, BLOCK_SIZE, KV_HEADS, HEAD_DIM).half())
        self.register_buffer("value_cache", torch.randn(NUM_BLOCKS, BLOCK_SIZE, KV_HEADS, HEAD_DIM).half())
        # Each sequence's length once this step's token is in the cache.
        self.context_lens = [6, 10]

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, positions: torch.Tensor, block_table: torch.Tensor) -> torch.Tensor:
        batch = x.shape[0]
        q = self.q_proj(x).view(batch, 1, HEADS, HEAD_DIM)
        k, v = self.kv_proj(x).view(batch, 1, 2 * KV_HEADS, HEAD_DIM).chunk(2, dim=2)
        q, k = torch_npu.npu_apply_rotary_pos_emb(q, k.contiguous(), cos, sin, "BSND")

        # Each new token's slot: its block (from the block table) and its place in it.
        blocks = block_table.gather(1, (positions // BLOCK_SIZE).view(batch, 1)).view(batch)
        slots = (blocks * BLOCK_SIZE + positions % BLOCK_SIZE).to(torch.int32)
        torch_npu.npu_scatter_pa_kv_cache(
            k.reshape(batch, KV_HEADS, HEAD_DIM), v.reshape(batch, KV_HEADS, HEAD_DIM).contiguous(),
            self.key_cache, self.value_cache, slots, cache_mode="Norm",
        )

        attn, _ = torch_npu.npu_fused_infer_attention_score(
            q.reshape(batch, 1, HEADS * HEAD_DIM),
            self.key_cache.view(NUM_BLOCKS, BLOCK_SIZE, KV_HEADS * HEAD_DIM),
            self.value_cache.view(NUM_BLOCKS, BLOCK_SIZE, KV_HEADS * HEAD_DIM),
            block_table=block_table, actual_seq_lengths_kv=self.context_lens, block_size=BLOCK_SIZE,
            num_heads=HEADS, num_key_value_heads=KV_HEADS, input_layout="BSH", scale=HEAD_DIM ** -0.5,
        )
        return self.o_proj(attn)


def get_model_and_inputs():
    torch.manual_seed(0)
    model = PagedAttentionDecode().eval()
    positions = torch.tensor([5, 9])
    angles = positions.view(BATCH, 1, 1, 1).float() * torch.arange(HEAD_DIM // 2).float().div(HEAD_DIM // 2).neg().exp2()
    cos = torch.cat([angles.cos(), angles.cos()], dim=-1).half()
    sin = torch.cat([angles.sin(), angles.sin()], dim=-1).half()
    block_table = torch.tensor([[5, 2, 7], [0, 3, 1]], dtype=torch.int32)
    return model, (torch.randn(BATCH, 1, DIM).half(), cos, sin, positions, block_table)
