"""The direct printer gives exactly torch's ``print_readable`` text, or hands back."""
from __future__ import annotations

import operator

import pytest
import torch
import torch.fx as fx

from fxlab.capture.readable import torch_print_readable
from fxlab.capture.readable_fast import fast_print_readable
from tests.functional_graphs import functional_graph

EXAMPLES = ["inplace_ops", "my_inplace", "my_op", "npu_add_custom", "graph_break", "llama_decoder"]


def _same_as_torch(gm: fx.GraphModule) -> bool:
    """True when the fast text is used; fails when it differs from torch's."""
    fast = fast_print_readable(gm)
    if fast is not None:
        assert fast == torch_print_readable(gm)
    return fast is not None


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_recorded_stage_prints_as_torch_prints_it(example_capture, example):
    used = [_same_as_torch(gm) for graph in example_capture(example).graphs for gm in graph.modules.values()]
    assert used and all(used)  # the examples need no fallback


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 2)
        self.register_buffer("scale", torch.ones(2))

    def forward(self, x, *rest):  # unannotated: a type would be printed instead of the shape
        y = self.lin(x).relu() * self.scale
        y = y[:, 1:3] * x.size(0)
        z = torch.cat([y, y], dim=-1).to(torch.float32)
        return -z + z.sum(dim=(0,), keepdim=True)


def test_symbolic_trace_with_modules_methods_attrs_and_operators():
    gm = fx.symbolic_trace(Block())
    assert _same_as_torch(gm)
    next(iter(gm.graph.nodes)).type = torch.Tensor  # printed as a type: left to torch
    assert not _same_as_torch(gm)


def _graph(build) -> fx.GraphModule:
    graph = fx.Graph()
    build(graph)
    return fx.GraphModule(torch.nn.Module(), graph)


def test_plain_argument_kinds_kwargs_and_unused_results():
    def build(g: fx.Graph) -> None:
        x = g.placeholder("x")
        x.meta["val"] = torch.empty(2, 3)
        t = g.call_function(torch.ops.aten.slice.Tensor, (x, 1, None, 2, 1))
        t.meta["stack_trace"] = 'File "/m.py", line 4, in f\n    t = x[:, :2]\n'
        g.call_function(torch.ops.aten.empty.memory_format, ([2, 3],), {"dtype": torch.float16, "device": torch.device("cpu"), "pin_memory": False})
        s = g.call_function(operator.getitem, (x, (slice(None, 1), Ellipsis)))
        g.call_function(operator.setitem, (x, 0, 1.5))
        g.output((t, s, [x]))

    assert _same_as_torch(_graph(build))


def test_renamed_placeholders_and_an_empty_graph():
    def build(g: fx.Graph) -> None:
        a = g.placeholder("*args")
        g.output(a)

    assert _same_as_torch(_graph(build))
    assert _same_as_torch(_graph(lambda g: None))


@pytest.mark.parametrize("name", ["torch", "sum", "class", "nan", "inf"])
def test_node_names_torch_would_rename_are_left_to_torch(name):
    def build(g: fx.Graph) -> None:
        x = g.placeholder("x")
        y = g.call_function(torch.ops.aten.neg.default, (x,))
        g.output(y)
        y.name = name  # set after creation: the graph's own namespace would rename it

    gm = _graph(build)
    assert fast_print_readable(gm) is None
    assert f"{name}_1 = torch.ops.aten.neg.default(x)" in torch_print_readable(gm)


def test_values_torch_prints_its_own_way_are_left_to_torch():
    def tensor_arg(g: fx.Graph) -> None:
        x = g.placeholder("x")
        g.output(g.call_function(torch.ops.aten.add.Tensor, (x, torch.ones(2))))

    def user_function(g: fx.Graph) -> None:
        x = g.placeholder("x")
        g.output(g.call_function(_user_fn, (x,)))

    def extra_meta(g: fx.Graph) -> None:
        x = g.placeholder("x")
        y = g.call_function(torch.ops.aten.neg.default, (x,))
        y.meta["custom"] = {"tag": "a"}
        g.output(y)

    for build in (tensor_arg, user_function, extra_meta):
        gm = _graph(build)
        assert fast_print_readable(gm) is None, build.__name__
        torch_print_readable(gm)  # torch can print it


