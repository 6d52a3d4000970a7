"""TorchAir's view optimisation (``experimental_config.enable_view_optimize``, on by
default) changes what a graph computes, proven on TorchAir's own backend entered as a user
enters it (``torch.compile`` with ``torchair.get_npu_backend``): its end-to-end GE graph,
run on CPU, differs from eager with the optimisation on and agrees with it off; fxlab's
built-in GE graph is that graph op for op; and the trace (``--converter torchair`` and
built-in alike) names the optimisation with that setting as the fix. Skipped without a
TorchAir copy."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from fxlab.capture.request import TraceRequest
from fxlab.compat.torchair_backend_run import run_torchair_backend
from fxlab.ir.execute import execute
from fxlab.ir.ge_proto import graph_from_graph_def
from fxlab.passes.torchair_options import TorchAirOptions
from fxlab.session import CaptureSession
from fxlab.session.torchair_side import TorchAirSide
from tests.conftest import torchair_session

# `t.t().clamp_()` leaves the functional graph reading `view(t(clamp), [-1])`; the
# optimisation rebuilds that view from `clamp` as `Reshape(clamp, [16])`, dropping the
# transpose (TorchAir derives the view from strides on a contiguous copy of its base).
TRANSPOSED_THEN_FLAT = """
import torch


def f(a):
    t = a * 1.5
    t.t().clamp_(-1, 1)
    return t.view(-1)[3:7] * 2


model = f
example_inputs = (torch.arange(16.0).reshape(4, 4) / 8 - 1,)
"""


@pytest.fixture(scope="module")
def torchair(torchair_path: Any) -> Iterator[Any]:
    yield from torchair_session(torchair_path)


def _model() -> tuple[Any, torch.Tensor]:
    scope: dict[str, Any] = {}
    exec(TRANSPOSED_THEN_FLAT, scope)
    return scope["f"], scope["example_inputs"][0]


def _torchairs_graph(torchair: Any, view_optimize: bool) -> Any:
    fn, a = _model()
    run = run_torchair_backend(fn, [((a,), {})], TorchAirOptions(enable_view_optimize=view_optimize), torchair.package)
    assert run.error is None and len(run.graphs) == 1
    return graph_from_graph_def(run.graphs[0].concrete.graph._proto, {}, strict=False)


def test_torchairs_own_ge_graph_computes_other_values_only_with_the_view_optimisation_on(torchair: Any) -> None:
    fn, a = _model()
    expected = fn(a.clone())
    with_it, without_it = _torchairs_graph(torchair, True), _torchairs_graph(torchair, False)
    assert [op.type for op in with_it.ops if op.type in ("Transpose", "Reshape")] == ["Transpose", "Reshape"]
    assert not torch.allclose(execute(with_it, [a.clone()])[0], expected)
    torch.testing.assert_close(execute(without_it, [a.clone()])[0], expected)


def _trace(path: Path, converter: str, torchair: Any) -> Any:
    side = TorchAirSide(torchair, "Ascend910B2") if converter == "torchair" else None  # TorchAir as this module loaded it
    with CaptureSession(TraceRequest(path, mode="max-autotune", converter=converter), torchair=side) as session:
        return session.capture()


def _ops(ir: Any) -> list[tuple[str, tuple[str, ...]]]:
    return [(op.type, tuple(op.inputs)) for op in ir.ops]


@pytest.mark.parametrize("converter", ["builtin", "torchair"])
def test_the_trace_names_the_view_optimisation_with_its_setting(torchair: Any, tmp_path: Path, converter: str) -> None:
    path = tmp_path / "model.py"
    path.write_text(TRANSPOSED_THEN_FLAT)
    captured = _trace(path, converter, torchair)
    check = captured.trace.ir_check
    assert check is not None and not check.ok and captured.trace.status == "partial"
    said = check.mismatches[0]
    assert "experimental_config.enable_view_optimize = False" in said and "matches the compiled run" in said
    if converter == "torchair":
        assert said.startswith("graph 0: TorchAir's view optimisation, in TorchAir's own conversion, changes what this graph computes")
    else:
        assert said.startswith("graph 0: the view optimisation changes what this graph computes")
        assert f"It first changes slice_2 ({path}:8), which reads view_2 = aten.view(t_1, [-1]), rebuilt" in said
        assert "reshape_default = aten.reshape(clamp, [16])" in said
        assert _ops(captured.trace.graphs[0].ir) == _ops(_torchairs_graph(torchair, True))  # the built-in GE graph is TorchAir's


# einsum leaves `view(permute(view(bmm, [2, 1, 1, 8]), ...), [1, 2, 8])`: a view of the
# bmm's own shape whose size-1 dim has another stride on a fake tensor than on the CPU;
# TorchAir rebuilds it as a Reshape.
EINSUM_VIEW = """
import torch


def f(a, b):
    s = torch.einsum("btd,bsd->bts", a, b)
    return s, s[:, -1]


model = f
example_inputs = (torch.randn(1, 2, 4), torch.randn(1, 8, 4))
"""


def test_a_view_whose_size_one_dim_has_another_stride_converts_as_torchairs_own(torchair: Any, tmp_path: Path) -> None:
    path = tmp_path / "einsum_view.py"
    path.write_text(EINSUM_VIEW)
    builtin = _trace(path, "builtin", torchair).trace
    scope: dict[str, Any] = {}
    exec(EINSUM_VIEW, scope)
    run = run_torchair_backend(scope["f"], [(scope["example_inputs"], {})], TorchAirOptions(), torchair.package)  # as a user enters it
    assert run.error is None and len(run.graphs) == 1
    theirs = graph_from_graph_def(run.graphs[0].concrete.graph._proto, {}, strict=False)
    assert "Reshape" in [op.type for op in theirs.ops]  # the rebuilt [1, 2, 8] view
    assert _ops(builtin.graphs[0].ir) == _ops(theirs) and builtin.status == "ok"
