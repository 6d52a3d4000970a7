"""Large protobuf text read in batches gives the message one parse gives, says how far it
is, and a bad or cut-short file is an error naming the file and the line."""

from __future__ import annotations

import pytest
from google.protobuf import text_format

from fxlab.npu_dumps import proto_text
from fxlab.npu_dumps.proto_text import DumpReadError, TextReader, read_text
from fxlab.npu_dumps.schemas import ge_model_def
from tests.npu_dumps.made_dumps import made_dumps


@pytest.fixture(scope="module")
def dump_text(tmp_path_factory):
    folder = made_dumps(tmp_path_factory.mktemp("ge"))
    return (folder / "ge_proto_00000000_graph_1_PreRunBegin.txt").read_text()


def test_batches_give_the_message_of_one_parse_and_report_progress(dump_text, monkeypatch):
    monkeypatch.setattr(proto_text, "BATCH_CHARS", 500)  # many batches of a few ops each
    seen = []
    reader = TextReader("dump.txt", dump_text, lambda label, done, total: seen.append((label, done, total)))
    batched = read_text(reader, ge_model_def(), lambda r, m: r.read_model(m))
    whole = text_format.Parse(dump_text, ge_model_def()())
    assert batched == whole
    assert len(seen) > 5 and [d for _, d, _ in seen] == sorted(d for _, d, _ in seen)
    assert seen[-1] == ("dump.txt", len(dump_text), len(dump_text))


def test_a_cut_short_file_names_the_file_and_the_line(dump_text, monkeypatch):
    monkeypatch.setattr(proto_text, "BATCH_CHARS", 500)
    lines = dump_text.split("\n")
    cut = "\n".join(lines[: len(lines) // 2])  # ends inside an op
    reader = TextReader("cut.txt", cut)
    with pytest.raises(DumpReadError) as err:
        read_text(reader, ge_model_def(), lambda r, m: r.read_model(m))
    message = str(err.value)
    assert message.startswith("cut.txt, line ") and "cut short" in message
    assert err.value.exit_code == 2


def test_a_wrong_field_is_reported_at_its_line(dump_text):
    lines = dump_text.split("\n")
    lines[20] = "  no_such_field: 3"
    reader = TextReader("bad.txt", "\n".join(lines))
    with pytest.raises(DumpReadError, match=r"^bad\.txt, line 21: .*no_such_field") as err:
        read_text(reader, ge_model_def(), lambda r, m: r.read_model(m))
    # a well-formed file of a newer schema is not said to be cut short
    assert "fxlab's copy of GE's dump schema does not have" in str(err.value) and "cut short" not in str(err.value)


def test_a_value_of_a_newer_schema_is_said_to_be_one_not_a_cut_short_file():
    text = 'graph {\n  name: "g"\n  op {\n    name: "a"\n    type: "Add"\n    output_desc {\n      dtype: DT_FUTURE\n    }\n  }\n}\n'
    with pytest.raises(DumpReadError) as err:
        read_text(TextReader("g.txt", text), ge_model_def(), lambda r, m: r.read_model(m))
    message = str(err.value)
    assert message.startswith("g.txt, line 7: ") and "DT_FUTURE" in message and "newer CANN" in message and "cut short" not in message


def test_ge_attr_groups_are_skipped_other_unknown_fields_are_not():
    text = 'graph {\n  name: "g"\n  op {\n    name: "a"\n    type: "Add"\n    attr_groups {\n      x: 1\n    }\n  }\n}\n'
    model = read_text(TextReader("g.txt", text), ge_model_def(), lambda r, m: r.read_model(m))
    assert [op.name for op in model.graph[0].op] == ["a"]
    with pytest.raises(DumpReadError, match=r"line 6: .*no field named \"attr_group\""):
        read_text(TextReader("g.txt", text.replace("attr_groups {", "attr_group {")), ge_model_def(), lambda r, m: r.read_model(m))
