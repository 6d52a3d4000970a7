"""A w8a8 linear layer written for Ascend, as serving code quantises it: the activations
quantised per token on the fly (``npu_dynamic_quant``), the weight quantised per output
channel ahead of time, and an int8 matmul dequantised by both scales
(``npu_quant_matmul``), in bfloat16.

    fxlab trace examples/models/ascend_w8a8_linear.py
    fxlab trace examples/models/ascend_w8a8_linear.py --converter torchair

Without an NPU, fxlab defines torch_npu's operators from a torch_npu copy
(``fxlab torchair fetch``) and runs these with its CPU reference kernels.
"""
import torch
import torch_npu
from torch import nn

TOKENS, IN_FEATURES, OUT_FEATURES = 4, 64, 32
BFLOAT16 = 15  # torch's ScalarType code, as torch_npu's output_dtype arguments take it


class W8A8Linear(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        weight = torch.randn(OUT_FEATURES, IN_FEATURES)
        scale = weight.abs().amax(dim=1) / 127.0
        # The layout serving code keeps: int8 (in, out) and a float32 scale per output channel.
        self.register_buffer("weight", torch.round(weight / scale.unsqueeze(1)).to(torch.int8).t().contiguous())
        self.register_buffer("weight_scale", scale)
        self.register_buffer("bias", torch.randn(OUT_FEATURES).bfloat16())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        quantised, token_scale = torch_npu.npu_dynamic_quant(x)
        out = torch_npu.npu_quant_matmul(
            quantised, self.weight, self.weight_scale, pertoken_scale=token_scale, output_dtype=BFLOAT16
        )
        return out + self.bias


def get_model_and_inputs():
    torch.manual_seed(0)
    return W8A8Linear().eval(), (torch.randn(TOKENS, IN_FEATURES).bfloat16(),)
