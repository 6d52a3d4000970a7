from __future__ import annotations

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

from fxlab.passes.recover_view_inplace_pattern import inplace_twins, recover_view_inplace_pattern


def _scatter_update(self, indices, updates, axis):
    out = self.clone()
    out.index_copy_(axis, indices, updates)
    return out


@pytest.fixture
def scatter_update_ops():
    """torch_npu's scatter_update / scatter_update_ (schemas as torch_npu defines them),
    with CPU kernels, when nothing defined them yet."""
    if hasattr(torch.ops.npu, "scatter_update") and hasattr(torch.ops.npu, "scatter_update_"):
        yield
        return
    lib = torch.library.Library("npu", "FRAGMENT")
    lib.define("scatter_update(Tensor self, Tensor indices, Tensor updates, int axis) -> Tensor")
    lib.define("scatter_update_(Tensor(a!) self, Tensor indices, Tensor updates, int axis) -> Tensor(a!)")
    lib.impl("scatter_update", _scatter_update, "CompositeExplicitAutograd")
    lib.impl("scatter_update_", lambda s, i, u, a: s.index_copy_(a, i, u), "CompositeExplicitAutograd")
    lib.impl("scatter_update", lambda s, i, u, a: torch.empty_like(s), "Meta")
    lib.impl("scatter_update_", lambda s, i, u, a: s, "Meta")
    yield
    lib._destroy()


def _write_back(cache, indices, updates):
    rows = cache.view(4, 2)
    updated = torch.ops.npu.scatter_update(rows, indices, updates, 0)
    cache.copy_(updated.view(8))
    return (updated.sum(),)


def _graph():
    return make_fx(_write_back, tracing_mode="fake")(torch.zeros(8), torch.tensor([1, 3]), torch.ones(2, 2))


def _targets(gm):
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def test_out_of_place_scatter_written_back_becomes_the_inplace_op(scatter_update_ops):
    gm = _graph()
    assert _targets(gm) == ["aten.view.default", "npu.scatter_update.default", "aten.view.default", "aten.copy_.default", "aten.sum.default"]
    assert recover_view_inplace_pattern(gm).changed is True
    assert _targets(gm) == ["aten.view.default", "npu.scatter_update_.default", "aten.view.default", "aten.sum.default"]
    cache = torch.zeros(8)
    (total,) = gm(cache, torch.tensor([1, 3]), torch.ones(2, 2))
    torch.testing.assert_close(cache, torch.tensor([0.0, 0, 1, 1, 0, 0, 1, 1]))
    torch.testing.assert_close(total, torch.tensor(4.0))


def test_older_cann_or_no_npu_ops_leave_the_graph_alone(scatter_update_ops):
    gm = _graph()
    assert recover_view_inplace_pattern(gm, cann_supported=False).changed is False
    assert "aten.copy_.default" in _targets(gm)
    assert torch.ops.npu.scatter_update.default in inplace_twins()
