"""The viewer's data: per stage, nodes and inputs in graph order, the module groups with
the first folding, and the links between stages (diff pairing, provenance)."""
from __future__ import annotations

from fxlab.capture.serialize import load_trace
from fxlab.viz.viewer_data import GROUP_FIELDS, NODE_FIELDS, viewer_data
from tests.conftest import ROOT

DECODER = ROOT / "tests" / "data" / "golden" / "llama_decoder"
G = {name: i for i, name in enumerate(GROUP_FIELDS)}
N = {name: i for i, name in enumerate(NODE_FIELDS)}


def test_decoder_stages_groups_and_links() -> None:
    trace = load_trace(DECODER)
    graph = trace.graphs[0]
    (data,) = viewer_data(trace)["graphs"]
    stages = {s["name"]: s for s in data["stages"]}
    assert list(stages) == ["dynamo", "aten", "functional", "pre_ge", "ascend_ir"]
    functional = stages["functional"]
    assert [n[N["name"]] for n in functional["nodes"]] == [r.name for r in graph.stages["functional"].nodes]
    layers = {row[G["name"]]: row for row in functional["groups"] if row[G["parent"]] == 0 and row[G["name"]].startswith("layers.")}
    # layer 0 opens at first; layer 1 is the repeat box's only member; both hold 108 nodes
    assert layers["layers.0"][G["open"]] == 1 and layers["layers.0"][G["repeat"]] == -1
    assert layers["layers.1"][G["open"]] == 0 and layers["layers.1"][G["repeat"]] == 0
    assert layers["layers.0"][G["size"]] == layers["layers.1"][G["size"]] == 108
    assert functional["groups"][0][G["size"]] == len(functional["nodes"])
    # every input is an earlier node of the stage
    assert all(all(j < i for j in inputs) for i, inputs in enumerate(functional["inputs"]))
    # an ATen node and the functional node it became; every GE op and its FX node
    assert ["aten", "mean", "functional", "mean"] in data["links"]
    ir_links = [link for link in data["links"] if link[2] == "ascend_ir"]
    assert {link[0] for link in ir_links} == {"pre_ge"}  # the stage the IR was converted from
    assert [link[3] for link in ir_links] == [op.name for op in graph.ir.ops if op.fx_node]
    assert data["diff"]["aten/copy_"] == ["functionalized: in-place aten.copy_.default became functional aten.copy.default"]
    assert data["diff"]["functional/slice_scatter"] == ["added: added aten.slice_scatter.default"]
