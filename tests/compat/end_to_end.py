"""The end-to-end TorchAir reference the aclgraph tests compare with (not a test module).

TorchAir's backend is entered as a user enters it (``fxlab.compat.torchair_backend_run``:
``torch.compile`` with ``torchair.get_npu_backend(compiler_config=config)``, or npugraph_ex's
backend), from its sources with its native parts stood in, stopped where it would capture
the ACL graph. Each model is captured once per mode with ``--converter torchair``'s
code (which also gives the graph TorchAir's passes make from fxlab's functional graph);
fxlab's built-in passes rebuild the ``aclgraph`` stage from the same functional graph.
All three must be TorchAir's end-to-end graph, node for node, with the same capture calls.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fxlab.capture.checks.torchair_reference import ReferenceRun, capture_differences, graph_differences

ROOT = Path(__file__).resolve().parents[2]
MODES = ("reduce-overhead", "npugraph_ex")


@dataclass
class Comparison:
    """One model in one mode: fxlab's trace, TorchAir's end-to-end run, and every
    difference found, per graph (empty lists: identical)."""

    trace: Any
    reference: ReferenceRun
    captured: Any = None  # the capture: the live graphs (``.graphs``) and the options it followed
    builtin: dict[int, list[str]] = field(default_factory=dict)
    bridge: dict[int, list[str]] = field(default_factory=dict)

    def problems(self) -> list[str]:
        found = [] if self.reference.error is None else [f"TorchAir's own run failed: {self.reference.error}"]
        if len(self.reference.graphs) != len(self.trace.graphs):
            found.append(f"{len(self.trace.graphs)} graph(s) traced, TorchAir compiled {len(self.reference.graphs)}")
        for side, table in (("built-in", self.builtin), ("--converter torchair", self.bridge)):
            found += [f"graph {index} ({side}): {line}" for index, lines in table.items() for line in lines]
        return found


@contextlib.contextmanager
def sides(torchair_path: Any) -> Iterator[Any]:
    """TorchAir and npugraph_ex from their sources, loaded once for a module's tests (as
    ``--converter torchair`` loads them for one capture)."""
    from fxlab.session.torchair_side import torchair_side

    with torchair_side(torchair_path, "Ascend910B2", "npugraph_ex", note=lambda _: None, warn=lambda _: None) as side:
        yield side


def compare(
    side: Any, path: Path, mode: str, entry: str | None = None, plugins: list[Path] | None = None, with_torch_npu: bool = False
) -> Comparison:
    """Capture the model at ``path`` once in ``mode`` with ``--converter torchair``, and
    compare it with TorchAir's own run (the one the aclgraph check made). ``with_torch_npu``
    imports torch_npu first (fxlab's stand-in), as transformers does in the process
    ``fxlab trace`` runs a model of it in."""
    from fxlab.capture.request import TraceRequest
    from fxlab.compat.torchair_state import fresh_compile_state
    from fxlab.passes.aclgraph.pipeline import aclgraph_graph
    from fxlab.passes.torchair_options import ACLGRAPH_STAGES
    from fxlab.session import CaptureSession

    package = side.npugraph_ex.get() if mode == "npugraph_ex" else side.torchair.package
    request = TraceRequest(path, entry=entry, plugins=tuple(plugins or ()), stages=ACLGRAPH_STAGES, mode=mode, converter="torchair")
    with CaptureSession(request, torchair=side) as session:
        if with_torch_npu:
            import torch_npu  # noqa: F401
        with fresh_compile_state(package):  # as in the process `fxlab trace` runs in
            captured = session.capture()
        assert captured.reference is not None, "the aclgraph check ran no TorchAir reference"
        comparison = Comparison(captured.trace, captured.reference.run, captured)
        for graph, live, theirs in zip(captured.trace.graphs, captured.graphs, comparison.reference.graphs):
            ours = aclgraph_graph(live.modules["functional"], captured.options, graph.index)
            comparison.builtin[graph.index] = differences(ours.gm, ours.capture_code, theirs)
            comparison.bridge[graph.index] = differences(live.modules["aclgraph"], graph.capture_code, theirs)
    return comparison


def differences(gm: Any, code: str | None, theirs: Any) -> list[str]:
    """How a graph and its capture code differ from TorchAir's end-to-end ones."""
    found = graph_differences(gm, theirs.fx_graph)
    return found + [f"capture code: {line}" for line in capture_differences(code or "", theirs.capture_code or "")]
