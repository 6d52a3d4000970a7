"""The kernel registry: one kernel per GE op type, found by the executor."""

from __future__ import annotations

import pytest
import torch

from fxlab.ir.execute import execute
from fxlab.ir.kernels.registry import KERNELS, register_kernel
from fxlab.ir.model import Attr, AttrKind, DataType, IrGraph, IrOp, TensorDesc


def test_a_registered_kernel_runs_and_a_second_for_the_type_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(KERNELS, "FxlabTestDouble", raising=False)
    register_kernel("FxlabTestDouble")(lambda op, inputs, attrs: [inputs[0] * 2])
    try:
        with pytest.raises(ValueError, match="two reference kernels registered for GE op type FxlabTestDouble"):
            register_kernel("FxlabTestDouble")(lambda op, inputs, attrs: [inputs[0]])
        desc = TensorDesc("y", DataType.DT_FLOAT, (2,))
        graph = IrGraph(
            "g",
            [
                IrOp("x", "Data", [], {"index": Attr(AttrKind.INT, 0)}, (), (desc,)),
                IrOp("double", "FxlabTestDouble", ["x:0"], {}, (desc,), (desc,)),
                IrOp("NetOutput", "NetOutput", ["double:0"]),
            ],
            inputs=["x"],
            outputs=["double:0"],
        )
        assert execute(graph, [torch.tensor([1.0, 2.0])])[0].tolist() == [2.0, 4.0]
    finally:
        KERNELS.pop("FxlabTestDouble", None)
