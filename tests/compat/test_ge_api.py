"""``torchair.ge`` stand-in: custom_op keyword and positional forms, attrs, outputs, errors."""
from __future__ import annotations

import pytest

import fxlab.ops  # noqa: F401 - registers the seed prototypes (MyOp, MyInplace, AddCustom)
from fxlab.compat.ge_api import ATTR_BUILDERS as attr
from fxlab.compat.ge_api import Cast, Clone, DataType, custom_op
from fxlab.ir import ge
from fxlab.ir.builder import GraphBuilder, building
from fxlab.ir.model import AttrKind
from fxlab.ir.model import DataType as GeType


def _graph():
    builder = GraphBuilder("g")
    return builder, building(builder)


def test_keyword_form_with_dynamic_inputs_outputs_and_typed_attrs() -> None:
    builder, ctx = _graph()
    with ctx:
        x = ge.op1("Data", (), {"index": 0})
        ys, z = custom_op("Split3", inputs={"x": x, "opt": None, "d": [x, x]}, outputs=[("y", 2), "z"],
                          attrs={"n": attr["Int"](2), "axes": attr["ListInt"]([0, 1]), "dt": attr["DataType"](DataType.DT_FLOAT16),
                                 "name": attr["Str"]("s")})
    op = builder.graph.ops_of_type("Split3")[0]
    assert op.inputs == ["Data:0", "", "Data:0", "Data:0"]
    assert [d.name for d in op.input_desc] == ["x", "opt", "d0", "d1"]
    assert [d.name for d in op.output_desc] == ["y0", "y1", "z"]
    assert [t.index for t in ys] == [0, 1] and z.index == 2
    assert {k: (a.kind, a.value) for k, a in op.attrs.items()} == {
        "n": (AttrKind.INT, 2), "axes": (AttrKind.LIST_INT, (0, 1)), "dt": (AttrKind.DTYPE, GeType.DT_FLOAT16), "name": (AttrKind.STR, "s")}


def test_positional_form_maps_through_the_registered_prototype() -> None:
    builder, ctx = _graph()
    with ctx:
        x = ge.op1("Data", (), {"index": 0})
        out = custom_op("MyOp", x, None, [x], 1.5, 7)
    op = builder.graph.ops_of_type("MyOp")[0]
    assert [d.name for d in op.input_desc] == ["x", "y", "z0"] and op.inputs == ["Data:0", "", "Data:0"]
    assert (op.attrs["attr1"].kind, op.attrs["attr2"].kind) == (AttrKind.FLOAT, AttrKind.INT)
    assert out.index == 0 and [d.name for d in op.output_desc] == ["out"]


def test_positional_form_errors_say_what_is_wrong() -> None:
    _, ctx = _graph()
    with ctx:
        x = ge.op1("Data", (), {"index": 0})
        with pytest.raises(RuntimeError, match="GE op NotThere is not registered"):
            custom_op("NotThere", x)
        with pytest.raises(IndexError, match="got 2 arguments; its prototype has 3 inputs and 2 attrs"):
            custom_op("MyOp", x, None)
        with pytest.raises(TypeError, match="input 'z' \\(dynamic\\) must be a list of Tensors"):
            custom_op("MyOp", x, None, x, 1.0, 2)


def test_plain_values_as_attrs_are_refused_like_torchair() -> None:
    _, ctx = _graph()
    with ctx, pytest.raises(TypeError, match="wrap it in one of ge.attr.Int"):
        x = ge.op1("Data", (), {"index": 0})
        custom_op("Foo", inputs={"x": x}, outputs=["y"], attrs={"n": 3})


def test_cast_uses_torchair_dtype_numbers_and_clone_is_tensor_move() -> None:
    builder, ctx = _graph()
    with ctx:
        x = ge.op1("Data", (), {"index": 0}, dtypes=GeType.DT_FLOAT)
        y = Cast(x, dst_type=DataType.DT_FLOAT16)
        Clone(y)
    cast = builder.graph.ops_of_type("Cast")[0]
    assert cast.attr_value("dst_type") == 1 and cast.output_desc[0].dtype is GeType.DT_FLOAT16
    assert builder.graph.types == ["Data", "Cast", "TensorMove"]
