"""Every model of examples/models/ on the aclgraph path, as ``fxlab trace --mode
reduce-overhead --verify`` traces it: the status, the aclgraph graph run on CPU against
the compiled run, and TorchAir's own passes (reduce-overhead) and npugraph_ex's own
(npugraph_ex) giving fxlab's graph node for node.

Skipped only when the ``models`` extra (transformers) is not installed, or, for the
comparison, when no TorchAir copy is found (CI installs and fetches both).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from collections.abc import Iterator

import pytest


pytest.importorskip("transformers", reason="the models extra is not installed (pip install fxlab[models])")

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"
OK = [("gpt2", None), ("bert", None), ("qwen2", None), ("mixtral_moe", None), ("t5", None), ("vit", None), ("resnet18", None), ("ascend_decoder_layer", None),
      ("llama_static_cache", None), ("llama_static_cache", "decode_step")]
IDS = [n if e is None else f"{n}-{e}" for n, e in OK]


def _capture(name: str, entry: str | None, mode: str, verify: bool) -> Any:
    from fxlab.capture import capture_trace, load_model
    from fxlab.capture.torchair_config import ACLGRAPH_STAGES
    from fxlab.compat.layer import compat_layer

    with compat_layer():
        loaded = load_model(MODELS / f"{name}.py", entry=entry)
        return capture_trace(loaded, stages=ACLGRAPH_STAGES, verify=verify, mode=mode)


@pytest.fixture(scope="module")
def sides(torchair_path: Any) -> Iterator[Any]:
    from fxlab.compat.bridge import open_torchair
    from fxlab.compat.npugraph_ex_loader import locate_npugraph_ex, npugraph_ex_session

    with open_torchair(torchair_path) as torchair, npugraph_ex_session(locate_npugraph_ex(torchair.report.path)) as npugraph_ex:
        yield torchair, npugraph_ex


@pytest.mark.parametrize("name,entry", OK, ids=IDS)
def test_traces_ok_in_reduce_overhead_mode(name: str, entry: str | None) -> None:
    trace = _capture(name, entry, "reduce-overhead", verify=True)
    assert trace.status == "ok", (trace.check, trace.aclgraph_check, [g.error for g in trace.graphs])
    check = trace.aclgraph_check
    assert check is not None and check.ok and not check.skipped and check.compared > 0
    assert all("aclgraph" in g.stages and g.capture_code for g in trace.graphs)
    assert trace.graphs[0].aclgraph_passes[0]["pass"] == "replace_stream_event_pass"


@pytest.mark.parametrize("mode", ["reduce-overhead", "npugraph_ex"])
@pytest.mark.parametrize("name,entry", OK, ids=IDS)
def test_torchairs_own_passes_give_fxlabs_graph(sides: Any, name: str, entry: str | None, mode: str) -> None:
    from fxlab.capture.aclgraph_compare import graph_differences
    from fxlab.compat.aclgraph_bridge import run_torchair_aclgraph
    from fxlab.compat.layer import compat_layer
    from fxlab.passes.aclgraph.pipeline import aclgraph_graph

    torchair, npugraph_ex = sides
    trace = _capture(name, entry, mode, verify=False)
    with compat_layer():
        for graph in trace.graphs:
            functional = graph.modules["functional"]
            ours = aclgraph_graph(functional, trace.options, graph.index)
            theirs = run_torchair_aclgraph(functional, graph.index, torchair, trace.options, npugraph_ex)
            differences = graph_differences(ours.gm, theirs.fx_graph)
            assert differences == [], f"{name} graph {graph.index} ({mode}):\n" + "\n".join(differences)
