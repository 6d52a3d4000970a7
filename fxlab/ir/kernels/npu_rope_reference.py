"""The math of torch_npu's rotary position embedding operators, on CPU.

``y = x * cos + rotate(x) * sin``, ``rotate`` by the mode torch_npu's documentation gives:
``half`` (``[-x2, x1]`` of the two halves), ``interleave`` (``(-x[1::2], x[::2])``
interleaved again), ``quarter`` (``half`` within each half), or a given ``(D, D)``
matrix (``x @ rotate``). ``npu_interleave_rope`` reads the pairs interleaved and writes
them in halves (the order of DeepSeek's rope). Products are taken in float32.

torch_npu runs ``npu_apply_rotary_pos_emb`` in place on an NPU; its schema is functional,
so here it returns new tensors (what the captured graph means).
"""

from __future__ import annotations

import torch

from fxlab.ir.kernels.npu_reference import cpu_kernel

ROTARY_MODES = ("half", "interleave", "quarter")


def rotate(x: torch.Tensor, mode: str, matrix: torch.Tensor | None = None) -> torch.Tensor:
    if matrix is not None:
        return x @ matrix.to(x.dtype)
    if mode == "half":
        first, second = x.chunk(2, dim=-1)
        return torch.cat((-second, first), dim=-1)
    if mode == "interleave":
        pairs = x.unflatten(-1, (-1, 2))
        return torch.stack((-pairs[..., 1], pairs[..., 0]), dim=-1).flatten(-2)
    if mode == "quarter":
        return torch.cat([rotate(h, "half") for h in x.chunk(2, dim=-1)], dim=-1)
    raise NotImplementedError(f"rotary_mode={mode!r} has no CPU reference kernel ({', '.join(ROTARY_MODES)} have)")


def embed(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mode: str = "half", matrix: torch.Tensor | None = None) -> torch.Tensor:
    """``x * cos + rotate(x) * sin`` in float32, returned in ``x``'s dtype."""
    x32 = x.float()
    return (x32 * cos.float() + rotate(x32, mode, matrix) * sin.float()).to(x.dtype)


@cpu_kernel("npu_apply_rotary_pos_emb")
def apply_rotary_pos_emb(
    query: torch.Tensor, key: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str = "BSND", rotary_mode: str = "half"
) -> tuple[torch.Tensor, torch.Tensor]:
    """(the query embedded, the key embedded); cos/sin broadcast in the given layout."""
    return embed(query, cos, sin, rotary_mode), embed(key, cos, sin, rotary_mode)


@cpu_kernel("npu_rotary_mul")
def rotary_mul(
    x: torch.Tensor, r1: torch.Tensor, r2: torch.Tensor, rotary_mode: str = "half", rotate: torch.Tensor | None = None
) -> torch.Tensor:
    """``npu_rotary_mul``: ``x * r1 + rotate(x) * r2``."""
    return embed(x, r1, r2, rotary_mode, rotate)


def _reduce_to(grad: torch.Tensor, shape: torch.Size) -> torch.Tensor:
    """``grad`` summed over the dims ``shape`` broadcasts."""
    dims = [i for i, (g, s) in enumerate(zip(grad.shape, shape)) if s == 1 and g != 1]
    return grad.sum(dims, keepdim=True) if dims else grad


@cpu_kernel("npu_rotary_mul_backward")
def rotary_mul_backward(
    grad: torch.Tensor, x: torch.Tensor, r1: torch.Tensor, r2: torch.Tensor, rotary_mode: str = "half"
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dx, dr1, dr2) of ``x * r1 + rotate(x) * r2``: ``rotate`` is linear, so
    ``dx = g * r1 + rotate^T(g * r2)``, and ``rotate^T = -rotate`` for every mode."""
    g, x32 = grad.float(), x.float()
    dx = g * r1.float() - rotate(g * r2.float(), rotary_mode)
    dr1 = _reduce_to(g * x32, r1.shape)
    dr2 = _reduce_to(g * rotate(x32, rotary_mode), r2.shape)
    return dx.to(x.dtype), dr1.to(r1.dtype), dr2.to(r2.dtype)


@cpu_kernel("npu_interleave_rope")
def interleave_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """``npu_interleave_rope``: the interleaved pairs of ``x`` regrouped into halves
    (``[x[::2], x[1::2]]``), then embedded in half mode."""
    halves = torch.cat((x[..., ::2], x[..., 1::2]), dim=-1)
    return embed(halves, cos, sin, "half")
