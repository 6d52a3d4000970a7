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

import pytest

from fxlab.passes.torchair_options import ACLGRAPH_STAGES
from tests.sessions import trace_of

pytest.importorskip("transformers", reason="the models extra is not installed (pip install fxlab[models])")

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"
OK = [("gpt2", None), ("bert", None), ("qwen2", None), ("mixtral_moe", None), ("t5", None), ("vit", None), ("resnet18", None), ("ascend_decoder_layer", None),
      ("llama_static_cache", None), ("llama_static_cache", "decode_step")]
IDS = [n if e is None else f"{n}-{e}" for n, e in OK]
NO_TORCHAIR = object()  # fxlab's passes alone (None is a torchair_path: the importable TorchAir)


def _capture(name: str, entry: str | None, mode: str, verify: bool, torchair_path: Any = NO_TORCHAIR) -> Any:
    """The trace ``fxlab trace --mode MODE`` makes; with ``torchair_path``, with
    ``--converter torchair`` (TorchAir's, or npugraph_ex's, own aclgraph passes beside fxlab's)."""
    converter = {} if torchair_path is NO_TORCHAIR else {"converter": "torchair", "torchair_path": torchair_path}
    return trace_of(MODELS / f"{name}.py", entry=entry, stages=ACLGRAPH_STAGES, verify=verify, mode=mode, **converter)


@pytest.mark.parametrize("name,entry", OK, ids=IDS)
def test_traces_ok_in_reduce_overhead_mode(name: str, entry: str | None) -> None:
    trace = _capture(name, entry, "reduce-overhead", verify=True)
    assert trace.status == "ok", (trace.check, trace.aclgraph_check, [g.error for g in trace.graphs])
    check = trace.aclgraph_check
    assert check is not None and check.ok and not check.skipped and check.compared > 0
    assert all("aclgraph" in g.stages and g.capture_code for g in trace.graphs)
    assert trace.graphs[0].pass_records("aclgraph")[0].name == "replace_stream_event_pass"


@pytest.mark.parametrize("mode", ["reduce-overhead", "npugraph_ex"])
@pytest.mark.parametrize("name,entry", OK, ids=IDS)
def test_torchairs_own_passes_give_fxlabs_graph(torchair_path: Any, name: str, entry: str | None, mode: str) -> None:
    trace = _capture(name, entry, mode, verify=False, torchair_path=torchair_path)
    assert trace.graphs
    for graph in trace.graphs:
        compared = graph.torchair_aclgraph
        assert compared is not None and compared["source"] == "torchair"
        assert compared["same"] and compared["differences"] == [], f"{name} graph {graph.index} ({mode}):\n" + "\n".join(compared["differences"])
