"""Rank 1 raises in its own forward while rank 0 goes on to the all_reduce."""
import torch
import torch.distributed as dist
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        if dist.get_rank() == 1:
            raise ValueError("rank 1 has no shard")
        dist.all_reduce(x)
        return x * 2


def get_model_and_inputs():
    return Model(), (torch.randn(3, 8),)
