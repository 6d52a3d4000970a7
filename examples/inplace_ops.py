"""ATen in-place ops on an intermediate, on a view, and on graph inputs.

    fxlab trace examples/inplace_ops.py

- ``h.mul_(2)`` on an intermediate: functionalization turns it into ``mul``;
- ``self.cache[:, :4] = h`` writes a slice of a buffer (a view of a graph input):
  ``slice`` + ``copy`` + ``slice_scatter`` and a trailing ``copy_`` into the buffer;
- ``x.add_(1)`` mutates a user input: ``add`` + a trailing ``copy_`` epilogue, which the
  re-inplaced stage folds back to ``add_``.
"""
import torch


class InplaceOps(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)
        self.register_buffer("cache", torch.zeros(2, 6, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(x)
        h.mul_(2)  # in place on an intermediate
        self.cache[:, :4] = h  # slice assignment into a cache buffer
        x.add_(1)  # in place on a graph input
        return h.sum(dim=-1) + self.cache.mean()


torch.manual_seed(0)
model = InplaceOps()
example_inputs = (torch.randn(2, 4, 8),)
