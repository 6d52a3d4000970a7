"""A function's functional graph as Dynamo captures it with dynamic shapes, for the tests
of the passes and converters that meet symbolic sizes."""
from __future__ import annotations

from typing import Any, Callable

import torch
import torch.fx as fx

from fxlab.capture.stages import functional_stage


def dynamic_functional(fn: Callable[..., Any], *inputs: Any) -> fx.GraphModule:
    """``fn``'s functional graph compiled with ``dynamic=True`` (int arguments become
    symbolic sizes too, as Dynamo makes them)."""
    return captured_functional(fn, *inputs, dynamic=True)


def captured_functional(fn: Callable[..., Any], *inputs: Any, dynamic: bool | None = None) -> fx.GraphModule:
    """``fn``'s one functional graph as Dynamo captures it (with the inputs' own marks,
    ``mark_unbacked`` included) and aot_autograd functionalizes it."""
    graphs: list[fx.GraphModule] = []

    def backend(gm: fx.GraphModule, example_inputs: Any) -> Any:
        functional, compiled = functional_stage(gm, example_inputs)
        graphs.append(functional)
        return compiled

    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(fn, backend=backend, dynamic=dynamic)(*inputs)
    (graph,) = graphs
    return graph


def graph_inputs(gm: fx.GraphModule, *inputs: Any) -> list[Any]:
    """The values of ``gm``'s placeholders for a call of the function on ``inputs``: each
    size symbol's value (a 0-d int64 tensor, as the IR check feeds it) and the tensors, in
    the graph's order. A symbol no tensor dim has is an int argument, taken in order."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    tensors = iter(x for x in inputs if isinstance(x, torch.Tensor))
    ints = iter(x for x in inputs if type(x) is int)
    real = {n: next(tensors) for n in placeholders if isinstance(n.meta.get("val"), torch.Tensor)}
    dims = {str(s): int(r) for n, t in real.items() for s, r in zip(n.meta["val"].shape, t.shape) if isinstance(s, torch.SymInt)}
    values: list[Any] = []
    for node in placeholders:
        if node in real:
            values.append(real[node])
        else:
            values.append(torch.tensor(dims[str(node.meta["val"])] if str(node.meta["val"]) in dims else next(ints), dtype=torch.int64))
    return values
