from __future__ import annotations

import torch

from tests.functional_graphs import functional_graph
from fxlab.passes.aclgraph.remove_cat_ops import out_variant, remove_cat_ops, why_kept

aten = torch.ops.aten


def _calls(gm):
    return [(n.name, str(n.target)) for n in gm.graph.nodes if n.op == "call_function"]


def test_a_cat_along_dim_0_becomes_one_buffer_its_producers_write_into():
    def f(x, y):
        return (torch.cat([torch.mm(x, y), torch.relu(y)]) * 2,)

    x, y = torch.randn(3, 4), torch.randn(4, 4)
    gm = functional_graph(f, x, y)
    result = remove_cat_ops(gm)
    assert result.changed and result.notes == ["cat: inputs now write into one buffer"]
    assert _calls(gm) == [
        ("empty_memory_format", "aten.empty.memory_format"),
        ("slice_tensor", "aten.slice.Tensor"),
        ("mm_out", "aten.mm.out"),
        ("slice_tensor_1", "aten.slice.Tensor"),
        ("relu_out", "aten.relu.out"),
        ("mul", "aten.mul.Tensor"),
    ]
    slices = [n.args[1:] for n in gm.graph.nodes if n.target is aten.slice.Tensor]
    assert slices == [(0, 0, 3), (0, 3, 7)]
    torch.testing.assert_close(gm(x, y)[0], f(x, y)[0])


def test_what_torchair_leaves_alone_is_kept_with_its_reason():
    def f(x, y):
        a = torch.mm(x, y)
        return torch.cat([a, a], dim=1), torch.cat([x, y]), torch.cat([a.relu(), x.relu()])

    gm = functional_graph(f, torch.randn(4, 4), torch.randn(4, 4))
    result = remove_cat_ops(gm)
    assert result.notes == [
        "cat_2: inputs now write into one buffer",
        "cat kept: joins along dim 1, not 0",
        "cat_1 kept: input 0 is not computed by a call in the graph",
    ]
    assert out_variant(aten.mm.default) is aten.mm.out and out_variant(aten.t.default) is None


def test_an_input_feeding_two_cats_keeps_both():
    def f(x, y):
        a = torch.mm(x, y)
        return torch.cat([a, torch.mm(y, x)]), torch.cat([a, torch.mm(x, x)])

    gm = functional_graph(f, torch.randn(4, 4), torch.randn(4, 4))
    cats = [n for n in gm.graph.nodes if n.target is aten.cat.default]
    assert why_kept(cats[0], set(cats)) == "input 0 also feeds another cat"
