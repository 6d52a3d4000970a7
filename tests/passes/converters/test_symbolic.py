"""Size arithmetic on SymInts converts as TorchAir's builtin converters do, and the IR
computes the sizes of the run it is given."""
from __future__ import annotations

import operator

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from tests.ir.executing import execute_converted
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir


def sizes_model(x: torch.Tensor) -> torch.Tensor:
    n = x.shape[0]
    return x.reshape((n * 2 - 2) // 2 + 1, -1)


def test_symbolic_size_arithmetic_becomes_int64_ops_and_runs_with_real_sizes():
    gm = make_fx(sizes_model, tracing_mode="symbolic")(torch.randn(6, 4))
    arithmetic = [n.target for n in gm.graph.nodes if n.target in (operator.add, operator.sub, operator.mul, operator.floordiv)]
    assert arithmetic == [operator.mul, operator.sub, operator.floordiv, operator.add]
    graph = convert_to_ascend_ir(gm, name="g").graph
    assert [t for t in graph.types if t in ("Gather", "Mul", "Sub", "FloorDiv", "Add")] == ["Gather", "Mul", "Sub", "FloorDiv", "Add"]
    for rows in (6, 10):  # one IR, any size
        x = torch.randn(rows, 4)
        (out,) = execute_converted(graph, [x])
        torch.testing.assert_close(out, sizes_model(x))


def test_plain_numbers_are_computed_without_an_op():
    from fxlab.passes.converters.registry import CONVERTERS

    assert CONVERTERS.get(operator.floordiv).fn(7, 2, meta_outputs=3) == 3
