"""Seed scenario: ``npu::my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2)``,
a custom op with an optional tensor, a tensor list and scalar attributes.

    fxlab trace examples/my_op.py
    fxlab ops check npu::my_op

Scalars make TorchAir's auto converter inapplicable, so the op needs a registered
converter (fxlab ships one producing the GE op ``MyOp`` with attrs ``attr1``/``attr2``).
"""
import torch

import fxlab.ops  # noqa: F401  (registers the seed ops: torch.ops.npu.*)


class MyOpModel(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor, z0: torch.Tensor, z1: torch.Tensor) -> torch.Tensor:
        with_y = torch.ops.npu.my_op(x, y, [z0, z1], 0.5, 2)
        without_y = torch.ops.npu.my_op(x, None, [z0], 1.5, 1)
        return with_y + without_y


torch.manual_seed(0)
model = MyOpModel()
example_inputs = tuple(torch.randn(2, 8) for _ in range(4))
