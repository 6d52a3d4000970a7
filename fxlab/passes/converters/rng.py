"""Converters of ops that draw random numbers, as TorchAir's: ``rand``/``randn``/``uniform``
(``StatelessRandomUniformV2``/``StatelessRandomNormalV2``), ``randint`` (uniform scaled and
cast), ``randperm`` (``StatelessRandperm``), ``bernoulli`` (``StatelessBernoulli``),
``native_dropout`` (``StatelessDropOutGenMask`` + ``DropOutDoMask``) and ``multinomial``
(``MultinomialWithReplacement``).

The random state is graph-wide, as in TorchAir (``get_ge_rng_state``): the first op that
draws creates a ``Const`` ``initial_seed`` (the device generator's initial seed), a ``Data``
``offset_list`` (an int64 graph input, one offset per drawing op, fed by the runtime from
the generator's offset) and an ``Unpack`` ``unpack_generator_offsets`` that splits it; each
drawing op takes the next ``Unpack`` output as its offset and reserves 12 counters
(TorchAir asks for 10 Philox numbers, rounded up to a multiple of 4). The ``Data`` carries
the offsets it stands for in ``_fxlab_rng_offsets`` so the CPU reference executor can
feed it; its draws are the CPU's, not the device's (see :mod:`fxlab.ir.kernels.rng`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.builder import current_builder
from fxlab.ir.model import DataType, IrOp, TensorDesc, attr_of, ge_dtype
from fxlab.passes.converters.promotion import cast_scalar, dtype_promote, scalar_input
from fxlab.passes.symbolic_lists import pack_sizes
from fxlab.passes.converters.registry import Sample, register_converter

aten = torch.ops.aten
# The seed an NPU device generator starts with until ``torch.manual_seed`` (as a CUDA
# one): what an NPU machine puts in the graph for a model that never seeds.
DEVICE_DEFAULT_SEED = 67280421310721
# TorchAir's drawing converters each ask for 10 Philox numbers: 12 counters, 4 at a time.
PHILOX_NUMBERS = 10
# The Data's shares of the offsets, read by the reference executor (fxlab.ir.kernels.rng,
# not imported here: converters load without the kernels).
RNG_OFFSETS_ATTR = "_fxlab_rng_offsets"
_STATE_KEY = "rng_state"
# torch's default dtype argument of randint/randperm (ScalarType 4, int64), which
# TorchAir's randint compares with its own DataType numbering (4 is DT_UINT8 there).
SCALAR_TYPE_LONG = 4
TORCHAIR_DT_UINT8 = 4


@dataclass
class GraphRngState:
    """TorchAir's ``_GraphRngState`` of the default generator for one graph."""

    seed: ge.Tensor
    offsets: IrOp  # the Data op
    unpack: IrOp
    offset_list: list[int] = field(default_factory=list)
    reserved: int = 0

    def next(self, philox_num: int = PHILOX_NUMBERS) -> tuple[ge.Tensor, ge.Tensor]:
        """The seed and a fresh offset for one drawing op."""
        index = len(self.offset_list)
        self.offset_list.append(self.reserved)
        self.reserved += (philox_num + 3) // 4 * 4
        count = len(self.offset_list)
        self.offsets.output_desc = (TensorDesc("y", DataType.DT_INT64, (count,)),)
        self.offsets.set_attrs({RNG_OFFSETS_ATTR: attr_of(list(self.offset_list))})
        self.unpack.set_attrs({"num": attr_of(count)})
        # Each later output is written as the first one is (TorchAir writes no dtype on any).
        dtype = self.unpack.output_desc[0].dtype if self.unpack.output_desc else DataType.DT_INT64
        self.unpack.output_desc = (*self.unpack.output_desc, TensorDesc(f"y{index}", dtype, ()))
        return self.seed, ge.Tensor(self.unpack, index)


def rng_state(generator: Any = None) -> tuple[ge.Tensor, ge.Tensor]:
    """``get_ge_rng_state``: the graph's seed ``Const`` and the next offset."""
    if generator is not None:
        raise NotImplementedError(
            "ops drawing from an explicit torch.Generator are not converted (TorchAir keeps one state per generator object; fxlab only the default one)"
        )
    builder = current_builder()
    state = builder.graph_state.get(_STATE_KEY)
    if state is None:
        state = builder.graph_state[_STATE_KEY] = _new_state()
    return state.next()


