"""The seed ops: reference values, fake shapes, conversion to their GE ops, execution."""
from __future__ import annotations

import inspect

import torch

import fxlab.ops as ops
from fxlab.ops import seeds
from tests.functional_graphs import functional_graph
from fxlab.ir.execute import execute
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir


def test_seed_ops_compute_their_documented_meaning() -> None:
    x, y, z1, z2 = (torch.full((2, 3), v) for v in (1.0, 2.0, 3.0, 4.0))
    assert torch.equal(torch.ops.npu.npu_add_custom(x, y), torch.full((2, 3), 3.0))
    assert torch.equal(torch.ops.npu.my_op(x, y, [z1, z2], 2.0, 5), torch.full((2, 3), 2.0 + 2.0 + 5 * 7.0))
    assert torch.equal(torch.ops.npu.my_op(x, None, [], 0.5, 3), torch.full((2, 3), 0.5))
    acc = x.clone()
    out = torch.ops.npu.my_inplace(acc, y)
    assert torch.equal(acc, torch.full((2, 3), 3.0))
    assert torch.equal(out, torch.full((2, 3), 4.0))
    assert out.data_ptr() != acc.data_ptr()


def test_seed_ops_have_meta_kernels_matching_cpu() -> None:
    for record in ops.SEED_OPS.values():
        for sample in record.sample_list():
            meta_args = [a.to("meta") if isinstance(a, torch.Tensor) else a for a in sample.args]
            meta_args = [[t.to("meta") for t in a] if isinstance(a, list) else a for a in meta_args]
            meta = record.overload(*meta_args)
            real = record.overload(*sample.args)
            assert (meta.shape, meta.dtype) == (real.shape, real.dtype), record.qualname


def test_seed_records_say_where_each_piece_is() -> None:
    record = ops.SEED_OPS["my_inplace"]
    assert record.overload is torch.ops.npu.my_inplace.default
    assert record.kernels["CPU"] == f"{seeds.__file__}:{inspect.getsourcelines(seeds.my_inplace_cpu)[1]}"
    assert record.fake == f"{seeds.__file__}:{inspect.getsourcelines(seeds.my_inplace_meta)[1]}"
    assert record.prototype.op_type == "MyInplace"
    assert record.prototype.output_names == ["x", "z"]
    assert ops.registered_prototype("MyOp").input_names == ["x", "y", "z"]
    assert not record.reused


def test_seed_ops_convert_to_their_ge_ops_and_run() -> None:
    def model(x, y, a, b):
        s = torch.ops.npu.npu_add_custom(x, y)
        return torch.ops.npu.my_op(s, None, [a, b], 2.0, 3)

    inputs = [torch.randn(4, 8) for _ in range(4)]
    gm = functional_graph(model, *inputs)
    result = convert_to_ascend_ir(gm, "seeds")
    assert result.graph.types == ["Data", "Data", "Data", "Data", "AddCustom", "MyOp", "NetOutput"]
    my_op = result.graph.ops_of_type("MyOp")[0]
    assert my_op.inputs == ["AddCustom:0", "", "arg2_1:0", "arg3_1:0"]
    assert [d.name for d in my_op.input_desc] == ["x", "y", "z0", "z1"]
    assert my_op.attr_value("attr1") == 2.0 and my_op.attr_value("attr2") == 3
    assert [d.name for d in my_op.output_desc] == ["out"]
    (got,) = execute(result.graph, inputs)
    torch.testing.assert_close(got, model(*inputs))


def test_my_inplace_converter_emits_ref_output_then_z() -> None:
    from fxlab.ir import ge
    from fxlab.ir.builder import GraphBuilder, building
    from fxlab.passes.converters.registry import CONVERTERS

    builder = GraphBuilder("g")
    with building(builder):
        x = ge.op1("Data", (), {"index": 0})
        y = ge.op1("Data", (), {"index": 1})
        z = CONVERTERS.get(torch.ops.npu.my_inplace.default).fn(x, y, meta_outputs=None)
    op = builder.graph.ops_of_type("MyInplace")[0]
    assert [d.name for d in op.output_desc] == ["x", "z"]
    assert z.index == 1 and z.op is op
