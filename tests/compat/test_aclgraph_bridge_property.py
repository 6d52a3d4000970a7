"""On random programs of in-place ops (``tests/capture/programs.py``), in both aclgraph
modes: fxlab's aclgraph stage, built-in and with ``--converter torchair``, is the graph
TorchAir's own backend makes run end to end (npugraph_ex's for npugraph_ex), node for node
with the same capture calls (``tests/compat/end_to_end.py``).

A quarter of the profile's examples per mode (each program is compiled by fxlab, then by
TorchAir's backend): ``--hypothesis-profile thorough`` draws hundreds.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, note, settings

from fxlab.errors import FxlabError
from tests.capture.programs import Program, programs
from tests.compat.end_to_end import MODES, compare, sides

EXAMPLES = max(20, settings.default.max_examples // 4)


@pytest.fixture(scope="module")
def side(torchair_path: Any) -> Iterator[Any]:
    with sides(torchair_path) as loaded:
        yield loaded


def check_program(side: Any, program: Program, mode: str) -> None:
    source = program.source()
    note(source)
    with tempfile.TemporaryDirectory(prefix="fxlab-program-") as folder:
        path = Path(folder) / "program.py"
        path.write_text(source)
        try:
            comparison = compare(side, path, mode)
        except FxlabError as exc:
            event(f"refused: {type(exc).__name__}")
            return
    trace = comparison.trace
    assert all(g.error is None for g in trace.graphs), [g.error for g in trace.graphs]
    assert trace.check.ok, trace.check.verdict
    assert comparison.problems() == [], "\n".join(comparison.problems())
    check = trace.aclgraph_check
    if not trace.graphs:  # nothing compiled: nothing to compare
        event("no graph")
        return
    if check.ok:
        assert not check.not_run and check.compared_with, check.verdict
        event(f"{mode}: the same graph as TorchAir's, computing the model's values")
    else:
        # fxlab's graph is TorchAir's, so a mismatch can only be TorchAir's own, proven by its run.
        assert "fxlab internal error" not in check.verdict and "TorchAir fault, proven by its own run" in check.verdict, check.verdict
        event(f"{mode}: the same graph as TorchAir's, whose own run computes other values (TorchAir fault, proven)")


@pytest.mark.parametrize("mode", MODES)
def test_fxlabs_graph_is_torchairs_end_to_end_graph_on_random_programs(side: Any, mode: str) -> None:
    @settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(program=programs())
    def check(program: Program) -> None:
        check_program(side, program, mode)

    check()