def _new_state() -> GraphRngState:
    builder = current_builder()
    seed = ge.op1(
        "Const",
        (),
        {"value": torch.tensor(DEVICE_DEFAULT_SEED, dtype=torch.int64), "_readable_value": repr(DEVICE_DEFAULT_SEED)},
        dtypes=DataType.DT_INT64,
        shapes=[()],
        name="initial_seed",
    )
    offsets = ge.op1("Data", (), {"index": len(builder.graph.inputs)}, dtypes=DataType.DT_INT64, shapes=[(0,)], name="offset_list")
    builder.graph.inputs.append(offsets.op.name)
    ge.op("Unpack", {"x": offsets}, {"num": 0}, outputs=(), name="unpack_generator_offsets")  # outputs added per draw
    return GraphRngState(seed, offsets.op, builder.graph.ops[-1])


def _philox_inputs(generator: Any = None) -> tuple[ge.Tensor, ge.Tensor, ge.Tensor]:
    """Key, counter and algorithm of TorchAir's stateless Philox draws."""
    seed, offset = rng_state(generator)
    key = ge.op1("Unsqueeze", {"x": ge.cast(seed, DataType.DT_UINT64)}, {"axes": [0]}, shapes=[(1,)])
    offset0 = ge.const(0, DataType.DT_INT64)
    offsets = ge.op1(
        "ConcatV2", {"x0": offset0, "x1": offset, "concat_dim": scalar_input(0)}, {"N": 2}, dtypes=DataType.DT_INT64, shapes=[(2,)]
    )
    counter = ge.cast(offsets, DataType.DT_UINT64)
    alg = cast_scalar(1, DataType.DT_INT32)
    return key, counter, alg


def _shape_of(x: ge.Tensor) -> ge.Tensor:
    return ge.op1("Shape", {"x": x}, {"dtype": 3}, dtypes=DataType.DT_INT32, shapes=[(x.rank,)])


def _draw(op_type: str, size: Any, dtype: DataType, generator: Any = None) -> ge.Tensor:
    if not isinstance(size, ge.Tensor) and any(isinstance(d, ge.Tensor) for d in size):
        # Symbolic sizes: TorchAir packs the list when it reads the node's arguments,
        # before the converter draws its Philox inputs.
        size = pack_sizes(size)
    key, counter, alg = _philox_inputs(generator)
    # A size list becomes its Const when the op is called, after the Philox inputs.
    shape = size if isinstance(size, ge.Tensor) else ge.const(list(size), DataType.DT_INT64)
    inputs = {"shape": shape, "key": key, "counter": counter, "alg": alg}
    out_shape = tuple(size) if not isinstance(size, ge.Tensor) else ()
    return ge.op1(op_type, inputs, {"dtype": dtype}, dtypes=dtype, shapes=[out_shape])


def _output_dtype(dtype: Any, meta_outputs: Any) -> DataType:
    if dtype is not None:
        return ge_dtype(dtype)
    meta = meta_outputs[-1] if isinstance(meta_outputs, (list, tuple)) else meta_outputs
    return ge_dtype(meta.dtype)


def _creation_samples() -> list[Sample]:
    return [Sample(([3, 4, 5],)), Sample(([3, 4],), {"dtype": torch.float16})]


