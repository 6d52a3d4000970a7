"""Shared helpers of the converter tests: lower a function to Ascend IR, check it against
eager on CPU, and look at the ops it produced."""
from __future__ import annotations

from typing import Any, Callable

import torch

from tests.functional_graphs import functional_graph
from tests.ir.executing import execute_converted
from fxlab.ir.model import IrGraph, IrOp
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir


def lower(fn: Callable[..., Any], *inputs: torch.Tensor) -> IrGraph:
    """Convert ``fn``'s functional graph and check it numerically against eager."""
    graph = convert_to_ascend_ir(functional_graph(fn, *inputs), "g").graph
    expected = fn(*inputs)
    expected = list(expected) if isinstance(expected, tuple) else [expected]
    actual = execute_converted(graph, [x.clone() for x in inputs])
    for got, want in zip(actual, expected, strict=True):
        torch.testing.assert_close(got, want)
    return graph


def body(graph: IrGraph) -> list[IrOp]:
    return [op for op in graph.ops if op.type not in ("Data", "NetOutput")]


def types(graph: IrGraph) -> list[str]:
    return [op.type for op in body(graph)]


def cast_targets(graph: IrGraph) -> list[int]:
    return [op.attr_value("dst_type") for op in graph.ops_of_type("Cast")]
