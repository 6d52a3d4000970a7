from __future__ import annotations

import torch

from fxlab.capture.stages import functional_graph
from fxlab.passes.reinplace import fold_input_copy_epilogues, reinplace


def _targets(gm):
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def test_mul_plus_copy_into_input_folds_to_mul_():
    def f(x, y):
        x.mul_(3)
        return (x + y,)

    gm = functional_graph(f, torch.randn(4), torch.randn(4))
    assert _targets(gm) == ["aten.mul.Tensor", "aten.add.Tensor", "aten.copy_.default"]
    out, changed = reinplace(gm)
    assert changed and _targets(out) == ["aten.mul_.Tensor", "aten.add.Tensor"]
    folded = next(n for n in out.graph.nodes if n.target is torch.ops.aten.mul_.Tensor)
    assert folded.meta["fxlab.folded_from"] == ["mul", "copy_"]
    x, y = torch.randn(4), torch.randn(4)
    x_ref = x.clone()
    (result,) = out(x, y)
    torch.testing.assert_close(x, x_ref * 3)
    torch.testing.assert_close(result, x_ref * 3 + y)
    assert _targets(gm)[-1] == "aten.copy_.default", "the functional graph itself is untouched"


def test_no_fold_when_the_old_input_is_read_later():
    aten = torch.ops.aten
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    doubled = graph.call_function(aten.mul.Tensor, (x, 2))
    read_after = graph.call_function(aten.add.Tensor, (x, 1))  # needs the old x
    graph.call_function(aten.copy_.default, (x, doubled))
    graph.output((read_after,))
    assert fold_input_copy_epilogues(graph) == 0
    assert [str(n.target) for n in graph.nodes if n.op == "call_function"] == ["aten.mul.Tensor", "aten.add.Tensor", "aten.copy_.default"]


def test_copy_then_copy_epilogue_folds_into_one_copy_():
    def f(x):
        y = x * 2
        z = x + 1  # read before the write: folding stays correct
        x.copy_(y)
        return (z,)

    gm = functional_graph(f, torch.randn(3))
    out, _ = reinplace(gm)
    assert _targets(out) == ["aten.mul.Tensor", "aten.add.Tensor", "aten.copy_.default"]
    x = torch.randn(3)
    x_ref = x.clone()
    (z,) = out(x)
    torch.testing.assert_close(z, x_ref + 1)
    torch.testing.assert_close(x, x_ref * 2)


def test_reinplace_puts_custom_inplace_op_back():
    import fxlab.ops  # noqa: F401

    def f(x, y):
        h = x * 2
        return (torch.ops.npu.my_inplace(h, y) + h,)

    gm = functional_graph(f, torch.randn(2, 3), torch.randn(2, 3))
    assert "higher_order.auto_functionalized_v2" in [f"higher_order.{n.target.name()}" if hasattr(n.target, "name") and not isinstance(n.target, torch._ops.OpOverload) else str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    out, changed = reinplace(gm)
    assert changed and "npu.my_inplace.default" in _targets(out)
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    torch.testing.assert_close(out(x, y)[0], f(x.clone(), y)[0])


def _check_reinplaced_against_eager(f, *inputs):
    gm = functional_graph(f, *(x.clone() for x in inputs))
    out, _ = reinplace(gm)
    eager_inputs = [x.clone() for x in inputs]
    expected = f(*eager_inputs)
    graph_inputs = [x.clone() for x in inputs]
    result = out(*graph_inputs)
    for e, g in zip(eager_inputs, graph_inputs):
        torch.testing.assert_close(g, e)
    return out, expected, result


def test_two_folds_where_the_second_input_is_read_by_the_first_fold():
    # KeyError: sub__tensor (the fold order was computed before folding added nodes)
    def f(x, b):
        x.sub_(b)
        b.relu_()

    out, _, _ = _check_reinplaced_against_eager(f, torch.randn(6), torch.randn(6))
    assert _targets(out) == ["aten.sub_.Tensor", "aten.relu_.default"]


def test_folds_after_a_copy_between_inputs():
    def f(x0, x1):
        x1.add_(1)
        x0.copy_(x1)
        x0.mul_(2)

    _check_reinplaced_against_eager(f, torch.randn(5), torch.randn(5))
