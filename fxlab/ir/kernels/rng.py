"""Kernels of the GE ops that draw random numbers: ``StatelessRandomUniformV2``,
``StatelessRandomNormalV2``, ``StatelessBernoulli``, ``StatelessRandperm``,
``MultinomialWithReplacement`` and ``StatelessDropOutGenMask``.

The device draws with its own Philox implementation; these kernels draw with torch's CPU
generator, seeded from the op's seed and offset inputs. So a reference run has the right
shapes, dtypes and distributions and is repeatable, but its numbers are not the device's
(nor eager's): :data:`RANDOM_OP_TYPES` lets a check say so instead of comparing values.
The dropout mask is packed as GE packs it (one bit per element, little-endian in each
byte, padded to blocks of 128 elements); ``DropOutDoMask`` reads it with
:func:`unpack_mask`.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.registry import register_kernel
from fxlab.ir.model import IrGraph, IrOp, torch_dtype

RANDOM_OP_TYPES = frozenset(
    {
        "StatelessRandomUniformV2",
        "StatelessRandomNormalV2",
        "StatelessBernoulli",
        "StatelessRandperm",
        "MultinomialWithReplacement",
        "StatelessDropOutGenMask",
    }
)
_MIX = 0x9E3779B97F4A7C15  # spreads the seed so nearby offsets give unrelated streams
_BIT_WEIGHTS = torch.tensor([1 << i for i in range(8)], dtype=torch.int64)


# The shares of fxlab's offsets Data, TorchAir's name for its own, and the counters each
# drawing op reserves.
RNG_OFFSETS_ATTR = "_fxlab_rng_offsets"
OFFSETS_DATA = "offset_list"
COUNTERS_PER_DRAW = 12


def rng_offsets(op: IrOp, model_inputs: int) -> torch.Tensor | None:
    """The value of the RNG offsets ``Data`` (``None`` for any other input): the runtime
    feeds the generator's offset plus each drawing op's share; here the generator's
    offset is 0. fxlab's graphs say the shares (``_fxlab_rng_offsets``); TorchAir's
    ``offset_list`` past the model's inputs gets 12 counters per draw, as it reserves."""
    shares = op.attr_value(RNG_OFFSETS_ATTR)
    if shares is not None:
        return torch.tensor(list(shares), dtype=torch.int64)
    if op.name == OFFSETS_DATA and op.attr_value("index", 0) >= model_inputs and op.output_desc:
        (count,) = op.output_desc[0].shape
        return torch.arange(count, dtype=torch.int64) * COUNTERS_PER_DRAW
    return None


def _generator(seed: Any, offset: Any) -> torch.Generator:
    value = (int(torch.as_tensor(seed).reshape(-1)[0].item()) * _MIX + int(offset)) % (1 << 63)
    return torch.Generator().manual_seed(value)


def _sizes(shape: torch.Tensor) -> list[int]:
    return [int(d) for d in shape.reshape(-1).tolist()]


def _philox_generator(key: torch.Tensor, counter: torch.Tensor) -> torch.Generator:
    # counter is (0, offset) as TorchAir builds it; the offset picks the stream.
    return _generator(key, counter.reshape(-1)[-1].item())


@register_kernel("StatelessRandomUniformV2")
def stateless_random_uniform_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    shape, key, counter, _alg = inputs
    return [torch.rand(_sizes(shape), generator=_philox_generator(key, counter), dtype=torch_dtype(attrs["dtype"]))]


@register_kernel("StatelessRandomNormalV2")
def stateless_random_normal_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    shape, key, counter, _alg = inputs
    return [torch.randn(_sizes(shape), generator=_philox_generator(key, counter), dtype=torch_dtype(attrs["dtype"]))]


@register_kernel("StatelessBernoulli")
def stateless_bernoulli(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    shape, prob, seed, offset = inputs
    probabilities = prob.to(torch.float32).expand(_sizes(shape))
    drawn = torch.bernoulli(probabilities, generator=_generator(seed, offset.item()))
    return [drawn.to(torch_dtype(attrs["dtype"]))]


@register_kernel("StatelessRandperm")
def stateless_randperm(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n, seed, offset = inputs
    return [torch.randperm(int(n.item()), generator=_generator(seed, offset.item())).to(torch_dtype(attrs["dtype"]))]


@register_kernel("MultinomialWithReplacement")
def multinomial_with_replacement(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, seed, offset = inputs
    drawn = torch.multinomial(
        x.to(torch.float32), attrs["numsamples"], attrs.get("replacement", False), generator=_generator(seed, offset.item())
    )
    return [drawn]


@register_kernel("StatelessDropOutGenMask")
def stateless_dropout_gen_mask(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    shape, prob, seed, _seed1, offset = inputs
    count = 1
    for d in _sizes(shape):
        count *= d
    padded = (count + 127) // 128 * 128
    keep = torch.zeros(padded, dtype=torch.int64)
    keep[:count] = (torch.rand(count, generator=_generator(seed, offset.reshape(-1)[-1].item())) < float(prob)).to(torch.int64)
    return [(keep.reshape(-1, 8) * _BIT_WEIGHTS).sum(1).to(torch.uint8)]


def unpack_mask(mask: torch.Tensor, count: int) -> torch.Tensor:
    """GE's bit-packed dropout mask as one bool per element (the first ``count``)."""
    bits = (mask.to(torch.int64).reshape(-1, 1) // _BIT_WEIGHTS) % 2
    return bits.reshape(-1)[:count].to(torch.bool)


def outputs_from_draws(graph: IrGraph) -> tuple[list[bool], list[str]]:
    """For each graph output (``NetOutput`` input), whether its value depends on a random
    draw; and the types of the drawing ops in the graph."""
    tainted: set[str] = set()
    drawing: set[str] = set()
    for op in graph.ops:
        if op.type in RANDOM_OP_TYPES or any(ref.rpartition(":")[0] in tainted for ref in op.data_inputs):
            tainted.add(op.name)
            if op.type in RANDOM_OP_TYPES:
                drawing.add(op.type)
    return [ref.rpartition(":")[0] in tainted for ref in graph.outputs], sorted(drawing)
