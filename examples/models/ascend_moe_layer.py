"""A mixture-of-experts layer written for Ascend, as serving code writes it: torch_npu's
fused gating top-k softmax, routing of the tokens to their experts, expert token counts,
grouped matmuls over the experts, SwiGLU, and the weighted sum back per token.

    fxlab trace examples/models/ascend_moe_layer.py
    fxlab trace examples/models/ascend_moe_layer.py --converter torchair

Without an NPU, fxlab defines torch_npu's operators from a torch_npu copy
(``fxlab torchair fetch``) and runs these with its CPU reference kernels.
"""
import torch
import torch_npu
from torch import nn

TOKENS, HIDDEN, INTERMEDIATE, EXPERTS, TOP_K = 8, 32, 64, 4, 2


class AscendMoeLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gate = nn.Linear(HIDDEN, EXPERTS, bias=False)
        # Every expert's gate and up projections side by side, then its down projection.
        self.w13 = nn.Parameter(torch.randn(EXPERTS, HIDDEN, 2 * INTERMEDIATE) * HIDDEN**-0.5)
        self.w2 = nn.Parameter(torch.randn(EXPERTS, INTERMEDIATE, HIDDEN) * INTERMEDIATE**-0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tokens = x.shape[0]
        logits = self.gate(x)
        weights, expert_ids, row_idx = torch_npu.npu_moe_gating_top_k_softmax(logits, None, k=TOP_K)
        routed, routed_row_idx, routed_experts = torch_npu.npu_moe_init_routing(
            x, row_idx=row_idx, expert_idx=expert_ids, active_num=tokens
        )
        tokens_per_expert = torch_npu.npu_moe_compute_expert_tokens(routed_experts, EXPERTS).to(torch.int64)
        gate_up = torch_npu.npu_grouped_matmul(
            [routed], [self.w13], group_list=tokens_per_expert, split_item=2, group_type=0, group_list_type=0
        )[0]
        hidden = torch_npu.npu_swiglu(gate_up, dim=-1)
        down = torch_npu.npu_grouped_matmul(
            [hidden], [self.w2], group_list=tokens_per_expert, split_item=2, group_type=0, group_list_type=0
        )[0]
        return torch_npu.npu_moe_finalize_routing(
            down, skip1=None, skip2=None, bias=None, scales=weights.to(down.dtype),
            expanded_src_to_dst_row=routed_row_idx, export_for_source_row=expert_ids,
        )


def get_model_and_inputs():
    torch.manual_seed(0)
    model = AscendMoeLayer().eval().to(torch.bfloat16)
    return model, (torch.randn(TOKENS, HIDDEN).bfloat16(),)
