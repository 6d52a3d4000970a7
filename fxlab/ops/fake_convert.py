"""Run an op's converter on fake inputs: a one-node FX graph calling the op (its tensors
as placeholders with fake ``val`` meta, as in a functional graph), converted to Ascend IR.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils import _pytree as pytree

from fxlab.passes.conversion_result import FAILED_STATUSES
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.converters.registry import Sample

NON_GE_TYPES = ("Data", "NetOutput")


@dataclass
class SampleConversion:
    ge_types: list[str] = field(default_factory=list)
    error: str = ""
    graph: Any = None  # the IrGraph, when it converted


def one_node_graph(overload: Any, sample: Sample) -> fx.GraphModule:
    graph = fx.Graph()
    mode = FakeTensorMode()
    fakes: list[Any] = []

    def as_placeholder(x: Any) -> Any:
        if not isinstance(x, torch.Tensor):
            return x
        node = graph.placeholder(f"arg{len(fakes)}")
        node.meta["val"] = mode.from_tensor(x)
        fakes.append(node.meta["val"])
        return node

    args, kwargs = pytree.tree_map(as_placeholder, (sample.args, sample.kwargs))
    fake_args, fake_kwargs = pytree.tree_map(lambda n: n.meta["val"] if isinstance(n, fx.Node) else n, (args, kwargs))
    with mode:
        val = overload(*fake_args, **fake_kwargs)
    call = graph.call_function(overload, tuple(args), dict(kwargs))
    call.meta["val"] = val
    outputs = [call]
    if isinstance(val, (tuple, list)):
        outputs = []
        for i, item in enumerate(val):
            getter = graph.call_function(operator.getitem, (call, i))
            getter.meta["val"] = item
            outputs.append(getter)
    graph.output(tuple(outputs))
    return fx.GraphModule(torch.nn.Module(), graph)


def convert_sample(overload: Any, sample: Sample) -> SampleConversion:
    """Convert the op on ``sample``'s fake inputs; ``error`` says why it did not convert."""
    result = convert_to_ascend_ir(one_node_graph(overload, sample), "ops_check")
    failed = [n for n in result.nodes if n.status in FAILED_STATUSES]
    if failed:
        return SampleConversion(error=failed[0].message)
    return SampleConversion(ge_types=[t for t in result.graph.types if t not in NON_GE_TYPES], graph=result.graph)
