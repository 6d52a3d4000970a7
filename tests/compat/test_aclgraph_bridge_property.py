"""On random programs of in-place ops (``tests/capture/programs.py``), in both aclgraph
modes: fxlab's passes give the graph TorchAir's own passes give (npugraph_ex's for
npugraph_ex), node for node, and that graph run on CPU gives what the compiled run gave,
except where TorchAir's own pass is wrong, which the check then names.

A quarter of the profile's examples per mode (each program is compiled, then run through
both sides): ``--hypothesis-profile thorough`` draws hundreds.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, note, settings

from fxlab.capture.aclgraph_compare import graph_differences
from fxlab.compat.aclgraph_bridge import run_torchair_aclgraph
from fxlab.compat.npugraph_ex_loader import locate_npugraph_ex, npugraph_ex_session
from fxlab.errors import FxlabError
from tests.capture.programs import Program, programs
from tests.sessions import open_capture

EXAMPLES = max(20, settings.default.max_examples // 4)


@pytest.fixture(scope="module")
def sides(torchair_path: Any) -> Any:
    from fxlab.compat.bridge import open_torchair

    with open_torchair(torchair_path) as torchair, npugraph_ex_session(locate_npugraph_ex(torchair.report.path)) as npugraph_ex:
        yield torchair, npugraph_ex


def check_program(sides: Any, program: Program, mode: str) -> None:
    source = program.source()
    note(source)
    with tempfile.TemporaryDirectory(prefix="fxlab-program-") as folder:
        path = Path(folder) / "program.py"
        path.write_text(source)
        with contextlib.ExitStack() as session:
            try:
                captured = session.enter_context(open_capture(path, mode=mode))
            except FxlabError as exc:
                event(f"refused: {type(exc).__name__}")
                return  # a clean refusal, with its message
            check_capture(sides, captured, mode)


def check_capture(sides: Any, captured: Any, mode: str) -> None:
    torchair, npugraph_ex = sides
    trace = captured.trace
    assert all(g.error is None for g in trace.graphs), [g.error for g in trace.graphs]
    assert trace.check.ok, trace.check.verdict
    check = trace.aclgraph_check
    if trace.graphs and not check.ok:
        # Only where TorchAir's own pass is wrong (it drops a scatter and hands its readers a view).
        assert any("TorchAir fault" in m for m in check.mismatches), check.verdict
        event("TorchAir's reinplace fault, named by the check")
    elif trace.graphs:
        assert not check.not_run, check.verdict
    for graph in captured.graphs:
        ours = graph.modules["aclgraph"]
        theirs = run_torchair_aclgraph(graph.modules["functional"], graph.index, torchair, captured.options, npugraph_ex).fx_graph
        differences = graph_differences(ours, theirs)
        assert differences == [], "\n".join(differences)
        event(f"{mode}: {sum(1 for n in ours.graph.nodes if str(n.target).endswith('_.Tensor') or str(n.target).endswith('_.default'))} in-place op(s)")


@pytest.mark.parametrize("mode", ["reduce-overhead", "npugraph_ex"])
def test_fxlabs_passes_give_torchairs_graph_on_random_programs(sides: Any, mode: str) -> None:
    @settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(program=programs())
    def check(program: Program) -> None:
        check_program(sides, program, mode)

    check()
