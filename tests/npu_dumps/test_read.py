"""Finding and reading the files copied off an NPU machine: folders searched, names
recognised, OM JSON and fusion_result.json read, and every unreadable input a clear error
(exit 2) naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf import json_format, text_format

from fxlab.npu_dumps.names import dump_name, fx_node_of_tensor_name, inserted_by_name
from fxlab.npu_dumps.proto_text import DumpReadError
from fxlab.npu_dumps.read import read_dumps
from fxlab.npu_dumps.schemas import ge_model_def
from tests.npu_dumps.made_dumps import made_dumps


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return made_dumps(tmp_path_factory.mktemp("ge"))


def test_names():
    name = dump_name(Path("ge_proto_00000123_graph_7_PreRunAfterBuild.txt"))
    assert (name.format, name.index, name.graph_id, name.phase) == ("ge_proto", 123, 7, "PreRunAfterBuild")
    old = dump_name(Path("ge_proto_00026_afterUBMatch.txt"))
    assert (old.index, old.graph_id, old.phase) == (26, None, "afterUBMatch")
    assert dump_name(Path("ge_onnx_00001_graph_0_Build.pbtxt")).format == "ge_onnx"
    assert dump_name(Path("ge_proto_00000001_aclop_graph_2_Build.txt")).graph_id == 2
    torchair = dump_name(Path("dynamo_optimized_graph_3_rank_0_pid_99_ts_20250101.py"))
    assert (torchair.format, torchair.index) == ("torchair_py", 3)
    assert dump_name(Path("notes.txt")) is None
    assert [
        inserted_by_name(n, t)
        for n, t in [("trans_Cast_10", "Cast"), ("PlaceHolder3", "PlaceHolder"), ("End0", "End"), ("Cast_10", "Cast")]
    ] == [True, True, True, False]
    assert fx_node_of_tensor_name("add_1-aten.add.Tensor.OUTPUT.0") == "add_1"


def test_a_folder_is_searched_and_other_files_skipped(folder, tmp_path):
    mixed = tmp_path / "run"
    (mixed / "deep").mkdir(parents=True)
    for path in folder.iterdir():
        (mixed / "deep" / path.name).write_bytes(path.read_bytes())
    (mixed / "notes.txt").write_text("not a dump")
    dumps = read_dumps([mixed])
    assert [g.phase for g in dumps.graphs if g.parent is None][:4] == [
        "PreRunBegin",
        "PreRunAfterOptimizeOriginalGraph",
        "PreRunAfterOptimizeSubgraph",
        "super_kernel_sub_graph0",
    ]
    assert dumps.notes == ["1 file(s) in the folders given are not dumps fxlab reads and were skipped"]


@pytest.mark.parametrize(
    "name,content,message",
    [
        ("missing.txt", None, "does not exist"),
        ("notes.md", "hello", "not a dump fxlab reads"),
        ("ge_proto_00000001_graph_1_Build.txt", b"\xff\xfe\x00", "not UTF-8 text"),
        ("ge_proto_00000001_graph_1_Build.txt", 'graph {\n  op {\n    name: "a"\n', "line "),
        ("model.json", '{"graph": [', "not JSON"),
        ("model.json", '{"op": []}', "not an OM model as JSON"),
        ("fusion_result.json", '[{"graph_fusion": {}}]', "no 'session_and_graph_id'"),
        ("ge_proto_00000001_graph_1_Build.txt", "", "holds no graph"),
        ("ge_onnx_00000001_graph_1_Build.pbtxt", "", "holds no graph"),
        ("model.json", '{"graph": [{"name": "g", "op": {"name": "x"}}]}', "is not a list"),
        ("model.json", '{"graph": [{"name": "g", "op": [5]}]}', "an 'op' entry of graph 'g' is not an object"),
        ("model.json", '{"graph": [{"name": "g", "op": [{"name": "a", "input": 5}]}]}', "op 'a' of graph 'g' has 'input' that is not a list"),
        ("model.json", '{"graph": [{"name": "g", "op": [{"name": "a", "output_desc": 5}]}]}', "has 'output_desc' that is not a list"),
        ("model.json", '{"graph": [{"name": "g", "op": [{"name": "a", "attr": 5}]}]}', "has 'attr' that is not a list"),
        ("model.json", '{"graph": [{"name": "g", "op": [{"name": "a", "subgraph_name": 5}]}]}', "has 'subgraph_name' that is not a list"),
    ],
)
def test_bad_input_is_one_clear_error(tmp_path, name, content, message):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(DumpReadError) as err:
        read_dumps([path])
    assert message in str(err.value) and str(path) in str(err.value)
    assert err.value.exit_code == 2


def test_json_in_a_folder_that_is_no_om_model_is_skipped(folder, tmp_path):
    """The compiler's kernel JSON and fxlab's own report sit beside the dumps."""
    run = tmp_path / "run"
    (run / "kernel_meta").mkdir(parents=True)
    for path in folder.iterdir():
        (run / path.name).write_bytes(path.read_bytes())
    (run / "kernel_meta" / "te_softmaxv2_abc.json").write_text('{"binFileName": "te_softmaxv2_abc", "blockDim": 8}')
    (run / "dumps.json").write_text('{"graphs": []}')
    (run / "broken.json").write_text('{"graph": [')
    dumps = read_dumps([run])
    assert dumps.graphs and dumps.notes == ["3 file(s) in the folders given are not dumps fxlab reads and were skipped"]


def test_a_saved_trace_given_as_dumps_says_to_pass_it_with_trace(tmp_path):
    (tmp_path / "manifest.json").write_text("{}")
    with pytest.raises(DumpReadError, match=r"is a saved fxlab trace, not dumps from an NPU machine: pass it with --trace") as err:
        read_dumps([tmp_path])
    assert err.value.exit_code == 2


def test_values_of_an_unexpected_kind_are_read_as_written(tmp_path):
    path = tmp_path / "model.json"
    attr = [{"key": "_datadump_original_op_names", "value": {"s": "add_1"}}]
    path.write_text(json.dumps({"graph": [{"name": "g", "op": [{"name": "x", "type": "Add", "attr": attr, "output_desc": [{"attr": "zz"}]}]}]}))
    (op,) = read_dumps([path]).graphs[0].ops
    assert (op.originals, op.inserted, [o.origin_name for o in op.outputs]) == (["add_1"], False, [None])


@pytest.mark.parametrize(
    "key,value",
    [
        ("_datadump_original_op_names", {"i": 5}),
        ("_datadump_original_op_names", {"s": 5}),
        ("_datadump_original_op_names", {"list": {"i": [1, 2]}}),
        ("_datadump_original_op_types", {"list": {"s": ["Add", 3]}}),
        ("pass_name", {"f": 1.5}),
    ],
)
def test_names_of_another_kind_are_refused_not_read_as_names(tmp_path, key, value):
    """A number where GE writes op names would be a name that joins no FX node."""
    path = tmp_path / "model.json"
    attr = [{"key": "_datadump_original_op_names", "value": {"s": "add_1"}}, {"key": key, "value": value}]
    path.write_text(json.dumps({"graph": [{"name": "g", "op": [{"name": "x", "type": "Add", "attr": attr}]}]}))
    with pytest.raises(DumpReadError, match=f"{path}: op 'x' has {key} = .*, where GE writes a list of names") as err:
        read_dumps([path])
    assert err.value.exit_code == 2


def test_a_number_for_original_names_in_a_text_dump_is_refused(tmp_path):
    path = tmp_path / "ge_proto_00000001_graph_1_Build.txt"
    op = 'op {\n name: "x"\n type: "Add"\n attr {\n  key: "_datadump_original_op_names"\n  value {\n   i: 7\n  }\n }\n}\n'
    path.write_text(f'graph {{\n name: "g"\n {op}}}\n')
    with pytest.raises(DumpReadError, match="op 'x' has _datadump_original_op_names = 7, where GE writes a list of names"):
        read_dumps([path])


def test_an_empty_folder_says_what_is_read(tmp_path):
    with pytest.raises(DumpReadError, match="no dumps found"):
        read_dumps([tmp_path])


HOW_TO_DUMP_GRAPHS = (
    "set DUMP_GE_GRAPH=2 and DUMP_GRAPH_PATH=DIR on the NPU machine, run the model again and copy DIR's ge_proto_*.txt files"
)


@pytest.mark.parametrize(
    "content",
    [
        "",
        "[]\n",
        "{}\n",
        '{"session_and_graph_id_0_1": {}}\n',
        '{"session_and_graph_id": "0_1", "graph_fusion": {}, "ub_fusion": {}}\n{"session_and_graph_id": "0_2"}\n',
    ],
)
def test_a_fusion_result_that_records_no_pass_alone_says_it_was_read(tmp_path, content):
    """Not "no dumps found": the file was found and read, and it records nothing."""
    (tmp_path / "fusion_result.json").write_text(content)
    with pytest.raises(DumpReadError) as err:
        read_dumps([tmp_path])
    assert str(err.value) == (
        f"{tmp_path / 'fusion_result.json'} was read and records no fusion pass (GE's FE writes there, when the process exits, "
        "how often each graph and UB fusion pass matched: this run recorded none), and no GE graph dump was found in "
        f"{tmp_path}: fxlab reads GE's ge_proto_*.txt / ge_onnx_*.pbtxt phase dumps (DUMP_GE_GRAPH), OM models as JSON "
        "(atc --mode=1), TorchAir's graph dumps (dynamo_*.txt|pbtxt|py) and fusion_result.json. To see what GE did, "
        f"{HOW_TO_DUMP_GRAPHS}."
    )
    assert err.value.exit_code == 2


def test_what_fusion_result_json_records_is_said_beside_what_else_was_read(folder, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    for path in folder.iterdir():
        (run / path.name).write_bytes(path.read_bytes())
    (run / "fusion_result.json").write_text("[]\n")
    dumps = read_dumps([run])
    assert (dumps.fusion_results, dumps.notes) == ([], [f"{run / 'fusion_result.json'} was read and records no fusion pass"])
    only = tmp_path / "only"
    only.mkdir()
    counts = {"graph_fusion": {"MatMulBiasAddFusionPass": {"match_times": "2", "effect_times": "2"}}}
    (only / "fusion_result.json").write_text(json.dumps({"session_and_graph_id_0_1": counts}))
    assert read_dumps([only]).notes == [
        f"no GE graph dump in {only}: only fusion_result.json's pass counts are shown; to see the graphs, {HOW_TO_DUMP_GRAPHS}"
    ]


def _om_json(model_text: str) -> dict:
    """The ModelDef as atc --mode=1 writes it: protobuf JSON, maps as key/value lists,
    bytes as text."""
    model = text_format.Parse(model_text, ge_model_def()())
    data = json_format.MessageToDict(model, preserving_proto_field_name=True)

    def convert(value):
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if key == "attr" and isinstance(item, dict):
                    out[key] = [{"key": k, "value": convert(v)} for k, v in item.items()]
                elif key == "s":
                    out[key] = [_text(v) for v in item] if isinstance(item, list) else _text(item)
                else:
                    out[key] = convert(item)
            return out
        return [convert(v) for v in value] if isinstance(value, list) else value

    return convert(data)


def _text(b64: str) -> str:
    import base64

    return base64.b64decode(b64).decode()


def test_om_json_reads_as_the_same_ops_as_the_text_dump(folder, tmp_path):
    text_path = folder / "ge_proto_00000007_graph_1_AfterSkGraph.txt"
    om = tmp_path / "model.json"
    om.write_text(json.dumps(_om_json(text_path.read_text())))
    from_json = read_dumps([om]).graphs[0]
    from_text = read_dumps([text_path]).graphs[0]
    assert (from_json.format, from_json.phase) == ("om_json", "om")
    assert [op.to_json() for op in from_json.ops] == [op.to_json() for op in from_text.ops]


def test_fusion_result_in_both_shapes(tmp_path):
    keyed = tmp_path / "fusion_result.json"
    keyed.write_text(
        json.dumps(
            {
                "session_and_graph_id_0_1": {
                    "graph_fusion": {"MatMulBiasAddFusionPass": {"match_times": "2", "effect_times": "2"}},
                    "ub_fusion": {"TbeEltwiseFusionPass": {"match_times": "1", "effect_times": "0"}},
                }
            }
        )
    )
    appended = tmp_path / "fusion_result_appended.json"
    one = {"session_and_graph_id": "0_2", "graph_fusion": {"ConvBatchnormFusionPass": {"match_times": "3", "effect_times": "1"}}}
    appended.write_text(json.dumps(one, indent=4) + json.dumps([dict(one, session_and_graph_id="1_3")], indent=4))
    results = read_dumps([keyed, appended]).fusion_results
    assert [(r.session, r.graph_id, [p.to_json() for p in r.passes]) for r in results] == [
        (
            "0",
            1,
            [
                {"name": "MatMulBiasAddFusionPass", "kind": "graph_fusion", "match_times": 2, "effect_times": 2},
                {"name": "TbeEltwiseFusionPass", "kind": "ub_fusion", "match_times": 1, "effect_times": 0},
            ],
        ),
        ("0", 2, [{"name": "ConvBatchnormFusionPass", "kind": "graph_fusion", "match_times": 3, "effect_times": 1}]),
        ("1", 3, [{"name": "ConvBatchnormFusionPass", "kind": "graph_fusion", "match_times": 3, "effect_times": 1}]),
    ]


def test_a_file_given_twice_is_read_once(folder):
    first = sorted(folder.glob("ge_proto_*PreRunBegin.txt"))[0]
    once, again = read_dumps([folder]), read_dumps([folder, folder, first])
    assert [(g.file, g.phase) for g in again.graphs] == [(g.file, g.phase) for g in once.graphs]


def test_the_dumps_of_two_runs_are_refused_naming_the_phase_dumped_twice(folder, tmp_path):
    other = tmp_path / "run_2"
    other.mkdir()
    first = sorted(folder.glob("ge_proto_*PreRunBegin.txt"))[0]
    (other / first.name).write_bytes(first.read_bytes())
    with pytest.raises(DumpReadError, match=r"graph 1's phase PreRunBegin is dumped twice, in .* and in .*: the dumps are of two runs") as err:
        read_dumps([folder, other])
    assert err.value.exit_code == 2


READABLE = 'graph("g"):\n  %input_0 : [#users=1] = Node[type=Data] (attrs = {index: 0})\n'


def test_ge_readable_dumps_are_named_with_the_setting_that_dumps_what_is_read(folder, tmp_path):
    alone = tmp_path / "readable"
    alone.mkdir()
    (alone / "ge_readable_00000003_graph_1_Build.txt").write_text(READABLE)
    with pytest.raises(DumpReadError) as err:
        read_dumps([alone])
    assert "It holds 1 ge_readable_*.txt file(s): GE's readable format (DUMP_GRAPH_FORMAT=readable) is not read" in str(err.value)
    with pytest.raises(DumpReadError, match=r"is a ge_readable_\*\.txt dump: .*DUMP_GRAPH_FORMAT=ge_proto"):
        read_dumps([alone / "ge_readable_00000003_graph_1_Build.txt"])  # given by name: not sniffed as TorchAir's text
    (folder / "ge_readable_00000003_graph_1_Build.txt").write_text(READABLE)
    try:
        dumps = read_dumps([folder])  # beside GE's protobuf text: read the rest, say what was skipped
    finally:
        (folder / "ge_readable_00000003_graph_1_Build.txt").unlink()
    assert dumps.graphs and any(note.startswith("1 ge_readable_*.txt file(s) skipped: ") for note in dumps.notes)


def test_a_dump_number_twice_is_a_copy_or_another_run(folder, tmp_path):
    copied = tmp_path / "copied"
    copied.mkdir()
    first = sorted(p for p in folder.iterdir() if p.name.startswith("ge_proto_"))[0]
    (copied / first.name).write_bytes(first.read_bytes())
    (copied / first.name.replace(".txt", " (1).txt")).write_bytes(first.read_bytes())  # as a file manager copies it
    with pytest.raises(DumpReadError, match=r"are both GE's dump number \d+, which GE writes once in a run: one is a copy"):
        read_dumps([copied])


def test_a_byte_order_mark_a_pipe_and_a_broken_link_are_each_handled(folder, tmp_path):
    import os

    marked = tmp_path / "marked"
    marked.mkdir()
    first = sorted(p for p in folder.iterdir() if p.name.startswith("ge_proto_"))[0]
    (marked / first.name).write_bytes(b"\xef\xbb\xbf" + first.read_bytes())  # saved by an editor that marks UTF-8
    (marked / "ge_proto_00000099_graph_9_Build.txt").symlink_to(tmp_path / "gone.txt")
    dumps = read_dumps([marked])
    assert len([g for g in dumps.graphs if g.parent is None]) == 1
    assert f"{marked / 'ge_proto_00000099_graph_9_Build.txt'} is a link to {tmp_path / 'gone.txt'}, which does not exist: not read" in dumps.notes
    pipe = tmp_path / "ge_proto_00000001_graph_1_Build.txt"
    os.mkfifo(pipe)
    with pytest.raises(DumpReadError, match="is not a regular file"):
        read_dumps([pipe])  # never waits for a writer
