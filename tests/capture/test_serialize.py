"""fxlab.capture.serialize: the one serializer of a trace. Saving, loading and saving
again gives the same bytes, and loading gives back an equal trace, for every example on
both paths, a warm-up and a dynamic trace; the manifest names every pass that ran."""
from __future__ import annotations

import json
import math
from pathlib import Path, PurePosixPath

import pytest

from fxlab.capture.serialize import (
    check_from_json,
    check_to_json,
    failed_manifest_text,
    json_text,
    load_trace,
    manifest,
    node_from_json,
    node_json_text,
    trace_files,
)
from fxlab.capture.trace import CheckResult, NodeRecord, Provenance, TensorMeta, Trace
from fxlab.cli.files import save_trace
from fxlab.errors import OutputError
from fxlab.passes.optimize_fx import optimize_fx_passes
from tests.passes.planned import planned_passes
from fxlab.saved_layout import MANIFEST
from fxlab.stage_names import GE_GRAPH_PASSES, PRE_GE
from tests.conftest import EXAMPLES

EXAMPLE_NAMES = sorted(p.stem for p in EXAMPLES.glob("*.py"))
ACLGRAPH_EXAMPLES = ("inplace_ops", "my_inplace", "superkernel_scopes", "multi_stream")
# Every example as `fxlab trace` traces it, the aclgraph examples in reduce-overhead mode,
# and a dynamic trace (warmup_batches, an example, is the warm-up).
CASES = (
    [(name, None, False) for name in EXAMPLE_NAMES]
    + [(name, "reduce-overhead", False) for name in ACLGRAPH_EXAMPLES]
    + [("my_inplace", None, True)]
)
GE_GRAPH_PASS_NAMES = ["optimize_sym_pack", "remove_dead_data", "ref_op_copy", "output_reuse", "explicit_order_for_side_effect_nodes"]


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _case_id(case: tuple[str, str | None, bool]) -> str:
    name, mode, dynamic = case
    return name + (f"-{mode}" if mode else "") + ("-dynamic" if dynamic else "")


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_save_load_save_gives_the_same_bytes_and_an_equal_trace(example_trace, tmp_path, case):
    name, mode, dynamic = case
    trace = example_trace(name, mode=mode, dynamic=dynamic)
    save_trace(trace, tmp_path / "first")
    loaded = load_trace(tmp_path / "first")
    assert loaded == trace
    save_trace(loaded, tmp_path / "second")
    first, second = _tree(tmp_path / "first"), _tree(tmp_path / "second")
    assert list(first) == list(second)
    assert [path for path in first if first[path] != second[path]] == []
    assert first == {path: data.encode() if isinstance(data, str) else data for path, data in trace_files(trace).items()}


def test_the_cases_cover_the_warm_up_and_dynamic_shapes(example_trace):
    warmup = example_trace("warmup_batches")
    assert len(warmup.calls) == 3 and [c.origin for c in warmup.calls] == ["given", "input set 1", "input set 2"]
    dynamic = example_trace("my_inplace", dynamic=True)
    assert dynamic.compile_options["dynamic"] is True
    symbolic = [m for g in dynamic.graphs for n in g.stages["functional"].nodes for m in n.outputs if any(isinstance(d, str) for d in m.shape)]
    assert symbolic, "a dynamic trace records symbolic sizes"


def test_the_saved_layout(example_trace, tmp_path):
    trace = example_trace("inplace_ops")
    save_trace(trace, tmp_path)
    names = sorted(p.name for p in (tmp_path / "graph_0").iterdir())
    for stage in ("dynamo", "aten", "functional", "pre_ge"):
        assert f"{stage}.py" in names and f"{stage}.json" in names
    assert {"ascend_ir.json", "ascend_ir.pb", "ascend_ir.pbtxt", "ascend_ir.py", "conversion_summary.csv", "conversion_summary.json"} <= set(names)
    assert (tmp_path / "graph_0" / "functional.py").read_text() == trace.graphs[0].stages["functional"].code
    assert (tmp_path / "graph_0" / "ascend_ir.py").read_text() == trace.graphs[0].ir_py
    data = json.loads((tmp_path / MANIFEST).read_text())
    assert data == manifest(trace) and data["status"] == trace.status
    (graph,) = data["graphs"]
    assert graph["stages"] == list(trace.graphs[0].stages) and graph["has_ascend_ir"] is True
    conversion = graph["conversion"]
    assert conversion["ops"] == len(trace.graphs[0].ir.ops) and conversion["partial"] is False
    assert conversion["host_outputs"] == conversion["not_converted"] == conversion["auto_converted"] == []  # always present
    assert [call["index"] for call in data["calls"]] == [0]  # one call is listed too
    assert "ir_summary" not in graph and "pre_ge_passes" not in graph and "aclgraph_passes" not in graph