@register_converter(aten.rand.default, samples=_creation_samples)
def convert_rand(
    size: Any, *, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None, meta_outputs: Any = None
) -> ge.Tensor:
    """rand(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _draw("StatelessRandomUniformV2", size, _output_dtype(dtype, meta_outputs))


@register_converter(aten.randn.default, samples=_creation_samples)
def convert_randn(
    size: Any, *, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None, meta_outputs: Any = None
) -> ge.Tensor:
    """randn(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _draw("StatelessRandomNormalV2", size, _output_dtype(dtype, meta_outputs))


@register_converter(
    aten.randn.generator,
    samples=lambda: [Sample(([3, 4, 5],), {"generator": None}), Sample(([3, 4],), {"generator": None, "dtype": torch.float16})],
)
def convert_randn_generator(
    size: Any,
    *,
    generator: Any,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """randn.generator(SymInt[] size, *, Generator? generator, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _draw("StatelessRandomNormalV2", size, _output_dtype(dtype, meta_outputs), generator)


@register_converter(
    aten.randint.default,
    samples=lambda: [
        Sample((5, [30, 40, 50])),
        Sample((4, [30, 40])),
        Sample((3, [30]), {"dtype": torch.int32}),
        Sample((1, [8]), {"dtype": torch.bool}),
    ],
)
def convert_randint(
    high: Any,
    size: Any,
    *,
    dtype: Any = SCALAR_TYPE_LONG,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """randint(SymInt high, SymInt[] size, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    if isinstance(size, ge.Tensor):
        raise NotImplementedError("randint is not converted when its size is a tensor (TorchAir refuses it)")
    if not isinstance(high, ge.Tensor) and high <= 0:
        raise ValueError(f"randint needs high > 0 (it draws from [0, high)), got {high}")
    drawn = _draw("StatelessRandomUniformV2", size, DataType.DT_FLOAT)
    scaled = ge.op1("Mul", {"x1": drawn, "x2": scalar_input(high, drawn)})
    # TorchAir compares the dtype argument with its own numbering before mapping it: the
    # schema default (4, int64 in torch's numbering) is DT_UINT8 there, and takes one Cast.
    if dtype == TORCHAIR_DT_UINT8 and not isinstance(dtype, torch.dtype):
        return ge.cast(scaled, DataType.DT_INT64)
    target = ge_dtype(dtype) if isinstance(dtype, torch.dtype) else DataType.DT_INT64
    if target == DataType.DT_BOOL:
        return ge.op1(
            "Fill",
            {"dims": _shape_of(drawn), "value": cast_scalar(0 if high == 0 else 1, DataType.DT_BOOL)},
            dtypes=DataType.DT_BOOL,
            shapes=[drawn.shape],
        )
    return ge.cast(ge.cast(scaled, DataType.DT_INT64), target)


@register_converter(aten.randperm.default, samples=lambda: [Sample((8,)), Sample((5,), {"dtype": torch.int32})])
def convert_randperm(
    n: Any, *, dtype: Any = SCALAR_TYPE_LONG, layout: Any = None, device: Any = None, pin_memory: Any = None, meta_outputs: Any = None
) -> ge.Tensor:
    """randperm(SymInt n, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    if not isinstance(n, ge.Tensor) and n <= 0:
        raise ValueError(f"randperm needs n > 0, got {n}")
    seed, offset = rng_state()
    out_dtype = _output_dtype(None, meta_outputs)
    inputs = {"n": scalar_input(n), "seed": seed, "offset": offset}
    return ge.op1("StatelessRandperm", inputs, {"layout": 1, "dtype": out_dtype}, dtypes=out_dtype)


def _uniform_samples() -> list[Sample]:
    return [
        Sample((torch.randn(2, 2),)),
        Sample((torch.randn(1, 2).half(), 1.0, 2.0)),
        Sample((torch.randn(20),)),
        Sample((torch.randn(20), 0.5, 1.0)),
        Sample((torch.randn(3, 2).half(), 0, 2.0)),
    ]


@register_converter(aten.uniform.default, samples=_uniform_samples)
def convert_uniform(self: ge.Tensor, from_: float = 0.0, to: float = 1.0, *, generator: Any = None, meta_outputs: Any = None) -> ge.Tensor:
    """uniform(Tensor self, float from=0., float to=1., *, Generator? generator=None) -> Tensor"""
    size = _shape_of(self)
    result = _draw("StatelessRandomUniformV2", size, self.dtype, generator)
    if math.isclose(from_, 0.0, rel_tol=1e-9) and math.isclose(to, 1.0, rel_tol=1e-9):
        return result
    # U(0, 1) -> U(from, to) as TorchAir writes it: u * to - (u * from - from)
    low, high = dtype_promote(self.dtype, from_, to)
    shifted = ge.op1("Sub", {"x1": ge.op1("Mul", {"x1": result, "x2": low}), "x2": low})
    return ge.op1("Sub", {"x1": ge.op1("Mul", {"x1": result, "x2": high}), "x2": shifted})


def _bernoulli(self: ge.Tensor, p: Any, generator: Any) -> ge.Tensor:
    shape = _shape_of(self)
    seed, offset = rng_state(generator)
    inputs = {"shape": shape, "prob": scalar_input(p), "seed": seed, "offset": offset}
    return ge.op1("StatelessBernoulli", inputs, {"dtype": self.dtype}, dtypes=self.dtype, shapes=[self.shape])


@register_converter(aten.bernoulli.default, samples=lambda: [Sample((torch.rand(4, 16),)), Sample((torch.rand(4, 16).half(),))])
def convert_bernoulli(self: ge.Tensor, *, generator: Any = None, meta_outputs: Any = None) -> ge.Tensor:
    """bernoulli(Tensor self, *, Generator? generator=None) -> Tensor"""
    return _bernoulli(self, self, generator)


@register_converter(
    aten.bernoulli.p,
    samples=lambda: [Sample((torch.randn(4, 16), p)) for p in (0.0, 1.0, 0.5)] + [Sample((torch.randn(4, 16).half(), 0.8))],
)
def convert_bernoulli_p(self: ge.Tensor, p: float, *, generator: Any = None, meta_outputs: Any = None) -> ge.Tensor:
    """bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor"""
    return _bernoulli(self, p, generator)


@register_converter(
    aten.bernoulli.Tensor,
    samples=lambda: [Sample((torch.randn(4, 16), torch.rand(4, 16))), Sample((torch.randn(4, 16).half(), torch.rand(4, 16).half()))],
)
def convert_bernoulli_tensor(self: ge.Tensor, p: ge.Tensor, *, generator: Any = None, meta_outputs: Any = None) -> ge.Tensor:
    """bernoulli.Tensor(Tensor self, Tensor p, *, Generator? generator=None) -> Tensor"""
    return _bernoulli(self, p, generator)


@register_converter(
    aten.native_dropout.default,
    samples=lambda: [
        Sample((torch.randn(4, 16), 0.5, True)),
        Sample((torch.randn(3, 50).half(), 0.2, True)),
        Sample((torch.randn(4, 8), 0.5, False)),
    ],
)
def convert_native_dropout(input: ge.Tensor, p: float, train: bool | None, meta_outputs: Any = None) -> list[ge.Tensor]:
    """native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)"""
    if train is not None and not train:
        mask = ge.op1(
            "Fill", {"dims": _shape_of(input), "value": cast_scalar(1.0, DataType.DT_BOOL)}, dtypes=DataType.DT_BOOL, shapes=[input.shape]
        )
        return [input, mask]
    keep = dtype_promote(input.dtype, 1.0 - p)
    shape = _shape_of(input)
    seed, offset = rng_state()
    # The mask op's 128-bit seed is (seed1, seed): seed1 = 0 keeps the user's seed as is.
    seed1 = ge.const(0, DataType.DT_INT64)
    offset0 = ge.const(0, DataType.DT_INT64)
    offsets = ge.op1(
        "ConcatV2", {"x0": offset0, "x1": offset, "concat_dim": scalar_input(0)}, {"N": 2}, dtypes=DataType.DT_INT64, shapes=[(2,)]
    )
    inputs = {"shape": shape, "prob": keep, "seed": seed, "seed1": seed1, "offset": offsets}
    mask = ge.op1("StatelessDropOutGenMask", inputs, dtypes=DataType.DT_UINT8, shapes=[(_mask_bytes(input.shape),)])
    return [ge.op1("DropOutDoMask", {"x": input, "mask": mask, "keep_prob": keep}), mask]


def _mask_bytes(shape: tuple[int, ...]) -> int:
    """GE's dropout mask: one bit per element, in blocks of 128 elements."""
    count = math.prod(shape)
    return (count + 127) // 128 * 16


@register_converter(aten.multinomial.default, samples=lambda: [Sample((torch.rand(8), 4, True)), Sample((torch.rand(3, 6), 2, True))])
def convert_multinomial(
    self: ge.Tensor, num_samples: int, replacement: bool = False, *, generator: Any = None, meta_outputs: Any = None
) -> ge.Tensor:
    """multinomial(Tensor self, int num_samples, bool replacement=False, *, Generator? generator=None) -> Tensor"""
    if self.rank not in (1, 2):
        raise ValueError(f"multinomial takes a 1-D or 2-D tensor of weights, got {self.rank}-D")
    if isinstance(num_samples, ge.Tensor):
        raise NotImplementedError(
            "multinomial with a symbolic num_samples is not converted (TorchAir writes it into an attr, which cannot hold one)"
        )
    seed, offset = rng_state(generator)
    # TorchAir passes neither ``replacement`` nor a dtype: the op's defaults (false, int64).
    return ge.op1(
        "MultinomialWithReplacement",
        {"x": self, "seed": seed, "offset": offset},
        {"numsamples": num_samples, "replacement": False},
        dtypes=DataType.DT_INT64,
    )
