"""Custom ops inside a trace: each one's fake (Meta) function against its kernel on the
inputs the traced graph really got, and custom ops Dynamo left out of the graph.

A Meta function that returns the wrong shape or dtype still traces: every stage then
carries its wrong shapes, and the compiled run (which calls the real kernel) still
matches eager. So the functional graph is run again on the compiled run's inputs, and
each custom op's (or ``auto_functionalized`` op's) real outputs are compared with the
fake values the graph recorded for it, as ``fxlab ops check`` does for its samples.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import sympy
import torch
import torch.fx as fx
from torch._dynamo.utils import counters
from torch.utils._pytree import tree_leaves

from fxlab.capture.checks.values import clone_tree

# Namespaces of PyTorch's own ops; any other OpOverload is a user's (custom) op.
TORCH_NAMESPACES = {"aten", "prims", "_ops", "profiler", "higher_order"}
AUTO_FUNCTIONALIZED = {"auto_functionalized", "auto_functionalized_v2"}
_UNSUPPORTED_OPERATOR = re.compile(r"unsupported operator: ([A-Za-z_][\w]*)\.([A-Za-z_]\w*)(?:\.(\w+))?")


def custom_op_of(node: fx.Node) -> Any:
    """The custom OpOverload ``node`` runs (directly or through auto_functionalized), or None."""
    if node.op != "call_function":
        return None
    target: Any = node.target
    if isinstance(target, torch._ops.HigherOrderOperator) and target.name() in AUTO_FUNCTIONALIZED and node.args:
        target = node.args[0]
    if isinstance(target, torch._ops.OpOverload) and target.namespace not in TORCH_NAMESPACES:
        return target
    return None


def has_custom_ops(gm: fx.GraphModule) -> bool:
    return any(custom_op_of(n) is not None for n in gm.graph.nodes)


class _FakeVsKernel(fx.Interpreter):
    """Runs the graph for real; after each custom op, compares with its fake values."""

    def __init__(self, gm: fx.GraphModule) -> None:
        super().__init__(gm)
        self.problems: list[str] = []
        self.sizes: dict[Any, int] = {}  # size symbol -> its value in this run

    def run_node(self, n: fx.Node) -> Any:
        result = super().run_node(n)
        if n.op == "placeholder":
            _bind_symbols(self.sizes, n.meta.get("val"), result)
        op = custom_op_of(n)
        if op is not None and op._schema.returns:
            self.problems.extend(_differences(n, op, n.meta.get("val"), result, self.sizes))
        return result


def _bind_symbols(sizes: dict[Any, int], fake: Any, real: Any) -> None:
    """The values this run gives the size symbols of a graph input (dynamic shapes)."""
    pairs = zip(fake.shape, real.shape) if isinstance(fake, torch.Tensor) and isinstance(real, torch.Tensor) else [(fake, real)]
    for symbolic, value in pairs:
        if isinstance(symbolic, torch.SymInt) and symbolic.node.expr.is_Symbol:
            sizes.setdefault(symbolic.node.expr, int(value))


def _concrete(size: Any, sizes: dict[Any, int]) -> Any:
    """A fake size at this run's values, read without guarding on it (comparing a symbolic
    size with an int would fix the symbol in the graph's shape environment)."""
    if not isinstance(size, torch.SymInt):
        return size
    value = sympy.sympify(size.node.expr.xreplace(sizes))
    return int(value) if value.is_number else str(size)


