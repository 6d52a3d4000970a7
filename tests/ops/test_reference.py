"""fxlab.ops.reference_kernel: a user's CPU reference for a GE op type their converter emits."""
from __future__ import annotations

import pytest
import torch

from fxlab.errors import UsageError
from fxlab.ir.execute import execute
from fxlab.ir.kernels.registry import KERNELS
from fxlab.ir.model import Attr, AttrKind, DataType, IrGraph, IrOp, TensorDesc
from fxlab.ops import reference
from fxlab.ops.reference import reference_kernel


@pytest.fixture
def fresh_type():
    """A GE op type name no kernel has; whatever the test registers for it is dropped after."""
    name = "FxlabTestScaleBy"
    yield name
    KERNELS.pop(name, None)
    reference._REGISTERED.pop(name, None)


def _graph(op_type: str) -> IrGraph:
    data = IrOp("x", "Data", attrs={"index": Attr(AttrKind.INT, 0)}, output_desc=[TensorDesc("y", DataType.DT_FLOAT, (3,))])
    attrs = {"alpha": Attr(AttrKind.FLOAT, 2.0), "dst": Attr(AttrKind.DTYPE, DataType.DT_FLOAT16), "_op_aicore_num": Attr(AttrKind.STR, "8")}
    op = IrOp("op", op_type, ["x:0", ""], attrs, [TensorDesc("x"), TensorDesc("bias")], [TensorDesc("y"), TensorDesc("twice")])
    return IrGraph("g", inputs=["x"], outputs=["op:0", "op:1"], ops=[data, op, IrOp("out", "NetOutput", ["op:0", "op:1"])])


def test_the_kernel_gets_inputs_in_order_and_its_own_attrs_by_name(fresh_type) -> None:
    seen = {}

    @reference_kernel(fresh_type)
    def scale_by(x, bias, *, alpha, dst):
        seen.update(bias=bias, alpha=alpha, dst=dst)
        return (x * alpha).to(dst), x * 2

    x = torch.arange(3.0)
    scaled, twice = execute(_graph(fresh_type), [x])
    assert seen == {"bias": None, "alpha": 2.0, "dst": torch.float16}  # an absent input is None; no "_..." attrs
    assert scaled.dtype is torch.float16 and torch.equal(scaled, (x * 2).half()) and torch.equal(twice, x * 2)


def test_registering_the_same_function_again_replaces_it(fresh_type) -> None:
    def make():
        def kernel(x, bias, **attrs):
            return x, x

        return kernel

    reference_kernel(fresh_type)(make())
    reference_kernel(fresh_type)(make())  # a plugin file imported twice: the same code, no error
    assert fresh_type in KERNELS


def test_a_second_kernel_for_a_type_and_fxlabs_own_types_are_refused(fresh_type) -> None:
    reference_kernel(fresh_type)(lambda x, bias, **attrs: (x, x))
    with pytest.raises(UsageError, match=f"two reference kernels for GE op type {fresh_type}: at .*test_reference.py:\\d+ and at"):
        reference_kernel(fresh_type)(lambda x, bias, **attrs: (x * 1, x))
    with pytest.raises(UsageError, match="fxlab already has a reference kernel for GE op type Add"):
        reference_kernel("Add")(lambda x, y: x + y)
    with pytest.raises(UsageError, match="needs the GE op types"):
        reference_kernel()
