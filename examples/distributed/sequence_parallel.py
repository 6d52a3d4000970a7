"""Sequence parallelism around tensor-parallel MLPs: the activations between blocks are
split along the sequence, all-gathered before each column-parallel linear and
reduce-scattered after each row-parallel one.

The first block uses the functional collectives (``all_gather_tensor``,
``reduce_scatter_tensor``), the second the in-place ``dist.all_gather_into_tensor`` and
``dist.reduce_scatter_tensor`` (Dynamo traces them as the functional ones). TorchAir
builds ``HcomAllGather`` and ``HcomReduceScatter`` for them.

    fxlab trace --nproc 2 examples/distributed/sequence_parallel.py
"""

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.nn.functional as F
from torch import nn

SEQ, BATCH, DIM, FFN = 8, 2, 32, 64


def _shard(full: torch.Tensor, dim: int) -> nn.Parameter:
    return nn.Parameter(full.chunk(dist.get_world_size(), dim=dim)[dist.get_rank()].clone())


class Block(nn.Module):
    def __init__(self, inplace: bool) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(DIM)
        self.up = _shard(torch.randn(FFN, DIM) * 0.05, 0)  # column-parallel
        self.down = _shard(torch.randn(DIM, FFN) * 0.05, 1)  # row-parallel
        self.inplace = inplace

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        full = self._gather(self.norm(x))
        partial = F.linear(F.gelu(F.linear(full, self.up)), self.down)
        return x + self._reduce_scatter(partial)

    def _gather(self, shard: torch.Tensor) -> torch.Tensor:
        if not self.inplace:
            return funcol.all_gather_tensor(shard, 0, dist.group.WORLD)
        full = shard.new_empty(shard.shape[0] * dist.get_world_size(), *shard.shape[1:])
        dist.all_gather_into_tensor(full, shard)
        return full

    def _reduce_scatter(self, partial: torch.Tensor) -> torch.Tensor:
        if not self.inplace:
            return funcol.reduce_scatter_tensor(partial, "sum", 0, dist.group.WORLD)
        out = partial.new_empty(partial.shape[0] // dist.get_world_size(), *partial.shape[1:])
        dist.reduce_scatter_tensor(out, partial)
        return out


class SequenceParallel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)  # the same full weights on every rank; each keeps its slice
        self.blocks = nn.ModuleList([Block(inplace=False), Block(inplace=True)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x


def get_model_and_inputs():
    model = SequenceParallel().eval()
    full = torch.randn(SEQ, BATCH, DIM, generator=torch.Generator().manual_seed(1))
    return model, (full.chunk(dist.get_world_size(), dim=0)[dist.get_rank()].contiguous(),)
