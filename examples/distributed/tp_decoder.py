"""A tensor-parallel decoder layer, Megatron style, one rank per process.

Every rank holds a slice of one model's weights (all ranks build the full weights from
one seed and keep their slice):

- a vocabulary-parallel embedding: each rank looks up the tokens of its slice of the
  vocabulary, zeros for the others, and an all_reduce sums the ranks' rows;
- attention with column-parallel q/k/v projections (each rank its share of the heads)
  and a row-parallel output projection whose partial sums are added by a functional
  all_reduce (``torch.distributed._functional_collectives``);
- a SwiGLU MLP with column-parallel gate/up and a row-parallel down projection reduced
  by the in-place ``dist.all_reduce`` (Dynamo traces it as the functional one).

    fxlab trace --nproc 2 examples/distributed/tp_decoder.py
    torchrun --nproc-per-node 2 -m fxlab trace examples/distributed/tp_decoder.py

fxlab initialises the default process group (gloo) when the file does not.
"""

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.nn.functional as F
from torch import nn

VOCAB, DIM, HEADS, FFN, SEQ = 128, 64, 4, 128, 8


def _shard(full: torch.Tensor, dim: int) -> nn.Parameter:
    """This rank's slice of ``full`` along ``dim``."""
    return nn.Parameter(full.chunk(dist.get_world_size(), dim=dim)[dist.get_rank()].clone())


class VocabParallelEmbedding(nn.Module):
    def __init__(self, full: torch.Tensor) -> None:
        super().__init__()
        self.weight = _shard(full, 0)
        self.start = dist.get_rank() * self.weight.shape[0]

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        local = ids - self.start
        outside = (local < 0) | (local >= self.weight.shape[0])
        rows = F.embedding(local.masked_fill(outside, 0), self.weight)
        return funcol.all_reduce(rows.masked_fill(outside.unsqueeze(-1), 0.0), "sum", dist.group.WORLD)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Attention(nn.Module):
    def __init__(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor) -> None:
        super().__init__()
        self.q, self.k, self.v = _shard(q, 0), _shard(k, 0), _shard(v, 0)  # column-parallel
        self.o = _shard(o, 1)  # row-parallel
        self.heads = HEADS // dist.get_world_size()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, _ = x.shape

        def heads(w: torch.Tensor) -> torch.Tensor:
            return F.linear(x, w).view(batch, seq, self.heads, -1).transpose(1, 2)

        attn = F.scaled_dot_product_attention(heads(self.q), heads(self.k), heads(self.v), is_causal=True)
        partial = F.linear(attn.transpose(1, 2).reshape(batch, seq, -1), self.o)
        return funcol.all_reduce(partial, "sum", dist.group.WORLD)


class MLP(nn.Module):
    def __init__(self, gate: torch.Tensor, up: torch.Tensor, down: torch.Tensor) -> None:
        super().__init__()
        self.gate, self.up = _shard(gate, 0), _shard(up, 0)
        self.down = _shard(down, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.linear(F.silu(F.linear(x, self.gate)) * F.linear(x, self.up), self.down)
        dist.all_reduce(out)
        return out


class DecoderLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)  # every rank makes the same full weights and keeps its slice
        full = {name: torch.randn(*shape) * 0.05 for name, shape in _SHAPES.items()}
        self.embed = VocabParallelEmbedding(full["embed"])
        self.attn_norm, self.mlp_norm = RMSNorm(DIM), RMSNorm(DIM)
        self.attn = Attention(full["q"], full["k"], full["v"], full["o"])
        self.mlp = MLP(full["gate"], full["up"], full["down"])

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.embed(ids)
        h = h + self.attn(self.attn_norm(h))
        return h + self.mlp(self.mlp_norm(h))


_SHAPES = {"embed": (VOCAB, DIM), "q": (DIM, DIM), "k": (DIM, DIM), "v": (DIM, DIM), "o": (DIM, DIM), "gate": (FFN, DIM), "up": (FFN, DIM), "down": (DIM, FFN)}


def get_model_and_inputs():
    model = DecoderLayer().eval()
    ids = torch.randint(0, VOCAB, (2, SEQ), generator=torch.Generator().manual_seed(1))
    return model, (ids,)
