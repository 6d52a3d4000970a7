"""fxlab.frames: a node's source is the user's line, even when a library made the op."""
from __future__ import annotations

import os
import sysconfig

import torch

from fxlab.frames import LIBRARY, TORCH, USER, kind, source_frames

TORCH_FILE = os.path.join(os.path.dirname(torch.__file__), "distributed", "_functional_collectives.py")
LIBRARY_FILE = os.path.join(sysconfig.get_paths()["purelib"], "transformers", "activations.py")


def _trace(*frames: tuple[str, int, str]) -> str:
    return "".join(f'  File "{file}", line {line}, in f\n    {code}\n        ^^^^\n' for file, line, code in frames)


def test_files_are_the_users_a_librarys_or_torchs():
    assert kind("/home/me/model.py") == USER
    assert kind(LIBRARY_FILE) == LIBRARY and kind(os.path.join(sysconfig.get_paths()["stdlib"], "functools.py")) == LIBRARY
    assert kind(TORCH_FILE) == TORCH


def test_the_users_innermost_line_is_shown_and_the_librarys_frame_kept():
    stack = _trace(("/home/me/model.py", 11, "y = fc.all_reduce(x)"), ("/home/me/layers.py", 4, "return reduce(x)"), (TORCH_FILE, 179, "tensor = torch.ops._c10d_functional.all_reduce("))
    shown, innermost = source_frames(stack)
    assert (shown.file, shown.line, shown.code) == ("/home/me/layers.py", 4, "return reduce(x)")
    assert innermost.location == f"{TORCH_FILE}:179"


def test_without_a_user_frame_a_librarys_line_beats_torchs():
    # a transformers model: its own line, not torch.nn.functional's
    stack = _trace((LIBRARY_FILE, 66, "return 0.5 * input"), (TORCH_FILE, 10, "return op(x)"))
    shown, innermost = source_frames(stack)
    assert shown.location == f"{LIBRARY_FILE}:66" and innermost.location == f"{TORCH_FILE}:10"


def test_a_users_innermost_frame_is_shown_alone():
    shown, innermost = source_frames(_trace(("/home/me/model.py", 3, "return x + 1")))
    assert shown.location == "/home/me/model.py:3" and innermost is None
    assert source_frames("no frames here") == (None, None)
