"""An expert-parallel mixture of experts: each rank holds some of the experts, and tokens
travel to their expert's rank and back with ``dist.all_to_all_single``.

Two dispatches (``--entry``):

- ``get_model_and_inputs`` (the default): a fixed capacity per destination rank, so both
  all-to-alls split evenly (TorchAir builds ``HcomAllToAll``); a token over capacity is
  dropped, as capacity-based MoE layers drop it;
- ``uneven``: each rank first tells the others how many tokens it sends them (an
  all-to-all of counts), then sends exactly those (split sizes read on the host: a graph
  break, then ``HcomAllToAllV`` with the ranks' own counts).

    fxlab trace --nproc 2 examples/distributed/moe_expert_parallel.py
    fxlab trace --nproc 2 examples/distributed/moe_expert_parallel.py --entry uneven
"""

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

EXPERTS, DIM, FFN, TOKENS, CAPACITY = 4, 32, 64, 16, 8


class Experts(nn.Module):
    """This rank's experts (a SwiGLU MLP each), from one seed on every rank."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        world, rank = dist.get_world_size(), dist.get_rank()
        self.per_rank = EXPERTS // world
        mine = slice(rank * self.per_rank, (rank + 1) * self.per_rank)
        self.gate_up = nn.Parameter((torch.randn(EXPERTS, 2 * FFN, DIM) * 0.05)[mine].clone())
        self.down = nn.Parameter((torch.randn(EXPERTS, DIM, FFN) * 0.05)[mine].clone())
        self.first = rank * self.per_rank

    def forward(self, x: torch.Tensor, expert: torch.Tensor) -> torch.Tensor:
        out = torch.zeros_like(x)
        for local in range(self.per_rank):
            gate, up = F.linear(x, self.gate_up[local]).chunk(2, dim=-1)
            y = F.linear(F.silu(gate) * up, self.down[local])
            out = torch.where((expert == self.first + local).unsqueeze(-1), y, out)
        return out


class MoE(nn.Module):
    def __init__(self, uneven: bool = False) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.router = nn.Linear(DIM, EXPERTS, bias=False)
        self.experts = Experts()
        self.uneven = uneven

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        probs = self.router(x).softmax(-1)
        weight, expert = probs.max(-1)
        rank_of = expert // self.experts.per_rank
        dispatch = self._by_counts if self.uneven else self._by_capacity
        return dispatch(x, expert, rank_of) * weight.unsqueeze(-1)

    def _by_capacity(self, x: torch.Tensor, expert: torch.Tensor, rank_of: torch.Tensor) -> torch.Tensor:
        world = dist.get_world_size()
        onehot = (rank_of.unsqueeze(1) == torch.arange(world)).long()
        slot = (onehot.cumsum(0) - 1).gather(1, rank_of.unsqueeze(1)).squeeze(1)  # place among its rank's tokens
        kept = slot < CAPACITY
        index = torch.where(kept, rank_of * CAPACITY + slot, world * CAPACITY)  # dropped ones go to a spare row
        send = _place(x.new_zeros(world * CAPACITY + 1, DIM), index, x)[:-1]
        send_expert = _place(expert.new_full((world * CAPACITY + 1,), -1), index, expert)[:-1]
        recv, recv_expert = torch.empty_like(send), torch.empty_like(send_expert)
        dist.all_to_all_single(recv, send)
        dist.all_to_all_single(recv_expert, send_expert)
        done = self.experts(recv, recv_expert)
        back = torch.empty_like(done)
        dist.all_to_all_single(back, done)
        padded = torch.cat([back, back.new_zeros(1, DIM)])
        return padded[index] * kept.unsqueeze(-1)

    def _by_counts(self, x: torch.Tensor, expert: torch.Tensor, rank_of: torch.Tensor) -> torch.Tensor:
        world = dist.get_world_size()
        order = (rank_of * x.shape[0] + torch.arange(x.shape[0])).argsort()  # by destination, in token order
        send_counts = torch.bincount(rank_of, minlength=world)
        recv_counts = torch.empty_like(send_counts)
        dist.all_to_all_single(recv_counts, send_counts)
        sends, recvs = send_counts.tolist(), recv_counts.tolist()
        recv = x.new_empty(sum(recvs), DIM)
        recv_expert = expert.new_empty(sum(recvs))
        dist.all_to_all_single(recv, x[order], recvs, sends)
        dist.all_to_all_single(recv_expert, expert[order], recvs, sends)
        done = self.experts(recv, recv_expert)
        back = x.new_empty(x.shape[0], DIM)
        dist.all_to_all_single(back, done, sends, recvs)
        return _place(torch.empty_like(back), order, back)


def _place(base: torch.Tensor, index: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """``base`` with ``rows[i]`` written at row ``index[i]`` (a scatter: TorchAir converts
    it, where it refuses index_copy)."""
    where = index.view(-1, *([1] * (rows.dim() - 1))).expand_as(rows)
    return base.scatter(0, where, rows)


def _inputs() -> tuple[torch.Tensor]:
    return (torch.randn(TOKENS, DIM, generator=torch.Generator().manual_seed(1 + dist.get_rank())),)


def get_model_and_inputs():
    return MoE().eval(), _inputs()


def uneven():
    return MoE(uneven=True).eval(), _inputs()
