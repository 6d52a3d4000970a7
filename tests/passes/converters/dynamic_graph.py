"""A converter's sample as a graph with dynamic shapes: the dynamic variant of
:func:`tests.passes.converters.test_registry_walk.one_node_graph`.

Every dim of every tensor of the sample is marked dynamic (sizes 0 and 1 stay static, as
Dynamo keeps them), and every integer above 1 of a ``SymInt`` argument of the op's schema
(sizes, bounds, lengths; not the window parameters of convolutions and pooling) becomes a
symbolic integer too. As in Dynamo, sizes are
"duck-sized": equal sizes share one symbol, so an integer that equals a tensor's dim is
that dim, and running the op's fake kernel relates the rest (``view(x, [6, 4])`` of a
``[2, 3, 4]`` tensor becomes ``view(x, [s0*s1, s2])``). The graph is then built as
aot_autograd builds a functional graph with dynamic shapes: one ``Sym`` placeholder per
size symbol, placed before the first tensor that carries it; the sizes an argument needs
computed from them by ``operator`` nodes; the op; ``getitem`` of each output.

So the converter sees what it sees in a model compiled with ``dynamic=True``: tensors with
symbolic sizes (``-1`` in their descs) and size arguments that are graph values.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

import sympy
import torch
import torch.fx as fx
from torch._dispatch.python import enable_python_dispatcher
from torch._dynamo.source import ConstantSource, LocalSource
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext
from torch.utils import _pytree as pytree

from fxlab.passes.converters.registry import Sample
from tests.passes.converters.test_registry_walk import add_outputs


WINDOW_PARAMETERS = frozenset({"padding", "dilation", "groups", "output_padding", "kernel_size", "pad"})


class NotDynamic(Exception):
    """The sample has no dynamic variant (nothing to mark, or the op cannot be traced
    with symbolic sizes); the message says why."""


@dataclass
class DynamicGraph:
    """The graph, the values of its placeholders at the sample's sizes (ints for the size
    symbols, the sample's tensors), and where each of the sample's tensors is among them."""

    gm: fx.GraphModule
    inputs: list[Any]
    positions: list[int]


def symint_arguments(target: Any) -> set[str]:
    """Names of ``target``'s schema arguments typed ``SymInt``, ``SymInt[]`` or optional
    ones (integers a model may compute from sizes)."""
    from torchgen.model import FunctionSchema

    schema = getattr(target, "_schema", None)
    if schema is None:
        return set()
    try:
        parsed = FunctionSchema.parse(str(schema))
    except Exception:  # noqa: BLE001 - a schema torchgen cannot read: no SymInt argument
        return set()
    names = {a.name for a in parsed.arguments.flat_all if a.type.is_symint_like()}
    if str(schema.name) == "aten::arange":
        names |= {"start", "end"}  # Scalars in the schema, sizes in a model (arange(x.shape[1]))
    # Window parameters of convolutions and pooling are SymInts in the schemas, but a
    # model never computes them from sizes: they stay as written.
    window = WINDOW_PARAMETERS | ({"stride"} if names & WINDOW_PARAMETERS else set())
    return names - window


class _Builder:
    def __init__(self) -> None:
        self.env = ShapeEnv()
        self.mode = FakeTensorMode(shape_env=self.env)
        self.graph = fx.Graph()
        self.inputs: list[Any] = []
        self.symbol_nodes: dict[sympy.Symbol, fx.Node] = {}
        self.count = 0
        self.sample_leaves: list[tuple[Any, Any]] = []  # (real tensor, what it became)
        self.input_of: dict[Any, int] = {}  # a size symbol, or id() of a fake tensor -> graph input index

    def fake_tensor(self, t: torch.Tensor) -> torch.Tensor:
        self.count += 1
        context = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DUCK] * t.dim())
        return self.mode.from_tensor(t, source=LocalSource(f"arg{self.count}"), symbolic_context=context)

    def symint(self, value: int) -> Any:
        self.count += 1
        source = ConstantSource(f"int{self.count}")
        symbol = self.env.create_symbol(value, source, dynamic_dim=DimDynamic.DUCK)
        return self.env.create_symintnode(symbol, hint=value, source=source)

    def expression(self, value: Any) -> sympy.Expr:
        return self.env.simplify(value.node.expr)

    def symbol_placeholder(self, symbol: sympy.Symbol, value: torch.SymInt) -> fx.Node:
        node = self.symbol_nodes.get(symbol)
        if node is None:
            node = self.graph.placeholder(f"sym{len(self.symbol_nodes)}")
            node.meta["val"] = value
            self.symbol_nodes[symbol] = node
            self.input_of[symbol] = len(self.inputs)
            self.inputs.append(int(self.env.backed_var_to_val[symbol]))
        return node

    def positions(self) -> list[int]:
        """Where each of the sample's tensors is among the graph's inputs."""
        found = []
        for _, became in self.sample_leaves:
            key = self.expression(became) if isinstance(became, torch.SymInt) else id(became)
            if key not in self.input_of:
                raise NotDynamic("a sample value became a size expression, not a graph input")
            found.append(self.input_of[key])
        return found


def dynamic_one_node_graph(target: Any, sample: Sample) -> DynamicGraph:
    """``sample`` as a graph with dynamic shapes (see the module docstring); raises
    :class:`NotDynamic` when nothing in it can be dynamic or the op's fake kernel fails
    on symbolic sizes."""
    b = _Builder()
    symbolic = symint_arguments(target)
    no_schema = getattr(target, "_schema", None) is None
    args, kwargs = _named_leaves(target, sample)
    fake_args, fake_kwargs, marked = _fake_arguments(b, args, kwargs, symbolic, no_schema)
    if not marked:
        raise NotDynamic("nothing to mark dynamic: no tensor dim and no size argument above 1")
    try:
        # As under Dynamo: decompositions run in Python, so symbolic sizes reach them.
        with b.mode, enable_python_dispatcher():
            val = target(*fake_args, **fake_kwargs)
    except Exception as exc:  # noqa: BLE001 - the op has no fake kernel for symbolic sizes
        first_line = (str(exc).splitlines() or [""])[0][:200]
        raise NotDynamic(f"the op's fake kernel fails on symbolic sizes: {type(exc).__name__}: {first_line}") from exc
    node_args, node_kwargs = pytree.tree_map(lambda v: _graph_value(b, v), (fake_args, fake_kwargs))
    call = b.graph.call_function(target, tuple(node_args), dict(node_kwargs))
    call.meta["val"] = val
    add_outputs(b.graph, call, val)
    return DynamicGraph(fx.GraphModule(torch.nn.Module(), b.graph), b.inputs, b.positions())


def _named_leaves(target: Any, sample: Sample) -> tuple[list[tuple[str, Any]], dict[str, Any]]:
    """The sample's positional arguments with their schema names (``""`` without one)."""
    schema = getattr(target, "_schema", None)
    names = [a.name for a in schema.arguments if not a.kwarg_only] if schema is not None else []
    return [(names[i] if i < len(names) else "", v) for i, v in enumerate(sample.args)], dict(sample.kwargs)