def test_an_aclgraph_trace_saves_its_capture_code_and_no_ascend_ir(example_trace, tmp_path):
    trace = example_trace("my_inplace", mode="reduce-overhead")
    save_trace(trace, tmp_path)
    names = sorted(p.name for p in (tmp_path / "graph_0").iterdir())
    assert "aclgraph_capture.py" in names and "aclgraph.json" in names and not any(n.startswith("ascend_ir") for n in names)
    assert (tmp_path / "graph_0" / "aclgraph_capture.py").read_text() == trace.graphs[0].capture_code
    graph = json.loads((tmp_path / MANIFEST).read_text())["graphs"][0]
    assert graph["has_ascend_ir"] is False and graph["conversion"] is None and list(graph["passes"]) == ["aclgraph"]


def test_a_ge_mode_manifest_lists_the_ge_graph_passes(example_trace):
    for name in ("inplace_ops", "my_inplace", "graph_break"):
        for graph in manifest(example_trace(name))["graphs"]:
            assert [record["pass"] for record in graph["passes"][GE_GRAPH_PASSES]] == GE_GRAPH_PASS_NAMES
            assert list(graph["passes"]) == [PRE_GE, GE_GRAPH_PASSES]


def test_a_saved_trace_names_every_pass_that_ran(example_capture, tmp_path):
    captured = example_capture("user_passes")
    save_trace(captured.trace, tmp_path)
    (graph,) = json.loads((tmp_path / MANIFEST).read_text())["graphs"]
    pre_ge = [record["pass"] for record in graph["passes"][PRE_GE]]
    assert pre_ge == [p.name for p in planned_passes(captured.options)]
    assert [record["pass"] for record in graph["passes"][GE_GRAPH_PASSES]] == GE_GRAPH_PASS_NAMES
    users = [record for record in graph["passes"][PRE_GE] if record.get("origin") == "user"]
    assert users and all(record["pass"] in pre_ge for record in users)  # the user's passes among TorchAir's


def test_an_aclgraph_trace_names_every_pass_that_ran(example_capture):
    captured = example_capture("multi_stream", mode="reduce-overhead")
    (graph,) = manifest(captured.trace)["graphs"]
    names = [record["pass"] for record in graph["passes"]["aclgraph"]]
    fx_passes = [p.name for p in optimize_fx_passes(captured.options).passes]
    assert names[: len(fx_passes) + 2] == ["replace_stream_event_pass", *fx_passes, "valid_graph"]
    assert "apply_event_closure_with_multi_stream" in names and names[-1] == "resolve_default_stream_markers"


def test_two_saves_of_a_trace_write_the_same_files(example_trace):
    trace = example_trace("graph_break")
    assert trace_files(trace) == trace_files(trace)
    assert list(trace_files(trace))[-1] == MANIFEST  # written last: a folder with a manifest is whole
    assert {path.split("/")[0] for path in trace_files(trace)} == {"graph_0", "graph_1", MANIFEST}


def test_a_failed_run_manifest_never_loads_as_a_trace(tmp_path):
    (tmp_path / MANIFEST).write_text(failed_manifest_text("m.py", "boom"))
    assert json.loads((tmp_path / MANIFEST).read_text())["status"] == "failed"
    with pytest.raises(OutputError, match="failed run: boom"):
        load_trace(tmp_path)


@pytest.mark.parametrize(
    "content, said",
    [
        (None, r"holds no saved trace \(manifest.json is missing\)"),
        ("[1, 2]", "holds a JSON array, not the object `fxlab trace --out` writes"),
        ('{"ranks": [{}, {}]}', "holds a trace of 2 ranks: pass one rank's folder"),
        ("{not json", "is not a readable saved trace"),
    ],
)
def test_a_folder_that_is_no_trace_is_refused_with_the_fix(tmp_path, content, said):
    if content is not None:
        (tmp_path / MANIFEST).write_text(content)
    with pytest.raises(OutputError, match=said) as raised:
        load_trace(tmp_path)
    assert "fxlab trace" in str(raised.value) or "fxlab diff" in str(raised.value)


@pytest.mark.parametrize("graph", [{"index": "../../etc"}, {"index": 0, "stages": ["../x"]}])
def test_a_manifest_naming_paths_of_its_choosing_is_refused(tmp_path, graph):
    data = {"model": "m.py", "entry": "model", "fxlab_version": "0", "torch_version": "2", "graphs": [graph]}
    (tmp_path / MANIFEST).write_text(json.dumps(data))
    with pytest.raises(OutputError, match="is not a readable saved trace"):
        load_trace(tmp_path)


def test_json_files_are_strict():
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    text = json_text({"diff": math.nan, "hi": math.inf, "lo": -math.inf, "c": 1 + 2j})
    assert json.loads(text, parse_constant=refuse) == {"diff": "NaN", "hi": "Infinity", "lo": "-Infinity", "c": [1.0, 2.0]}


