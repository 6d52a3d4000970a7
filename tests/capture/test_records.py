from __future__ import annotations

import json

import pytest
import torch
import torch.fx as fx

from fxlab.capture import readable
from fxlab.capture.records import cache_sources, stage_from_module
from fxlab.capture.serialize import node_from_json, stage_json_text
from fxlab.capture.trace import StageTrace

STACK = 'File "/m/model.py", line 3, in forward\n    h = x.add(1)\n  File "/m/model.py", line 7, in forward\n    y = self.blk(h)  # ok\n'


def _small_module() -> fx.GraphModule:
    """x -> add -> copy_ into a buffer input; every meta key the records read is set
    (the GE ops come with the module: GE_OPS)."""
    graph = fx.Graph()
    x = graph.placeholder("x")
    buf = graph.placeholder("buf")
    add = graph.create_node("call_function", torch.ops.aten.add.Tensor, (x, 1), {"alpha": 2}, name="add")
    copy = graph.create_node("call_function", torch.ops.aten.copy_.default, (buf, add), name="copy_")
    graph.output((add,))
    for node in (x, buf, add, copy):
        node.meta["val"] = torch.empty(2, 3)
    for node in (add, copy):
        node.meta["stack_trace"] = STACK
        node.meta["nn_module_stack"] = {"blk": ("L['self'].layers[0]", torch.nn.Linear)}
        node.meta["original_aten"] = node.target
    add.meta["from_node"] = [("orig_add", "add")]
    add.meta["fxlab.scopes"] = [{"index": 0, "enter": "scope_enter", "attrs": {"k": "v"}}]
    return fx.GraphModule(torch.nn.Module(), graph)


EXPECTED_NODES = [
    (
        '{"name": "x", "op": "placeholder", "target": "x", "args": "", "inputs": [], "outputs": [{"shape": [2, 3], "dtype": "float32", "stride": [3, 1]}], '
        '"provenance": {"file": null, "line": null, "code": null, "module_path": [], "from_node": [], "original_aten": null}, '
        '"mutates": [], "kind": "", "scopes": [], "ge_ops": []}'
    ),
    (
        '{"name": "buf", "op": "placeholder", "target": "buf", "args": "", "inputs": [], "outputs": [{"shape": [2, 3], "dtype": "float32", "stride": [3, 1]}], '
        '"provenance": {"file": null, "line": null, "code": null, "module_path": [], "from_node": [], "original_aten": null}, '
        '"mutates": [], "kind": "", "scopes": [], "ge_ops": []}'
    ),
    (
        '{"name": "add", "op": "call_function", "target": "aten.add.Tensor", "args": "x, 1, alpha=2", "inputs": ["x"], '
        '"outputs": [{"shape": [2, 3], "dtype": "float32", "stride": [3, 1]}], '
        '"provenance": {"file": "/m/model.py", "line": 7, "code": "y = self.blk(h)  # ok", "module_path": ["layers.0 (Linear)"], '
        '"from_node": ["orig_add"], "original_aten": "aten.add.Tensor"}, '
        '"mutates": [], "kind": "", "scopes": [{"index": 0, "enter": "scope_enter", "attrs": {"k": "v"}}], "ge_ops": []}'
    ),
    (
        '{"name": "copy_", "op": "call_function", "target": "aten.copy_.default", "args": "buf, add", "inputs": ["buf", "add"], '
        '"outputs": [{"shape": [2, 3], "dtype": "float32", "stride": [3, 1]}], '
        '"provenance": {"file": "/m/model.py", "line": 7, "code": "y = self.blk(h)  # ok", "module_path": ["layers.0 (Linear)"], '
        '"from_node": [], "original_aten": "aten.copy_.default"}, '
        '"mutates": ["self"], "kind": "copy_epilogue", "scopes": [], "ge_ops": ["Assign_0"]}'
    ),
    (
        '{"name": "output", "op": "output", "target": "output", "args": "[add]", "inputs": ["add"], "outputs": [], '
        '"provenance": {"file": null, "line": null, "code": null, "module_path": [], "from_node": [], "original_aten": null}, '
        '"mutates": [], "kind": "", "scopes": [], "ge_ops": []}'
    ),
]


GE_OPS = {"copy_": ["Assign_0"]}


