"""The user's line of an FX node: the innermost user frame of its stack trace, cached in its meta."""
from __future__ import annotations

import os
import sysconfig

import torch
import torch.fx as fx

import fxlab.source_lines
from fxlab.source_lines import (
    LIBRARY, NO_FRAME, SOURCE_KEY, TORCH, USER, is_fxlab_file, kind, library_relative, node_source, parse_source, source_frame, source_frames,
)

TRACE = """  File "/lib/torch/nn/module.py", line 1700, in _call_impl
    return forward_call(*args, **kwargs)
  File "project/model.py", line 21, in forward
    y = x + 1
"""


def test_the_shown_frame_with_its_code() -> None:
    assert source_frame(TRACE) == ("project/model.py", 21, "y = x + 1")
    assert source_frame('  File "/m.py", line 3, in f') == ("/m.py", 3, None)
    assert source_frame("no frames here") == NO_FRAME
    assert source_frame('  File "/m.py", line three') == NO_FRAME


def test_a_folder_whose_name_holds_quotes_or_a_newline_is_read_whole(tmp_path) -> None:
    """Python writes a frame's file as it is; the model's line is still found (the model
    file in such a folder, traced end to end)."""
    assert source_frame('  File "/a"b/m.py", line 7, in f\n    y = 1\n') == ('/a"b/m.py', 7, "y = 1")
    assert source_frame('  File "/a\nb/m.py", line 7, in f\n    y = 1\n') == ("/a\nb/m.py", 7, "y = 1")
    folder = tmp_path / 'odd "name"\nhere'
    folder.mkdir()
    model = folder / "m.py"
    model.write_text("import torch\ndef model(x):\n    return x.sin() + 1\nexample_inputs = (torch.randn(2),)\n")
    import fxlab

    trace = fxlab.trace(str(model))
    ops = [op for op in trace.graphs[0].ir.ops if op.type in ("Sin", "Add")]
    assert [op.source for op in ops] == [f"{model}:3", f"{model}:3"]


def test_a_nodes_source_is_parsed_once_and_read_from_its_meta_after() -> None:
    graph = fx.Graph()
    node = graph.call_function(torch.relu, (graph.placeholder("x"),))
    assert node_source(node) is None  # no stack trace
    node.meta["stack_trace"] = TRACE
    assert parse_source(node) == node_source(node) == "project/model.py:21"
    node.meta[SOURCE_KEY] = "/cached.py:1"
    assert node_source(node) == "/cached.py:1" and parse_source(node) == "project/model.py:21"


TORCH_FILE = os.path.join(os.path.dirname(torch.__file__), "distributed", "_functional_collectives.py")
LIBRARY_FILE = os.path.join(sysconfig.get_paths()["purelib"], "transformers", "activations.py")


def _trace(*frames: tuple[str, int, str]) -> str:
    return "".join(f'  File "{file}", line {line}, in f\n    {code}\n        ^^^^\n' for file, line, code in frames)


def test_files_are_the_users_a_librarys_or_torchs():
    assert kind("project/model.py") == USER
    assert kind(LIBRARY_FILE) == LIBRARY and kind(os.path.join(sysconfig.get_paths()["stdlib"], "functools.py")) == LIBRARY
    assert kind(TORCH_FILE) == TORCH


def test_the_users_innermost_line_is_shown_and_the_librarys_frame_kept():
    stack = _trace(("project/model.py", 11, "y = fc.all_reduce(x)"), ("project/layers.py", 4, "return reduce(x)"), (TORCH_FILE, 179, "tensor = torch.ops._c10d_functional.all_reduce("))
    shown, innermost = source_frames(stack)
    assert (shown.file, shown.line, shown.code) == ("project/layers.py", 4, "return reduce(x)")
    assert innermost.location == f"{TORCH_FILE}:179"


def test_without_a_user_frame_a_librarys_line_beats_torchs():
    # a transformers model: its own line, not torch.nn.functional's
    stack = _trace((LIBRARY_FILE, 66, "return 0.5 * input"), (TORCH_FILE, 10, "return op(x)"))
    shown, innermost = source_frames(stack)
    assert shown.location == f"{LIBRARY_FILE}:66" and innermost.location == f"{TORCH_FILE}:10"


def test_a_users_innermost_frame_is_shown_alone():
    shown, innermost = source_frames(_trace(("project/model.py", 3, "return x + 1")))
    assert shown.location == "project/model.py:3" and innermost is None
    assert source_frames("no frames here") == (None, None)


def test_a_librarys_file_is_named_from_the_packages_folder_and_fxlabs_own_files_are_known() -> None:
    assert library_relative(LIBRARY_FILE) == "transformers/activations.py"
    assert library_relative(TORCH_FILE) == "torch/distributed/_functional_collectives.py"
    assert library_relative("project/model.py") == "project/model.py"
    assert is_fxlab_file(fxlab.source_lines.__file__) and not is_fxlab_file("project/model.py") and not is_fxlab_file(LIBRARY_FILE)
