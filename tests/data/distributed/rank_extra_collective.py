"""Rank 1 calls one all_reduce more than rank 0: on a device rank 1 would wait forever."""
import torch
import torch.distributed as dist
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        dist.all_reduce(x)
        if dist.get_rank() == 1:
            y = x * 3
            dist.all_reduce(y)
            x = x + y
        return x * 2


def get_model_and_inputs():
    return Model(), (torch.randn(3, 8),)
