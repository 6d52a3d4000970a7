"""Every collective fxlab converts, once, on a small tensor: a functional and an in-place
all_reduce, all_gather, reduce_scatter, an even and an uneven all_to_all_single, a
broadcast, torch_npu.distributed's uneven all-gather and reduce-scatter. The ranks' data
differ so every collective changes the values."""

import torch
import torch_npu
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
from torch import nn


class EveryCollective(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        world, rank = dist.get_world_size(), dist.get_rank()
        reduced = funcol.all_reduce(x * 2, "sum", dist.group.WORLD)
        summed = x + 1
        dist.all_reduce(summed, op=dist.ReduceOp.MAX)
        gathered = funcol.all_gather_tensor(reduced, 0, dist.group.WORLD)
        scattered = funcol.reduce_scatter_tensor(gathered, "sum", 0, dist.group.WORLD)
        even = torch.empty_like(gathered)
        dist.all_to_all_single(even, gathered)
        sends = [1 + (rank + peer) % 2 for peer in range(world)]  # rows this rank sends each peer
        recvs = [1 + (peer + rank) % 2 for peer in range(world)]
        uneven = x.new_empty(sum(recvs), x.shape[1])
        dist.all_to_all_single(uneven, gathered[: sum(sends)], recvs, sends)
        dist.broadcast(summed, src=world - 1)
        rows = [2 + peer % 2 for peer in range(world)]  # rank r gives (and keeps) rows[r] rows
        gathered_uneven = x.new_empty(sum(rows), x.shape[1])
        torch_npu.distributed.all_gather_into_tensor_uneven(gathered_uneven, x[: rows[rank]] + 1, rows)
        scattered_uneven = x.new_empty(rows[rank], x.shape[1])
        torch_npu.distributed.reduce_scatter_tensor_uneven(scattered_uneven, gathered_uneven * 2, rows)
        return reduced, summed, scattered, even, uneven, gathered_uneven, scattered_uneven


def get_model_and_inputs():
    rank = torch.distributed.get_rank()
    return EveryCollective(), (torch.arange(12.0).reshape(4, 3) * (rank + 1),)
