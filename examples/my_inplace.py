"""Seed scenario: an in-place custom op, ``npu::my_inplace(Tensor(a!) x, Tensor y) -> Tensor``
(x += y in place; returns a new tensor shaped like y).

    fxlab trace examples/my_inplace.py

Watch it move through the stages: ``aten`` still calls ``npu.my_inplace``; ``functional``
has ``auto_functionalized_v2`` plus a trailing ``copy_`` into the mutated graph input;
``ascend_ir`` has ``TensorMove``, the in-place GE op ``MyInplace`` and ``Assign`` back into
the input; with ``--mode reduce-overhead`` the ``aclgraph`` stage has ``my_inplace`` back.
The third call writes a view of a buffer (``state[:2]``).
"""
import torch

import fxlab.ops  # noqa: F401  (registers the seed ops: torch.ops.npu.*)


class MyInplaceModel(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("state", torch.zeros(4, 8))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        h = x * 2
        z = torch.ops.npu.my_inplace(h, y)  # on an intermediate
        w = torch.ops.npu.my_inplace(x, y)  # on a graph input
        torch.ops.npu.my_inplace(self.state[:2], y)  # on a view of a buffer
        return h + z + w


torch.manual_seed(0)
model = MyInplaceModel()
example_inputs = (torch.randn(2, 8), torch.randn(2, 8))