def test_check_approximations_and_notes_are_saved_only_when_there_are_some():
    note = "graph 0: GE's Gelu (1 op) is the tanh approximation of gelu(approximate='none'), the erf form: ..."
    plain, approximate = CheckResult(ok=True, compared=1), CheckResult(ok=True, compared=1, approximations=[note])
    plain_json, approximate_json = check_to_json(plain), check_to_json(approximate)
    assert plain_json is not None and approximate_json is not None
    assert "approximations" not in plain_json and "notes" not in plain_json and approximate_json["approximations"] == [note]
    assert check_from_json(check_to_json(approximate)) == approximate and check_from_json(check_to_json(plain)) == plain
    trace = Trace("m.py", "f", "0", "2", check=plain, ir_check=approximate)
    assert manifest(trace)["ir_check"]["approximations"] == [note] and manifest(trace)["aclgraph_check"] is None


def _reference_node_json(node: NodeRecord) -> str:
    """A node as ``json.dumps`` writes the record's fields (library_location only when set)."""
    prov = node.provenance
    provenance = {
        "file": prov.file,
        "line": prov.line,
        "code": prov.code,
        "module_path": prov.module_path,
        "from_node": prov.from_node,
        "original_aten": prov.original_aten,
        **({"library_location": prov.library_location} if prov.library_location else {}),
    }
    data = {
        "name": node.name,
        "op": node.op,
        "target": node.target,
        "args": node.args,
        "inputs": node.inputs,
        "outputs": [{"shape": m.shape, "dtype": m.dtype, "stride": m.stride} for m in node.outputs],
        "provenance": provenance,
        "mutates": node.mutates,
        "kind": node.kind,
        "scopes": node.scopes,
        "ge_ops": node.ge_ops,
    }
    return json.dumps(data, default=str)


@pytest.mark.parametrize("example", ["inplace_ops", "my_inplace", "graph_break", "llama_decoder"])
def test_node_json_text_is_json_dumps_of_the_node_and_loads_back(example_trace, example):
    nodes = [n for g in example_trace(example).graphs for s in g.stages.values() for n in s.nodes]
    assert nodes and all(node_json_text(n) == _reference_node_json(n) for n in nodes)
    assert all(node_from_json(json.loads(node_json_text(n))) == n for n in nodes)
    assert any(n.inputs for n in nodes)


class _Name(str):
    pass


def test_node_json_text_of_unusual_field_values_is_json_dumps_too():
    odd = [
        NodeRecord(name="n", op="call_function", target="t", args="a"),
        NodeRecord(
            name=_Name("ünï \"q\" \\ \n"),
            op="call_function",
            target="aten.x",
            args="",
            inputs=[_Name("x"), "y"],
            outputs=[TensorMeta(shape=[2, "s0", True, 1.5], dtype="float32", stride=None), TensorMeta(shape=[], dtype=None)],
            provenance=Provenance(file=PurePosixPath("/m.py"), line=True, code="x = 1  # é", module_path=("a", "b"), from_node=[1, "x"], original_aten=3),
            mutates=["self", _Name("out")],
            kind="inplace",
            scopes=[{"index": 0, "enter": "e", "attrs": {"k": "v"}}],
            ge_ops=[None],
        ),
        NodeRecord(name="o", op="output", target="output", args="", inputs=("n",), outputs=(TensorMeta(shape=(1, 2), dtype="i64", stride=(2, 1)),), provenance=Provenance(line=7)),
        NodeRecord(name="nan", op="call_function", target="t", args="", provenance=Provenance(line=math.nan)),
    ]
    for node in odd[:3]:
        assert node_json_text(node) == _reference_node_json(node)
    assert json.loads(node_json_text(odd[3]))["provenance"]["line"] == "NaN"  # strict JSON, never a bare NaN


def test_commands_to_paste_quote_the_paths_they_name(tmp_path):
    folder = tmp_path / "my traces $HOME"
    folder.mkdir()
    with pytest.raises(OutputError) as raised:
        load_trace(folder)
    assert f"`fxlab trace MODEL.py --out '{folder}'`" in str(raised.value)
    (folder / MANIFEST).write_text('{"ranks": [{}, {}]}')
    with pytest.raises(OutputError) as raised:
        load_trace(folder)
    assert f"`fxlab diff '{folder / 'rank_0'}' '{folder / 'rank_1'}'` compares two ranks" in str(raised.value)
    (folder / MANIFEST).write_text(failed_manifest_text("m.py", "boom."))
    with pytest.raises(OutputError, match=r"failed run: boom\. Run `fxlab trace` again\.$"):  # one full stop
        load_trace(folder)
