"""Tensor parallelism with torch's own API: a device mesh and ``parallelize_module``
(``ColwiseParallel`` / ``RowwiseParallel``). The weights are DTensors; Dynamo traces the
redistribution as the functional collectives (one all_reduce after the row-parallel
linear), which TorchAir converts to ``HcomAllReduce``. The checks compare each rank's
shards.

    fxlab trace --nproc 2 examples/distributed/dtensor_tp.py
"""

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)  # the same full weights on every rank; parallelize_module shards them
        self.up = nn.Linear(16, 64)
        self.down = nn.Linear(64, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.relu(self.up(x)))


def get_model_and_inputs():
    mesh = init_device_mesh("cpu", (dist.get_world_size(),))
    model = parallelize_module(MLP(), mesh, {"up": ColwiseParallel(), "down": RowwiseParallel()})
    return model.eval(), (torch.randn(4, 16, generator=torch.Generator().manual_seed(1)),)
