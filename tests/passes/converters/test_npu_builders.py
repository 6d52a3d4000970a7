"""What TorchAir's op builders do, as fxlab's npu converters reproduce it."""
from __future__ import annotations

import pytest

from fxlab.ir import ge
from fxlab.ir.builder import GraphBuilder, building
from fxlab.ir.model import DataType
from fxlab.passes.converters.npu_builders import compact_op, npu_dtype, packed, refuse
from fxlab.passes.torchair_refusals import RefusedLikeTorchAir


def _data(builder: GraphBuilder, dtype: DataType = DataType.DT_FLOAT16) -> ge.Tensor:
    return builder.add_op("Data", (), {"index": 0}, dtypes=dtype, shapes=[(2, 16)], name="x")[0]


def test_compact_op_leaves_out_absent_inputs_and_default_attrs():
    builder = GraphBuilder("g")
    with building(builder):
        x = _data(builder)
        y = compact_op("Op", {"x": x, "a": None, "b": x, "c": [x, x]}, {"k": 1, "j": 2, "l": [0], "f": 1}, {"k": 1, "l": [0], "f": 1.0})[0]
    assert [d.name for d in y.op.input_desc] == ["x", "b", "c0", "c1"] and dict(y.op.attrs).keys() == {"j"}


def test_compact_op_compares_attrs_as_torchair_does_by_value_and_kind():
    builder = GraphBuilder("g")
    with building(builder):
        x = _data(builder)
        y = compact_op("Op", {"x": x}, {"flag": True, "n": 0, "l": (1, 2), "s": 5}, {"flag": 1, "n": 0, "l": [1, 2], "s": [5]})[0]
    assert dict(y.op.attrs).keys() == {"flag", "s"}  # a Bool is no Int 1; a list default is no scalar


def test_int4_results_are_repacked_eight_to_an_int32():
    builder = GraphBuilder("g")
    with building(builder):
        packed(_data(builder), 2, 8, DataType.DT_INT32)
    assert [op.type for op in builder.graph.ops[1:]] == ["Const", "Shape", "Div", "Const", "Const", "ConcatV2", "Reshape", "Bitcast", "Reshape"]
    bitcast = builder.graph.ops[-2]
    assert dict(bitcast.attrs)["type"].value == DataType.DT_INT32


def test_dtype_codes_and_refusals():
    assert npu_dtype(15) is DataType.DT_BF16 and npu_dtype(296) is DataType.DT_FLOAT4_E2M1
    with pytest.raises(RuntimeError, match="Unsupported torch dtype value 999"):
        npu_dtype(999)
    with pytest.raises(RefusedLikeTorchAir) as refused:
        refuse("ValueError: no", "custom/x.py:3")
    assert refused.value.message("npu.x.default") == "TorchAir refuses npu.x.default with these arguments: its converter raises ValueError: no (ge_converter/custom/x.py:3)"