def _fake_arguments(b: _Builder, args: list[tuple[str, Any]], kwargs: dict[str, Any], symbolic: set[str], no_schema: bool) -> tuple[list[Any], dict[str, Any], bool]:
    marked = False

    def fake(name: str, value: Any) -> Any:
        nonlocal marked
        if isinstance(value, torch.Tensor):
            if no_schema and value.dim() == 0 and not value.is_floating_point() and value.dtype != torch.bool and int(value) > 1:
                marked = True  # a size computed from sizes (operator.add ...)
                became: Any = b.symint(int(value))
            else:
                marked = marked or any(d > 1 for d in value.shape)
                became = b.fake_tensor(value)
            b.sample_leaves.append((value, became))
            return became
        if name in symbolic and type(value) is int and value > 1:
            marked = True
            return b.symint(value)
        return value

    fake_args = [pytree.tree_map(lambda v, n=name: fake(n, v), value) for name, value in args]
    fake_kwargs = {k: pytree.tree_map(lambda v, n=k: fake(n, v), v) for k, v in kwargs.items()}
    return fake_args, fake_kwargs, marked


def _graph_value(b: _Builder, value: Any) -> Any:
    """A fake argument as the graph takes it: a tensor placeholder (after the placeholders
    of its size symbols), a size as a symbol placeholder or computed from them, a number."""
    if isinstance(value, torch.Tensor):
        for size in value.shape:
            if isinstance(size, torch.SymInt):
                for symbol in sorted(b.expression(size).free_symbols, key=str):
                    b.symbol_placeholder(symbol, _symint_of(b, value, symbol))
        node = b.graph.placeholder(f"arg{len(b.inputs)}")
        node.meta["val"] = value
        b.input_of[id(value)] = len(b.inputs)
        b.inputs.append(next(real for real, fake in b.sample_leaves if fake is value))
        return node
    if isinstance(value, torch.SymInt):
        return _emit(b, b.expression(value), value)
    return value


def _symint_of(b: _Builder, tensor: torch.Tensor, symbol: sympy.Symbol) -> torch.SymInt:
    """A SymInt whose expression is ``symbol``: the tensor's dim that is that symbol."""
    for size in tensor.shape:
        if isinstance(size, torch.SymInt) and size.node.expr == symbol:
            return size
    return b.env.create_symintnode(symbol, hint=int(b.env.backed_var_to_val[symbol]))


_BINARY = {sympy.Add: operator.add, sympy.Mul: operator.mul}


def _emit(b: _Builder, expr: sympy.Expr, value: torch.SymInt) -> Any:
    """Nodes computing ``expr`` from the symbol placeholders (a plain int when it is one)."""
    if expr.is_Integer:
        return int(expr)
    if expr.is_Symbol:
        return b.symbol_placeholder(expr, value)
    combine = _BINARY.get(type(expr))
    if combine is None:
        raise NotDynamic(f"a size argument is {expr}, which this test does not rebuild from the size symbols")
    nodes = [_emit(b, term, _symint(b, term)) for term in expr.args]
    # Integers last, as Python code writes them (s0 * 2, s0 + 1).
    nodes.sort(key=lambda n: isinstance(n, int))
    result = nodes[0]
    for other in nodes[1:]:
        node = b.graph.call_function(combine, (result, other))
        node.meta["val"] = combine(_val(result), _val(other))
        result = node
    return result


def _symint(b: _Builder, expr: sympy.Expr) -> Any:
    if expr.is_Integer:
        return int(expr)
    return b.env.create_symintnode(expr, hint=int(expr.xreplace(b.env.backed_var_to_val)))


def _val(item: Any) -> Any:
    return item.meta["val"] if isinstance(item, fx.Node) else item