def _user_fn(x: torch.Tensor) -> torch.Tensor:
    return x


def test_functional_graph_with_scopes_and_symbolic_sizes():
    from fxlab import scope

    def model(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        with scope.super_kernel("sk", "stream-fusion=1"):
            return (x + y).view(-1)

    assert _same_as_torch(functional_graph(model, torch.randn(3, 2), torch.randn(3, 2)))


_STACKS = [None, "", 'File "/m.py", line 3, in f\n    a = b\n', 'File "/m.py", line 9, in g\n    return c  # done\n', "no frame here"]
_VALUES = [None, True, 0, -3, 1.5, 1e-06, float("inf"), "s", torch.float16, torch.device("cpu"), torch.contiguous_format, Ellipsis]


def _random_graph(rng) -> fx.GraphModule | None:
    graph = fx.Graph()
    nodes = [graph.placeholder(f"in_{i}") for i in range(rng.randint(0, 3))]

    def arg(depth: int = 0):
        roll = rng.random()
        if nodes and roll < 0.45:
            return rng.choice(nodes)
        if depth < 2 and roll < 0.6:
            items = [arg(depth + 1) for _ in range(rng.randint(0, 3))]
            return tuple(items) if rng.random() < 0.5 else items
        if roll < 0.65:
            return slice(rng.choice([None, 1]), arg(depth + 1) if depth < 2 else 2, None)
        return rng.choice(_VALUES)

    for _ in range(rng.randint(0, 12)):
        kind = rng.random()
        args = tuple(arg() for _ in range(rng.randint(0, 3)))
        kwargs = {f"k{i}": arg() for i in range(rng.randint(0, 2))}
        if kind < 0.5:
            node = graph.call_function(rng.choice([torch.ops.aten.add.Tensor, torch.ops.aten.view.default, torch.cat]), args, kwargs)
        elif kind < 0.7 and nodes:
            target = rng.choice([operator.add, operator.getitem, operator.setitem, operator.iadd, operator.neg])
            arity = {operator.setitem: 3, operator.neg: 1}.get(target, 2)
            node = graph.call_function(target, (rng.choice(nodes), *(arg() for _ in range(arity - 1))))
        elif args:
            node = graph.call_method(rng.choice(["relu", "view", "sum"]), args, kwargs)
        else:
            node = graph.get_attr(rng.choice(["w", "sub.w"]))
        node.meta["stack_trace"] = rng.choice(_STACKS)
        if rng.random() < 0.6:
            node.meta["val"] = rng.choice([torch.empty(2, 3), torch.empty(()), torch.empty(1, dtype=torch.int64), [torch.empty(1)], 3])
        nodes.append(node)
    if nodes or rng.random() < 0.5:
        graph.output(tuple(rng.sample(nodes, min(2, len(nodes)))) if nodes else None)
    root = torch.nn.Module()
    root.w = torch.nn.Parameter(torch.ones(1))
    root.sub = torch.nn.Module()
    root.sub.w = torch.nn.Parameter(torch.ones(1))
    try:
        return fx.GraphModule(root, graph)
    except SyntaxError:  # e.g. an augmented assignment to a literal: not a graph at all
        return None


@pytest.mark.filterwarnings("ignore::SyntaxWarning")
def test_random_graphs_print_as_torch_prints_them():
    import random

    graphs = [g for g in (_random_graph(random.Random(seed)) for seed in range(400)) if g is not None]
    used = [_same_as_torch(gm) for gm in graphs]
    assert len(graphs) > 300 and sum(used) > 0.8 * len(graphs)
