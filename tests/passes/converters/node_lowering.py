"""Convert one ATen call (a one-node graph, as the registry walk builds it) and look at
the GE ops, checked numerically against eager on the way."""
from __future__ import annotations

from typing import Any

import torch

from tests.ir.executing import execute_converted
from fxlab.ir.model import IrGraph
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.converters.registry import Sample
from tests.passes.converters.test_registry_walk import one_node_graph


def lower_call(target: Any, *args: Any, **kwargs: Any) -> IrGraph:
    sample = Sample(args, kwargs)
    gm, tensors = one_node_graph(target, sample)
    graph = convert_to_ascend_ir(gm, "g").graph
    expected = target(*args, **kwargs)
    expected = [e for e in (expected if isinstance(expected, (tuple, list)) else [expected]) if e is not None]
    actual = [a for a in execute_converted(graph, [t.clone() for t in tensors]) if a is not None]
    for got, want in zip(actual, expected, strict=True):
        torch.testing.assert_close(got, want, equal_nan=True)
    return graph
