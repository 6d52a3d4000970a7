"""The aclgraph check (fxlab.capture.checks.aclgraph): each graph's aclgraph stage run on CPU, as the
ACL graph capture runs it, against the compiled run."""
from __future__ import annotations

import torch

from tests.sessions import capture_of, trace_of


def _trace(fn, *inputs, mode="reduce-overhead"):
    return trace_of(fn, inputs, mode=mode)


def test_the_aclgraph_graph_runs_on_cpu_against_the_compiled_run():
    def f(x, y):
        x.add_(y)
        return (x.relu() * 2,)

    trace = _trace(f, torch.randn(4), torch.randn(4))
    assert trace.aclgraph_check.ok and trace.aclgraph_check.compared == 3 and trace.ir_check is None


def test_an_in_place_op_reading_what_it_writes_runs_read_then_write_and_is_named():
    # TorchAir writes sub in place into x[..., 1:] while it reads x[..., :-1]: torch refuses
    # it on CPU; the check runs it as sub + copy_ and says so.
    def f(a, b):
        x = torch.cat([a, b], -1)
        return (x[..., 1:] - x[..., :-1],)

    trace = _trace(f, torch.randn(1, 4), torch.randn(1, 5))
    check = trace.aclgraph_check
    assert check.ok and not check.skipped and check.compared == 3  # the output and the two inputs
    (note,) = check.approximations
    assert note.startswith("graph 0: sub (aten.sub_.Tensor) read memory they write in place (torch refuses this on CPU")
    assert "except: graph 0: sub" in check.verdict


def test_writes_into_views_of_an_intermediate_give_a_graph_that_computes_the_models_values():
    # Once read as TorchAir's reinplace handing a dropped scatter's readers the view; in
    # TorchAir's own runs (and fxlab's, in the dispatch state its compiler runs in) no
    # scatter of a view of an intermediate is dropped: the scatters are written in place.
    def f(x, w):
        h = x @ w
        h.t()[0].mul_(3.0)
        h[:, 1:3].div_(2.0)
        return (h * 2,)

    captured = capture_of(f, (torch.randn(4, 7), torch.randn(7, 5)), mode="reduce-overhead")
    trace = captured.trace
    check = trace.aclgraph_check
    assert check.ok and not check.not_run and trace.status == "ok", check.verdict
    targets = [str(n.target) for n in captured.graphs[0].modules["aclgraph"].graph.nodes if n.op == "call_function"]
    assert "aten.mul.Tensor" in targets and "aten.mul_.Tensor" not in targets  # h.t()[0] * 3 stays functional
    assert "aten.slice_scatter.default" not in targets and "aten.select_scatter.default" not in targets
