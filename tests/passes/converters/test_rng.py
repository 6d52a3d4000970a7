"""RNG converters: TorchAir's op sequences and the graph-wide seed/offset inputs."""
from __future__ import annotations

import torch

from fxlab.compat.native_standins.torch_npu_runtime import DEVICE_DEFAULT_SEED as STANDIN_SEED
from tests.functional_graphs import functional_graph
from fxlab.ir.execute import execute
from fxlab.ir.kernels.rng import RNG_OFFSETS_ATTR as READ_BY_THE_EXECUTOR, unpack_mask
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.converters.rng import DEVICE_DEFAULT_SEED, RNG_OFFSETS_ATTR
from tests.passes.converters.lowering import types

PHILOX = ["Cast", "Unsqueeze", "Const", "Const", "ConcatV2", "Cast", "Const", "Cast"]
STATE = ["Const", "Unpack"]  # and the offsets Data between them (types() leaves Data out)


def _convert(fn, *inputs):
    return convert_to_ascend_ir(functional_graph(fn, *inputs), "g").graph


def test_rand_is_a_stateless_uniform_draw_keyed_by_the_graphs_seed_and_offset():
    graph = _convert(lambda x: x + torch.rand(2, 3), torch.zeros(2, 3))
    assert types(graph) == STATE + PHILOX + ["Const", "StatelessRandomUniformV2", "Add"]
    seed = graph.op_by_name()["initial_seed"]
    assert seed.attrs["value"].value.to_torch().item() == DEVICE_DEFAULT_SEED == STANDIN_SEED
    draw = graph.ops_of_type("StatelessRandomUniformV2")[0]
    assert draw.inputs[1:] == ["Unsqueeze:0", "Cast_1:0", "Cast_2:0"]
    assert graph.op_by_name()["Unsqueeze"].inputs == ["Cast:0"] and graph.op_by_name()["Cast"].inputs == ["initial_seed:0"]
    assert graph.op_by_name()["ConcatV2"].inputs[1] == "unpack_generator_offsets:0"


def test_one_offsets_input_for_the_whole_graph_each_draw_its_own_share():
    graph = _convert(lambda x: torch.randn(4) + torch.rand(4) + torch.bernoulli(x), torch.full((4,), 0.5))
    data = [op for op in graph.ops if op.type == "Data"]
    assert [op.name for op in data] == ["arg0_1", "offset_list"]
    offsets = data[1]
    assert offsets.attr_value("index") == 1 and graph.inputs == ["arg0_1", "offset_list"]
    assert RNG_OFFSETS_ATTR == READ_BY_THE_EXECUTOR
    assert offsets.output_desc[0].shape == (3,) and offsets.attr_value(RNG_OFFSETS_ATTR) == (0, 12, 24)
    unpack = graph.op_by_name()["unpack_generator_offsets"]
    assert unpack.attr_value("num") == 3 and [d.name for d in unpack.output_desc] == ["y0", "y1", "y2"]
    assert len(graph.ops_of_type("Unpack")) == 1 and graph.ops_of_type("StatelessBernoulli")[0].inputs[2:] == ["initial_seed:0", "unpack_generator_offsets:2"]


def test_reference_draws_repeat_and_differ_per_offset():
    graph = _convert(lambda x: (torch.rand(1000) + x, torch.rand(1000) + x), torch.zeros(1))
    first, second = execute(graph, [torch.zeros(1)])
    again = execute(graph, [torch.zeros(1)])[0]
    assert torch.equal(first, again) and not torch.equal(first, second)
    assert 0.45 < float(first.mean()) < 0.55 and float(first.min()) >= 0 and float(first.max()) < 1


def test_uniform_maps_to_its_range_as_torchair_writes_it():
    graph = _convert(lambda x: torch.empty_like(x).uniform_(2.0, 5.0), torch.zeros(256))
    assert types(graph)[-7:] == ["StatelessRandomUniformV2", "Const", "Const", "Mul", "Sub", "Mul", "Sub"]
    (out,) = execute(graph, [torch.zeros(256)])
    assert float(out.min()) >= 2.0 and float(out.max()) <= 5.0 and float(out.max()) > 4.0


def test_dropout_mask_is_bit_packed_as_ge_makes_it_and_applied():
    x = torch.randn(300)
    graph = _convert(lambda t: torch.ops.aten.native_dropout(t, 0.25, True), x)
    assert types(graph)[-3:] == ["ConcatV2", "StatelessDropOutGenMask", "DropOutDoMask"]
    out, mask = execute(graph, [x])
    assert mask.dtype == torch.uint8 and mask.shape == (48,)  # 300 elements -> 3 blocks of 128 bits
    kept = unpack_mask(mask, 300)
    torch.testing.assert_close(out, torch.where(kept, x / 0.75, 0.0))
    assert 0.6 < float(kept.float().mean()) < 0.9


def test_unpack_mask_reads_bits_little_endian():
    assert unpack_mask(torch.tensor([0b00000101, 0b10000000], dtype=torch.uint8), 16).tolist() == [True, False, True] + [False] * 12 + [True]


def test_randint_scales_a_float_draw_and_casts_as_torchair():
    graph = _convert(lambda x: torch.randint(7, (5,)) + x, torch.zeros(5, dtype=torch.int64))
    # No dtype argument: the schema default 4, DT_UINT8 in TorchAir's numbering, one Cast.
    assert types(graph)[-6:] == ["Const", "StatelessRandomUniformV2", "Const", "Mul", "Cast", "Add"]
    mul = graph.ops_of_type("Mul")[0]
    assert [d.dtype.name for d in mul.input_desc] == ["DT_FLOAT", "DT_INT64"]
