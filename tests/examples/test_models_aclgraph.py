"""Every model of examples/models/ on the aclgraph path, as ``fxlab trace --mode
reduce-overhead`` (or ``npugraph_ex``) traces it: the status, the aclgraph graph run on CPU
against the compiled run, and the graph and capture calls TorchAir's own backend
(npugraph_ex's) makes run end to end on the model (``tests/compat/end_to_end.py``), which
fxlab's built-in passes and ``--converter torchair`` must both give. One capture per model
and mode.

Skipped only when the ``models`` extra (transformers) is not installed, or when no TorchAir
copy is found (CI installs and fetches both).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers", reason="the models extra is not installed (pip install fxlab[models])")

from tests.compat.end_to_end import MODES, compare, sides  # noqa: E402

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"
OK = sorted(
    [(p.stem, None) for p in MODELS.glob("*.py")] + [("llama_static_cache", "decode_step")],
    key=lambda found: (found[0], found[1] or ""),
)
IDS = [n if e is None else f"{n}-{e}" for n, e in OK]


@pytest.fixture(scope="module")
def side(torchair_path: Any) -> Iterator[Any]:
    with sides(torchair_path) as loaded:
        yield loaded


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name,entry", OK, ids=IDS)
def test_every_model_gives_torchairs_end_to_end_graph_and_traces_ok(side: Any, name: str, entry: str | None, mode: str) -> None:
    comparison = compare(side, MODELS / f"{name}.py", mode, entry=entry, with_torch_npu=True)
    assert comparison.problems() == [], f"{name} ({mode}):\n" + "\n".join(comparison.problems())
    trace = comparison.trace
    assert trace.status == "ok", (trace.check, trace.aclgraph_check, [g.error for g in trace.graphs])
    check = trace.aclgraph_check
    assert check is not None and check.ok and not check.skipped and check.compared > 0
    assert all("aclgraph" in g.stages and g.capture_code for g in trace.graphs)
    assert trace.graphs[0].pass_records("aclgraph")[0].name == "replace_stream_event_pass"