def test_stage_json_of_a_small_graph_is_exactly_the_saved_format():
    gm = _small_module()
    stage = stage_from_module("functional", gm, GE_OPS)
    head = json.dumps({"name": "functional", "code": stage.code})[:-1]
    assert stage_json_text(stage) == head + ', "nodes": [\n  ' + ",\n  ".join(EXPECTED_NODES) + "\n]}\n"
    assert [n.meta["fxlab.source"] for n in gm.graph.nodes] == [None, None, "/m/model.py:7", "/m/model.py:7", None]


def test_cache_sources_stores_what_the_records_store():
    gm = _small_module()
    cache_sources(gm)
    assert [n.meta["fxlab.source"] for n in gm.graph.nodes] == [None, None, "/m/model.py:7", "/m/model.py:7", None]


@pytest.mark.parametrize("example", ["my_inplace", "llama_decoder"])
def test_cache_sources_matches_the_records_on_the_examples(example_capture, example):
    for graph in example_capture(example).graphs:
        gm = graph.modules["functional"]
        stage_from_module("functional", gm)
        recorded = [n.meta["fxlab.source"] for n in gm.graph.nodes]
        for node in gm.graph.nodes:
            del node.meta["fxlab.source"]
        cache_sources(gm)
        assert [n.meta["fxlab.source"] for n in gm.graph.nodes] == recorded
        assert any(recorded)


def test_stage_json_text_loads_back_to_the_same_stage():
    stage = stage_from_module("functional", _small_module(), GE_OPS)
    assert stage.nodes[3].ge_ops == ["Assign_0"]
    data = json.loads(stage_json_text(stage))
    assert list(data) == ["name", "code", "nodes"] and (data["name"], data["code"]) == ("functional", stage.code)
    assert StageTrace(data["name"], data["code"], [node_from_json(n) for n in data["nodes"]]) == stage


def _uncached(name: str, gm: fx.GraphModule, ge_ops: dict[str, list[str]] | None = None) -> StageTrace:
    readable.clear_readable_cache()
    return stage_from_module(name, gm, ge_ops)


@pytest.mark.parametrize("example", ["inplace_ops", "my_inplace", "graph_break", "llama_decoder", "my_op"])
def test_cached_records_equal_fresh_ones_on_the_examples(example_capture, example):
    captured = example_capture(example)
    for graph, live in zip(captured.trace.graphs, captured.graphs):
        for name, gm in live.modules.items():
            ge_ops = graph.ir.ops_by_fx_node() if name in ("functional", "pre_ge") and graph.ir is not None else None
            fresh = _uncached(name, gm, ge_ops)
            assert fresh.code == readable._print_readable(gm)
            assert stage_from_module(name, gm, ge_ops) == fresh  # second call: code from the cache
            if name in graph.stages:
                assert graph.stages[name] == fresh


def _edits() -> list:
    def rename(gm: fx.GraphModule) -> None:
        next(n for n in gm.graph.nodes if n.op == "call_function").name = "renamed"

    def new_args(gm: fx.GraphModule) -> None:
        add = next(n for n in gm.graph.nodes if n.op == "call_function")
        add.args = (add.args[0], 5)

    def insert(gm: fx.GraphModule) -> None:
        add = next(n for n in gm.graph.nodes if n.op == "call_function")
        with gm.graph.inserting_after(add):
            neg = gm.graph.call_function(torch.ops.aten.neg.default, (add,))
        neg.meta["val"] = torch.empty(2, 3)

    def new_val(gm: fx.GraphModule) -> None:
        next(n for n in gm.graph.nodes if n.op == "call_function").meta["val"] = torch.empty(4, 3)

    def new_stack(gm: fx.GraphModule) -> None:
        next(n for n in gm.graph.nodes if n.op == "call_function").meta["stack_trace"] = STACK.replace("line 7", "line 9")

    return [rename, new_args, insert, new_val, new_stack]


@pytest.mark.parametrize("edit", _edits(), ids=lambda f: f.__name__)
def test_cached_code_follows_every_graph_edit(edit):
    gm = _small_module()
    before = stage_from_module("functional", gm).code
    edit(gm)
    after = stage_from_module("functional", gm)
    assert after.code != before
    assert after == _uncached("functional", gm)


def test_code_of_another_module_is_never_reused():
    a, b = _small_module(), _small_module()
    code_a = stage_from_module("functional", a).code
    next(n for n in b.graph.nodes if n.op == "call_function").name = "other"
    assert stage_from_module("functional", b).code != code_a
