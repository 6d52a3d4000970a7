"""Seed scenario: a non-in-place custom op, ``npu::npu_add_custom(Tensor x, Tensor y) -> Tensor``
(the AddCustom Ascend C sample), inside a small model.

    fxlab trace examples/npu_add_custom.py
    fxlab ops check npu::npu_add_custom

``import fxlab.ops`` gives the op a CPU kernel, a Meta function and a converter to the GE
op ``AddCustom``; on an NPU machine torch_npu's own registration is reused.
"""
import torch

import fxlab.ops  # noqa: F401  (registers the seed ops: torch.ops.npu.*)


class AddCustomModel(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        z = torch.ops.npu.npu_add_custom(self.proj(x), y)
        return torch.relu(z)


torch.manual_seed(0)
model = AddCustomModel()
example_inputs = (torch.randn(4, 16), torch.randn(4, 16))
