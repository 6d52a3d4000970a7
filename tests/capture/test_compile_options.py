"""How a model file asks for torch.compile's ``dynamic``, and ``--dynamic`` over it."""
from __future__ import annotations

import types

import pytest

from fxlab.capture.compile_options import CompileOptions, compile_options
from fxlab.errors import ModelLoadError


def _module(**attrs):
    return types.SimpleNamespace(**attrs)


def test_no_options_is_dynamos_default():
    assert compile_options(_module(), "m.py") == CompileOptions(dynamic=None, source="")
    assert CompileOptions().note is None


def test_the_model_files_dynamic_is_passed_and_said():
    options = compile_options(_module(compile_options={"dynamic": True}), "m.py")
    assert options == CompileOptions(True, "the model file's compile_options")
    assert options.note == "compiled with torch.compile(dynamic=True) (the model file's compile_options)"
    assert compile_options(_module(compile_options={"dynamic": False}), "m.py").dynamic is False


def test_the_flag_wins_over_the_file():
    assert compile_options(_module(compile_options={"dynamic": False}), "m.py", dynamic_flag=True) == CompileOptions(True, "--dynamic")


@pytest.mark.parametrize(
    "options, says",
    [
        ([("dynamic", True)], "make it a dict"),
        ({"dynamic": True, "mode": "max-autotune"}, "'mode', which fxlab does not pass to torch.compile"),
        ({"dynamic": "yes"}, "give True, False or None"),
    ],
)
def test_bad_options_say_what_to_fix(options, says):
    with pytest.raises(ModelLoadError, match=says):
        compile_options(_module(compile_options=options), "m.py")
