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
from tests.sessions import open_capture

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.py"))
MODES = ("reduce-overhead", "npugraph_ex")


@pytest.fixture(scope="module")
def sides(torchair_path: Any) -> Any:
    """TorchAir and npugraph_ex, loaded once for the module."""
    from fxlab.compat.bridge import open_torchair

    with open_torchair(torchair_path) as torchair, npugraph_ex_session(locate_npugraph_ex(torchair.report.path)) as npugraph_ex:
        yield torchair, npugraph_ex


def compare(sides: Any, path: Path, mode: str, plugins: list[Path] | None = None) -> list[tuple[int, list[str], Any]]:
    """(graph, differences, fxlab's result) of each graph of the model at ``path``."""
    torchair, npugraph_ex = sides
    out = []
    with open_capture(path, plugins=plugins or (), stages=("functional",), verify=False, mode=mode) as captured:
        for graph in captured.graphs:
            functional = graph.modules["functional"]
            ours = aclgraph_graph(functional, captured.options, graph.index)
            theirs = run_torchair_aclgraph(functional, graph.index, torchair, captured.options, npugraph_ex)
            out.append((graph.index, graph_differences(ours.gm, theirs.fx_graph), ours))
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("example", EXAMPLES)
def test_torchairs_own_passes_give_fxlabs_graph(sides, example: str, mode: str) -> None:
    for index, differences, _ in compare(sides, ROOT / "examples" / f"{example}.py", mode):
        assert differences == [], f"{example} graph {index} ({mode}): TorchAir's graph differs:\n" + "\n".join(differences)


# Found by the property test: npugraph_ex's stream rule lets a select that a re-inplaced
# scatter left behind (no stream label yet) read memory written in place; TorchAir's does not.
WRITE_THEN_SCATTER = """
import torch
class Program(torch.nn.Module):
    def forward(self, x0, x1, x2, x3):
        x2.add_(1.5)
        v1 = x0 + x0
        x2[0] = x3
        x2.add_(1.5)
        return (v1,)
model = Program()
example_inputs = (torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4))
"""


@pytest.mark.parametrize("mode", MODES)
def test_the_stream_rules_of_the_two_backends_differ_as_theirs_do(sides, tmp_path: Path, mode: str) -> None:
    path = tmp_path / "program.py"
    path.write_text(WRITE_THEN_SCATTER)
    ((_, differences, ours),) = compare(sides, path, mode)
    assert differences == []
    first_add = next(n for n in ours.gm.graph.nodes if n.name == "add")
    assert str(first_add.target) == ("aten.add_.Tensor" if mode == "npugraph_ex" else "aten.add.Tensor")
