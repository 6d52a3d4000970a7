"""fxlab's aclgraph passes against TorchAir's own (reduce-overhead) and npugraph_ex's own
(npugraph_ex), run from their sources on CPU: the same graph, node for node (names, ops,
targets, arguments), on every example, and with a user's pattern and passes.

Each example is captured once, as ``fxlab trace`` captures it; the functional graph goes
through fxlab's passes and through TorchAir's ``_optimize_fx`` +
``optimize_graph_without_runtime``. Skipped without a TorchAir copy (CI fetches one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fxlab.capture.aclgraph_compare import graph_differences
from fxlab.compat.aclgraph_bridge import run_torchair_aclgraph
from fxlab.compat.npugraph_ex_loader import locate_npugraph_ex, npugraph_ex_session
from fxlab.passes.aclgraph.pipeline import aclgraph_graph
from tests.conftest import torchair_path_or_skip

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.py"))
MODES = ("reduce-overhead", "npugraph_ex")


@pytest.fixture(scope="module")
def sides() -> Any:
    """TorchAir and npugraph_ex, loaded once for the module."""
    from fxlab.compat.bridge import open_torchair

    with open_torchair(torchair_path_or_skip()) as torchair, npugraph_ex_session(locate_npugraph_ex(torchair.report.path)) as npugraph_ex:
        yield torchair, npugraph_ex


def compare(sides: Any, path: Path, mode: str, plugins: list[Path] | None = None) -> list[tuple[int, list[str], Any]]:
    """(graph, differences, fxlab's result) of each graph of the model at ``path``."""
    from fxlab.capture import capture_trace, load_model
    from fxlab.compat.layer import compat_layer

    torchair, npugraph_ex = sides
    out = []
    with compat_layer():
        trace = capture_trace(load_model(path, plugins=plugins or []), stages=("functional",), verify=False, mode=mode)
        for graph in trace.graphs:
            functional = graph.modules["functional"]
            ours = aclgraph_graph(functional, trace.options, graph.index)
            theirs = run_torchair_aclgraph(functional, graph.index, torchair, trace.options, npugraph_ex)
            out.append((graph.index, graph_differences(ours.gm, theirs.fx_graph), ours))
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("example", EXAMPLES)
def test_torchairs_own_passes_give_fxlabs_graph(sides, example: str, mode: str) -> None:
    for index, differences, _ in compare(sides, ROOT / "examples" / f"{example}.py", mode):
        assert differences == [], f"{example} graph {index} ({mode}): TorchAir's graph differs:\n" + "\n".join(differences)
