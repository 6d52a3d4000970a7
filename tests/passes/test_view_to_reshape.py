from __future__ import annotations

import torch

from tests.functional_graphs import functional_graph
from fxlab.passes.view_to_reshape import view_to_reshape


def _f(x):
    return (x.view(6, 2) + 1, x.view(-1).t() * 2)


def test_every_view_becomes_reshape_with_the_same_arguments():
    gm = functional_graph(_f, torch.randn(3, 4))
    views = [n.args for n in gm.graph.nodes if n.target is torch.ops.aten.view.default]
    assert len(views) == 2
    assert view_to_reshape(gm).changed is True
    reshapes = [n.args for n in gm.graph.nodes if n.target is torch.ops.aten.reshape.default]
    assert reshapes == views and not any(n.target is torch.ops.aten.view.default for n in gm.graph.nodes)
    x = torch.randn(3, 4)
    for got, want in zip(gm(x), _f(x)):
        torch.testing.assert_close(got, want)
    assert view_to_reshape(gm).changed is False
