"""What a newcomer meets in the first hour: messages that name the cause and the fix,
help that reads as a user types, and numbers that agree wherever they are shown."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch

from fxlab.capture.pipeline import inference_note
from tests.cli.cli_runner import run_cli, run_main
from tests.conftest import EXAMPLES


def test_a_model_that_imports_a_missing_package_names_the_package_and_the_extra(write_model) -> None:
    code, _, error = run_cli("trace", str(write_model("import transformers_is_missing_here\n")))
    assert code == 2 and "imports transformers_is_missing_here, which is not installed" in error
    assert "pip install transformers_is_missing_here" in error and "imports cleanly" not in error


def test_a_missing_package_fxlab_has_an_extra_for_names_the_extra(write_model, monkeypatch) -> None:
    from fxlab.capture.loader import _import_failure

    failure = ModuleNotFoundError("No module named 'transformers'", name="transformers")
    message = str(_import_failure(failure, Path("model.py"), "model"))
    assert "pip install 'fxlab[models]'" in message and "imports transformers" in message


def test_a_model_without_inputs_is_told_it_has_no_inputs(write_model) -> None:
    code, _, error = run_cli("trace", str(write_model("import torch\nmodel = torch.nn.Linear(2, 2)\n")))
    assert code == 2 and "defines `model` but no inputs" in error and "defines no model" not in error


FORWARD_RAISES = """
import torch

class M(torch.nn.Module):
    def forward(self, x):
        y = x * 2
        raise ValueError("the shapes do not fit")

model = M()
example_inputs = (torch.randn(2),)
"""


def test_a_forward_that_raises_is_named_with_its_file_and_line(write_model) -> None:
    path = write_model(FORWARD_RAISES)
    code, _, error = run_cli("trace", str(path))
    assert code == 2 and f"(at {path}:7)" in error and "the shapes do not fit" in error  # bad input: it fails eagerly too


def test_out_under_a_file_says_a_file_is_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    code, _, error = run_cli("trace", str(EXAMPLES / "my_op.py"), "--out", str(tmp_path / "afile" / "sub"))
    assert code == 2 and f"{tmp_path / 'afile'} is a file" in error and "not writable" not in error


def test_the_train_mode_note_is_given_only_where_the_mode_changes_the_graph() -> None:
    linear = torch.nn.Linear(2, 2)  # train() mode, parameters requiring grad: nothing changes
    assert inference_note(linear) is None
    note = inference_note(torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout(0.1), torch.nn.BatchNorm1d(2)))
    assert note is not None and "BatchNorm1d, Dropout" in note and "model.eval()" in note
    assert inference_note(torch.nn.Sequential(torch.nn.Dropout(0.1)).eval()) is None
    assert inference_note(torch.nn.BatchNorm1d(2, track_running_stats=False)) is None  # both modes use the batch's statistics


def test_no_example_gets_the_train_mode_note_unless_it_has_dropout_or_batch_norm(example_trace) -> None:
    for name in ("my_inplace", "llama_decoder", "inplace_ops"):
        assert not any("train() mode" in note for note in example_trace(name).notes), name


@pytest.mark.parametrize(
    "command",
    [[], ["trace"], ["scopes"], ["diff"], ["run"], ["dumps"], ["ops"], ["ops", "check"], ["ops", "coverage"], ["ops", "list"], ["torchair", "fetch"]],
)
def test_help_shows_placeholders_a_user_types(command: list[str]) -> None:
    code, out, _ = run_cli(*command, "--help", width=200)
    assert code == 0
    options = [line for line in out.splitlines() if re.match(r"^│ +-", line)]
    assert any(re.match(r"^│ +--help +Show this message", line) for line in options), out  # a flag, with no type beside it
    for line in options:
        assert not re.search(r"<(bool|str|int|float|list\[Path\]|path)[^>]*>", line), line
    assert "{model}" not in out and "{op}" not in out


def test_the_scopes_example_with_a_core_limit_pastes_into_a_shell() -> None:
    _, out, _ = run_cli("scopes", "--help", width=200)
    assert "--aicore-num '20|40'" in out and "--aicore-num 20|40" not in out


def test_ctrl_c_says_what_out_holds_as_it_is(monkeypatch, tmp_path) -> None:
    from fxlab.cli import trace_command

    def interrupt(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(trace_command, "capture_request", interrupt)
    model = EXAMPLES / "my_inplace.py"
    code, _, error = run_main("trace", str(model))
    assert code == 130 and error.strip() == "error: interrupted (Ctrl-C). Run the command again to finish."
    code, _, error = run_main("trace", str(model), "--out", str(tmp_path / "new"))
    said = " ".join(error.split())
    assert code == 130 and "holds no trace: its manifest.json records that the run failed, and why" in said
    assert json.loads((tmp_path / "new" / "manifest.json").read_text())["status"] == "failed"


def test_every_help_names_one_cache_folder() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert "~/.cache/fxlab/torchair/" in readme
    for command in (["ops", "coverage"], ["torchair", "fetch"]):
        _, out, _ = run_cli(*command, "--help", width=300)
        text = " ".join(out.split())
        assert "~/.cache/fxlab" in text and ".cache/torchair/" not in text.replace("~/.cache/fxlab/torchair/", ""), command


def test_ops_list_lists_custom_ops_not_torchs_collectives() -> None:
    code, out, _ = run_cli("ops", "list", "--json")
    names = [op["op"] for op in json.loads(out)]
    assert code == 0 and "npu::my_inplace" in names
    assert not [n for n in names if n.split("::")[0] in ("_c10d_functional", "c10d_functional", "c10d", "npu_define", "air")]


def test_the_summary_counts_ops_and_the_viewer_says_nodes_and_ops(example_trace) -> None:
    from fxlab.viz.trace_views import json_summary

    trace = example_trace("my_inplace")
    stage = json_summary(trace)["graphs"][0]["stages"]["functional"]
    functional = trace.graphs[0].stages["functional"]
    assert stage == {**stage, "nodes": len(functional.nodes), "ops": len(functional.call_nodes())}
    code, out, _ = run_cli("trace", str(EXAMPLES / "my_inplace.py"), "--summary")
    header = next(line for line in out.splitlines() if "functional" in line)
    assert code == 0 and "ops" in out.splitlines()[out.splitlines().index(header) + 1]
    viewer = (Path(__file__).resolve().parents[2] / "fxlab" / "viz" / "viewer" / "viewer.js").read_text()
    assert "nodes (${ops} ops)" in viewer


def test_focus_says_which_stages_it_left_out(tmp_path: Path) -> None:
    code, _, error = run_cli("trace", str(EXAMPLES / "my_inplace.py"), "--summary", "--graphviz", "dot", "--focus", "mul", "--out", str(tmp_path / "t"))
    assert code == 0 and "--focus mul: drawn in 3 of 5 stage pictures; not in graph 0 dynamo, graph 0 ascend_ir" in " ".join(error.split())


def test_a_warm_ups_first_call_checks_are_marked_as_the_first_calls(example_trace) -> None:
    from tests.cli.cli_runner import run_cli as run

    code, out, _ = run("trace", str(EXAMPLES / "warmup_batches.py"), "--summary")
    assert code == 0 and "eager vs compiled (call 0): match" in out and "Ascend IR on CPU vs compiled (call 0): match" in out
    assert "\neager vs compiled: match" not in out