def _differences(node: fx.Node, op: Any, fake: Any, real: Any, sizes: dict[Any, int] | None = None) -> list[str]:
    fakes = [x for x in tree_leaves(fake) if isinstance(x, torch.Tensor)]
    reals = [x for x in tree_leaves(real) if isinstance(x, torch.Tensor)]
    where = node.meta.get("fxlab.source") or node.name
    name = op.name()
    if len(fakes) != len(reals):
        return [f"custom op {name} (node {node.name}, {where}): its fake function gives {len(fakes)} tensor(s), the kernel {len(reals)}"]
    out = []
    for i, (f, r) in enumerate(zip(fakes, reals)):
        if tuple(_concrete(d, sizes or {}) for d in f.shape) != tuple(r.shape) or f.dtype != r.dtype:
            out.append(
                f"custom op {name} (node {node.name}, {where}) output {i}: its fake (Meta) function gives "
                f"{_signature(f)}, the kernel {_signature(r)} on the traced inputs, so every stage carries the wrong "
                "shape. Make the fake function return what the kernel returns (check it with `fxlab ops check`)."
            )
    return out


def _signature(t: torch.Tensor) -> str:
    return f"{str(t.dtype).replace('torch.', '')}{list(t.shape)}"


def fake_vs_kernel(gm: fx.GraphModule, inputs: Sequence[Any]) -> list[str]:
    """Run ``gm`` on ``inputs`` (copied); every custom op whose fake values differ from
    what its kernel returned, as one sentence each."""
    checker = _FakeVsKernel(gm)
    with torch.no_grad():
        checker.run(*clone_tree(list(inputs)))
    return checker.problems


_LEFT_OUT = "custom op {qualname} ran outside the graph"
_LEFT_OUT_SAID = re.compile(re.escape(_LEFT_OUT).replace(re.escape("{qualname}"), r"(\S+)"))


def ops_said_left_out(texts: Sequence[str]) -> list[str]:
    """The custom ops (``namespace::name``) that :func:`op_left_out_of_graph`'s sentences
    among ``texts`` (a trace's problems and graph errors) name, in order, once each."""
    return list(dict.fromkeys(found for text in texts for found in _LEFT_OUT_SAID.findall(text)))


def op_left_out_of_graph(break_reason: str | None) -> str | None:
    """The sentence for a graph break caused by a custom op Dynamo could not run on fake
    tensors (it has no fake/Meta function), or None."""
    match = _UNSUPPORTED_OPERATOR.search(break_reason or "")
    if match is None or match.group(1) in TORCH_NAMESPACES:
        return None
    qualname = f"{match.group(1)}::{match.group(2)}"
    return (
        f"{_LEFT_OUT.format(qualname=qualname)}: Dynamo could not run it on fake tensors (it has no fake/Meta "
        f"function), broke the graph around it and ran it eagerly, so it is in no stage and not in the Ascend IR. "
        f'Register a fake function: @torch.library.register_fake("{qualname}") (or define_op(..., fake=...)).'
    )


class GraphBreaks:
    """Dynamo's graph-break reasons from now on. Its counters keep every break, one that
    ended no graph too (the code before the break compiled to nothing, so no graph carries
    its reason): a custom op without a fake function, called first in a function, breaks so."""

    def __init__(self) -> None:
        self._before = dict(counters["graph_break"])
        self._untraced_before = dict(counters["unimplemented"])

    def since(self) -> list[str]:
        return [reason for reason, seen in counters["graph_break"].items() if seen > self._before.get(reason, 0)]

    def untraced_since(self) -> list[str]:
        """What Dynamo could not trace from now on (it runs that code eagerly), in its words."""
        return [reason for reason, seen in counters["unimplemented"].items() if seen > self._untraced_before.get(reason, 0)]


def ops_left_out_between_graphs(reasons: Sequence[str], graph_reasons: Sequence[str | None]) -> list[str]:
    """:func:`op_left_out_of_graph`'s sentence for each custom op a graph break of
    ``reasons`` left out that no graph's own break reason (``graph_reasons``) names, once."""
    said = {op_left_out_of_graph(reason) for reason in graph_reasons}
    found: list[str] = []
    for reason in reasons:
        sentence = op_left_out_of_graph(reason)
        if sentence is not None and sentence not in said and sentence not in found:
            found.append(sentence)
    return found
