"""Two ranks that disagree on a collective: on an NPU the job would hang there.

The classic bug: a branch on the rank. Here rank 0 sums the partial results with an
all_reduce while the other ranks gather them with an all_gather (``FXLAB_MISMATCH=order``,
the default), or the last rank reduces a tensor one column short
(``FXLAB_MISMATCH=shape``). fxlab compares every rank's collectives through the process
group's store before any of them runs, and stops with an error naming both ranks, the
collective and each rank's source line:

    fxlab trace --nproc 2 examples/distributed/rank_mismatch.py
    FXLAB_MISMATCH=shape fxlab trace --nproc 2 examples/distributed/rank_mismatch.py
"""

import os

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
from torch import nn

KIND = os.environ.get("FXLAB_MISMATCH", "order")


class Partial(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.proj = nn.Linear(16, 8)
        self.rank, self.last = dist.get_rank(), dist.get_world_size() - 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        partial = self.proj(x)
        if KIND == "shape" and self.rank == self.last:
            partial = partial[:, :-1]  # an off-by-one slice on the last rank
        if KIND == "order" and self.rank != 0:
            return funcol.all_gather_tensor(partial, 0, dist.group.WORLD)
        return funcol.all_reduce(partial, "sum", dist.group.WORLD)


def get_model_and_inputs():
    return Partial().eval(), (torch.randn(4, 16),)
