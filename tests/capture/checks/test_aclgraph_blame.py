"""Whose graph an aclgraph mismatch is (fxlab.capture.checks.aclgraph_blame): TorchAir's only when
its own backend, run end to end on the same model, makes the same graph and that graph
computes other values too; the user's where the user's own pass changes the values;
fxlab's internal error otherwise, naming the pass and the nodes; and a graph that is not
TorchAir's is an error even when its numbers match."""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Iterator
from typing import Any

import pytest
import torch

from fxlab.capture.loader import LoadedModel
from fxlab.capture.pipeline import Capture, capture_trace
from fxlab.capture.request import TraceRequest

MODES = ("reduce-overhead", "npugraph_ex")


class CatThenClamp(torch.nn.Module):
    """TorchAir's remove_cat_ops writes x1 (after its row add) into the cat's buffer with
    an ``.out`` op; reinplace_input_mutated_ops then clamps that buffer in place for the
    write-back of x1, so v2's first half comes out clamped."""

    def forward(self, x0: torch.Tensor, x1: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x1[:, 1].add_(1)
        v1 = x1 * x0
        v2 = torch.cat([x1, v1], 0)
        x1.clamp_(min=0.1)
        return v1, v2


class CopyThenWrite(torch.nn.Module):
    """Inductor's remove_noop_ops (both modes run it) replaces copy(buf) by buf, which the
    epilogue writes before x0's write-back reads it."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("buf", torch.randn(4, 4))

    def forward(self, x0: torch.Tensor) -> tuple[()]:
        buf = self.buf  # read first: Dynamo makes it the first graph input
        x0.copy_(buf)
        buf.add_(1.5)
        return ()


def _loaded(model: Any, *inputs: torch.Tensor) -> LoadedModel:
    return LoadedModel(fn=model, args=inputs)


def _capture(loaded: LoadedModel, mode: str, reference: Any = None) -> Capture:
    """The pipeline on a model object, with ``reference`` as TorchAir's own backend."""
    return capture_trace(loaded, TraceRequest(loaded.fn, loaded.args, mode=mode), reference=reference)


def _clamp_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(3)
    return torch.randn(4, 4, generator=generator), torch.randn(4, 4, generator=generator)


# -- without TorchAir's own run -------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_without_torchairs_run_a_mismatch_is_fxlabs_internal_error_naming_the_pass_and_nodes(mode: str) -> None:
    trace = _capture(_loaded(CatThenClamp(), *_clamp_inputs()), mode).trace
    check = trace.aclgraph_check
    assert check.failed and trace.status == "partial"
    numeric, blame = check.mismatches
    assert numeric.startswith("graph 0 output 1: max |diff| ")
    assert blame.startswith("graph 0: fxlab internal error: the aclgraph graph computes other values than the compiled model; ")
    assert "it computes the model's values after reinplace_inplaceable_ops and not after reinplace_input_mutated_ops" in blame
    assert "(reinplace_input_mutated_ops: clamp: aten.clamp.default -> aten.clamp_.default)" in blame
    assert "`fxlab torchair fetch`" in blame and blame.endswith("please report it with the command and the model file.")
    assert "TorchAir fault" not in check.verdict


def test_without_torchairs_run_a_passes_hazard_note_is_quoted_and_not_called_torchairs_fault() -> None:
    trace = _capture(_loaded(CopyThenWrite(), torch.randn(4, 4)), "reduce-overhead").trace
    numeric, blame, hazard = trace.aclgraph_check.mismatches
    assert numeric == "graph 0 input 1 after the call: max |diff| 1.5"
    assert "it computes the model's values after the functional graph and not after remove_noop_ops" in blame
    assert blame.startswith("graph 0: fxlab internal error")
    assert hazard.startswith("graph 0: hazard: copy__1 read arg0_1 after copy_ writes it in place")
    assert "TorchAir fault" not in trace.aclgraph_check.verdict


def triple_instead(gm: Any, example_inputs: Any, config: Any) -> None:
    for node in gm.graph.nodes:
        if node.target is torch.ops.aten.mul.Tensor:
            node.args = (node.args[0], 3)


def _user_pass_capture(reference: Any = None) -> Capture:
    """x * 2 with the user's post pass making it x * 3 (reduce-overhead)."""
    from fxlab.compat.config import CompilerConfig

    config = CompilerConfig()
    config.mode, config.post_grad_custom_post_pass = "reduce-overhead", triple_instead
    inputs = (torch.arange(4.0),)
    loaded = LoadedModel(fn=lambda x: (x * 2,), args=inputs, module=types.SimpleNamespace(compiler_config=config))
    return capture_trace(loaded, TraceRequest(loaded.fn, inputs), reference=reference)


USERS_PASS = (
    "graph 0: the user's post_grad_custom_post_pass (triple_instead (test_aclgraph_blame.py:{line})) changes what the graph "
    "computes: it computes the model's values after view_to_reshape and not after the user's pass (the user passes' check "
    "compares the graph before and after it); not an error of fxlab or of TorchAir"
)


def _said_of_the_users_pass(trace: Any) -> None:
    line = triple_instead.__code__.co_firstlineno
    assert trace.aclgraph_check.mismatches == ["graph 0 output 0: max |diff| 3", USERS_PASS.format(line=line)]
    assert trace.user_pass_check.mismatches == [
        f"graph 0: the user's post_grad_custom_post_pass (triple_instead (test_aclgraph_blame.py:{line})) changes the results: "
        "output 0: max |diff| 3"
    ]
    assert trace.status == "partial"


def test_without_torchairs_run_a_users_pass_that_changes_the_values_is_named_not_called_fxlabs_error() -> None:
    _said_of_the_users_pass(_user_pass_capture().trace)


# -- with TorchAir's own backend run end to end ---------------------------------------------
@pytest.fixture(scope="module")
def backend(torchair_path: Any) -> Iterator[Any]:
    """TorchAir's own backend for the check, in a session held for the module."""
    from tests.compat.end_to_end import sides

    from fxlab.session.torchair_side import aclgraph_reference

    with sides(torchair_path) as side:
        yield aclgraph_reference(side, torchair_path, "Ascend910B2")


@pytest.mark.parametrize("mode", MODES)
def test_torchairs_fault_is_said_where_its_own_run_makes_the_wrong_graph_with_the_passes_that_make_it(backend: Any, mode: str) -> None:
    trace = _capture(_loaded(CatThenClamp(), *_clamp_inputs()), mode, backend).trace
    numeric, blame = trace.aclgraph_check.mismatches
    assert numeric.startswith("graph 0 output 1: max |diff| ")
    who = "npugraph_ex's own backend" if mode == "npugraph_ex" else "TorchAir's own backend (torchair.get_npu_backend, mode reduce-overhead)"
    assert blame.startswith(f"graph 0: TorchAir fault, proven by its own run: {who}")
    assert "makes this same graph and capture code, and on its own first call's inputs its graph computes other values than the model (output 1: max |diff| " in blame
    assert "its graph computes the model's values after reinplace_inplaceable_ops_pass and not after reinplace_input_mutated_ops" in blame
    switches = (
        ("config.remove_cat_ops = False", "config.input_inplace_pass = False")
        if mode == "npugraph_ex"
        else ("config.debug.aclgraph.remove_cat_ops = False", "config.debug.aclgraph.disable_reinplace_input_mutated_ops_pass = True")
    )
    assert f"with {switches[0]} (no remove_cat_ops) or with {switches[1]} (no reinplace_input_mutated_ops), its graph computes the model's values" in blame
    assert trace.status == "partial"


def test_the_wrong_values_are_v2s_first_half_clamped_in_torchairs_own_graph(backend: Any) -> None:
    from fxlab.capture.checks.aclgraph_blame import _own_run

    captured = _capture(_loaded(CatThenClamp(), *_clamp_inputs()), "reduce-overhead", backend)
    run = backend(_loaded(CatThenClamp(), *_clamp_inputs()), captured.options, None)
    (theirs,) = run.graphs
    computed = theirs.fx_graph(*[t.clone() for t in theirs.inputs])
    v1, v2 = theirs.expected_outputs
    assert torch.equal(computed[0], v1) and torch.equal(computed[1][4:], v2[4:])
    assert torch.equal(computed[1][:4], v2[:4].clamp(min=0.1)) and not torch.equal(computed[1][:4], v2[:4])
    assert _own_run(captured.graphs[0], theirs) == [f"graph 0 output 1: max |diff| {(v2[:4] - v2[:4].clamp(min=0.1)).abs().max().item():.3g}"]


def test_a_noop_copy_read_after_its_write_is_torchairs_fault_proven_with_remove_noop_ops_named(backend: Any) -> None:
    trace = _capture(_loaded(CopyThenWrite(), torch.randn(4, 4)), "reduce-overhead", backend).trace
    numeric, blame, hazard = trace.aclgraph_check.mismatches
    assert numeric == "graph 0 input 1 after the call: max |diff| 1.5"
    assert "its graph computes the model's values after the graph its compiler receives and not after optimize_noop_ops" in blame
    assert "with config.experimental_config.remove_noop_ops = False (no optimize_noop_ops)" in blame
    assert hazard.startswith("graph 0: hazard: ")


def test_a_graph_that_is_torchairs_and_computes_the_models_values_says_so(backend: Any) -> None:
    def f(x, w):
        h = x @ w
        h.t()[0].mul_(3.0)
        h[:, 1:3].div_(2.0)
        return (h * 2,)

    trace = _capture(_loaded(f, torch.randn(4, 7), torch.randn(7, 5)), "reduce-overhead", backend).trace
    check = trace.aclgraph_check
    assert check.ok and trace.status == "ok"
    assert check.compared_with == (
        "graph 0: the same graph and capture code as TorchAir's own backend (torchair.get_npu_backend, mode reduce-overhead) "
        "makes, run end to end from TorchAir's sources"
    )
    assert check.verdict.endswith(check.compared_with)


def test_a_graph_that_differs_from_torchairs_is_an_internal_error_even_when_its_numbers_match(backend: Any) -> None:
    # TorchAir run with its first re-inplacing off gives another graph that computes the
    # same values: fxlab's graph (with it on) is then not TorchAir's, and must not end ok.
    def elsewhere(loaded: LoadedModel, options: Any, dynamic: Any) -> Any:
        return backend(loaded, dataclasses.replace(options, inplace_pass=False), dynamic)

    def f(x):
        h = x * 2
        return (h.relu().sigmoid(),)

    trace = _capture(_loaded(f, torch.randn(4, 4)), "reduce-overhead", elsewhere).trace
    (blame,) = trace.aclgraph_check.mismatches
    assert blame.startswith("graph 0: fxlab internal error: fxlab's aclgraph graph is not the one TorchAir's own backend")
    assert "fxlab's pass reinplace_inplaceable_ops changed the graph, and TorchAir's run has no such pass; first difference: " in blame
    assert "TorchAir has call_function relu aten.relu.default (mul,) {}." in blame
    assert trace.status == "partial" and trace.aclgraph_check.compared > 0


def test_a_users_pass_that_changes_the_values_is_named_not_called_torchairs_fault(backend: Any) -> None:
    _said_of_the_users_pass(_user_pass_capture(backend).trace)
