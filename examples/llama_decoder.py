"""A small Llama-style decoder: RMSNorm, rotary embeddings, attention that writes its KV
cache in place, and a SwiGLU MLP. The layer count is a knob.

    fxlab trace examples/llama_decoder.py                      # 2 layers
    fxlab trace examples/llama_decoder.py --entry layers_8     # 8 layers
    FXLAB_LAYERS=4 fxlab trace examples/llama_decoder.py        # any count
"""
import os

import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        variance = x.pow(2).mean(-1, keepdim=True)
        return x * torch.rsqrt(variance + self.eps) * self.weight


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int, max_len: int) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.q_proj = nn.Linear(dim, dim, bias=False)
        self.k_proj = nn.Linear(dim, dim, bias=False)
        self.v_proj = nn.Linear(dim, dim, bias=False)
        self.o_proj = nn.Linear(dim, dim, bias=False)
        self.register_buffer("k_cache", torch.zeros(1, heads, max_len, self.head_dim))
        self.register_buffer("v_cache", torch.zeros(1, heads, max_len, self.head_dim))

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        batch, seq, dim = x.shape
        q = self.q_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)
        q, k = apply_rotary(q, k, cos, sin)
        self.k_cache[:, :, :seq] = k  # KV cache written in place
        self.v_cache[:, :, :seq] = v
        keys, values = self.k_cache[:, :, :seq], self.v_cache[:, :, :seq]
        scores = torch.matmul(q, keys.transpose(2, 3)) / (self.head_dim**0.5)
        scores = scores + torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)
        attn = torch.softmax(scores.float(), dim=-1).type_as(q)
        out = torch.matmul(attn, values).transpose(1, 2).reshape(batch, seq, dim)
        return self.o_proj(out)


class SwiGLU(nn.Module):
    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, dim: int, heads: int, hidden: int, max_len: int) -> None:
        super().__init__()
        self.input_norm = RMSNorm(dim)
        self.attn = Attention(dim, heads, max_len)
        self.post_norm = RMSNorm(dim)
        self.mlp = SwiGLU(dim, hidden)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.input_norm(x), cos, sin)
        return x + self.mlp(self.post_norm(x))


class Decoder(nn.Module):
    def __init__(self, layers: int, dim: int = 64, heads: int = 4, hidden: int = 128, vocab: int = 128, max_len: int = 16) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(DecoderLayer(dim, heads, hidden, max_len) for _ in range(layers))
        self.norm = RMSNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        head_dim = dim // heads
        inv_freq = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        freqs = torch.outer(torch.arange(max_len).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_table", emb.cos())
        self.register_buffer("sin_table", emb.sin())

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        seq = tokens.shape[1]
        cos, sin = self.cos_table[:seq], self.sin_table[:seq]
        h = self.embed(tokens)
        for layer in self.layers:
            h = layer(h, cos, sin)
        return self.lm_head(self.norm(h))


def build(layers: int) -> tuple[nn.Module, tuple[torch.Tensor]]:
    torch.manual_seed(0)
    model = Decoder(layers).eval()
    tokens = torch.randint(0, 128, (1, 8))
    return model, (tokens,)


def get_model_and_inputs() -> tuple[nn.Module, tuple[torch.Tensor]]:
    return build(int(os.environ.get("FXLAB_LAYERS", "2")))


def layers_8() -> tuple[nn.Module, tuple[torch.Tensor]]:
    return build(8)


def layers_32() -> tuple[nn.Module, tuple[torch.Tensor]]:
    return build(32)
