"""TorchAir's GE graph (max-autotune) end to end against the bridge: TorchAir's backend
entered as a user enters it (``torch.compile`` with ``torchair.get_npu_backend``, inputs on
the device as on an NPU machine), stopped where the graph would be handed to GE, gives the
GE graph TorchAir's own conversion makes from fxlab's ``functional`` graph, op for op
(names, types, inputs, attrs, tensor descs). ``test_bridge_examples.py`` compares that
conversion with fxlab's built-in one; together they hold the built-in GE graph to TorchAir's
end to end, up to the listed differences. Skipped without a TorchAir copy.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import torchair_session

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.py"))


@pytest.fixture(scope="module")
def torchair(torchair_path: Any) -> Iterator[Any]:
    yield from torchair_session(torchair_path)


def ops(ir: Any) -> list[tuple[Any, ...]]:
    """What two GE graphs must share, op by op (fxlab's provenance aside)."""
    return [
        (op.name, op.type, tuple(op.inputs), tuple(sorted((k, repr(v)) for k, v in op.attrs.items())), repr(op.input_desc), repr(op.output_desc))
        for op in ir.ops
    ]


@pytest.mark.parametrize("example", EXAMPLES)
def test_torchairs_end_to_end_ge_graph_is_its_conversion_of_fxlabs_functional_graph(torchair: Any, example: str) -> None:
    from fxlab.capture.compile_options import compile_options
    from fxlab.capture.request import TraceRequest
    from fxlab.compat.torchair_backend_run import run_torchair_backend
    from fxlab.ir.ge_proto import graph_from_graph_def
    from fxlab.session import CaptureSession
    from fxlab.session.torchair_side import TorchAirSide

    request = TraceRequest(ROOT / "examples" / f"{example}.py", stages=("functional",), verify=False, mode="max-autotune")
    with CaptureSession(request, torchair=TorchAirSide(torchair, "Ascend910B2")) as session:
        captured = session.capture()
        trace, loaded = captured.trace, captured.loaded
        assert loaded is not None and session.torchair is not None
        calls = [(loaded.args, loaded.kwargs), *loaded.more_inputs]
        run = run_torchair_backend(loaded.fn, calls, captured.options, torchair.package, dynamic=compile_options(loaded.module, example).dynamic)
        conversions = [session.torchair.convert(live.modules["functional"], f"graph_{live.index}", captured.options) for live in captured.graphs]
        if run.error is not None:  # TorchAir's own run stops where its conversion fails on a node: the bridge says so of that node
            failed = [r.message for c in conversions for r in c.nodes if r.message and r.status.value in ("unsupported", "failed")]
            reason = run.error.split(": ", 1)[1].split(". ")[0]  # "No AscendIR NpuAddCustom was found to be registered"
            assert any(reason in message for message in failed), (run.error, failed)
            return
        assert len(run.graphs) == len(trace.graphs)
        for graph, theirs, conversion in zip(trace.graphs, run.graphs, conversions):
            end_to_end = graph_from_graph_def(theirs.concrete.graph._proto, {}, strict=False)
            mine, its = ops(conversion.graph), ops(end_to_end)
            first = next((pair for pair in zip(its, mine) if pair[0] != pair[1]), None)
            assert its == mine, f"{example} graph {graph.index}: first differing op (end to end, bridge): {first}; {len(its)} vs {len(mine)} ops"
