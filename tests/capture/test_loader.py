from __future__ import annotations

import pytest
import torch

from fxlab.capture.loader import load_model, normalize_inputs
from fxlab.errors import ModelLoadError

SIMPLE = "import torch\nmodel = torch.nn.Linear(2, 2)\nexample_inputs = (torch.randn(1, 2),)\n"


def test_module_level_model_and_inputs(write_model):
    loaded = load_model(write_model(SIMPLE))
    assert isinstance(loaded.fn, torch.nn.Linear)
    assert loaded.args[0].shape == (1, 2) and loaded.kwargs == {} and loaded.entry == "model"


def test_get_model_and_inputs_with_args_kwargs(write_model):
    path = write_model(
        "import torch\n"
        "def f(x, *, y):\n    return x + y\n"
        "def get_model_and_inputs():\n    return f, ((torch.ones(2),), {'y': torch.ones(2)})\n"
    )
    loaded = load_model(path)
    assert loaded.entry == "get_model_and_inputs"
    assert torch.equal(loaded.fn(*loaded.args, **loaded.kwargs), torch.full((2,), 2.0))


def test_entry_names_another_function(write_model):
    path = write_model("import torch\ndef small():\n    return torch.nn.ReLU(), (torch.randn(3),)\n")
    assert isinstance(load_model(path, entry="small").fn, torch.nn.ReLU)


def test_model_folder_is_importable_and_plugins_load_first(write_model, tmp_path):
    (tmp_path / "helper_mod.py").write_text("VALUE = 3\n")
    plugin = tmp_path / "plugin.py"
    plugin.write_text("import builtins\nbuiltins._fxlab_test_plugin_ran = True\n")
    path = write_model(
        "import builtins, torch, helper_mod\n"
        "assert builtins._fxlab_test_plugin_ran\n"
        "model = torch.nn.Linear(helper_mod.VALUE, 1)\nexample_inputs = (torch.randn(1, 3),)\n"
    )
    assert load_model(path, plugins=[plugin]).fn.in_features == 3


def test_missing_file(tmp_path):
    with pytest.raises(ModelLoadError, match="does not exist"):
        load_model(tmp_path / "nope.py")


def test_syntax_error_names_file_and_line(write_model):
    path = write_model("import torch\n\nmodel = (\n")
    with pytest.raises(ModelLoadError, match=r"model\.py, line \d+, has a syntax error"):
        load_model(path)


def test_raising_at_import_names_file_and_line(write_model):
    path = write_model("import torch\n\nraise ValueError('boom')\n")
    with pytest.raises(ModelLoadError, match=r"raised ValueError: boom \(.*model\.py, line 3\)"):
        load_model(path)


def test_nothing_to_trace_says_what_was_looked_for(write_model):
    with pytest.raises(ModelLoadError, match=r"`model` and `example_inputs`.*get_model_and_inputs"):
        load_model(write_model("x = 1\n"))


def test_entry_missing(write_model):
    with pytest.raises(ModelLoadError, match="--entry nope: `nope` is not defined"):
        load_model(write_model(SIMPLE), entry="nope")


def test_entry_returning_wrong_kind(write_model):
    path = write_model("def get_model_and_inputs():\n    return 42\n")
    with pytest.raises(ModelLoadError, match="returned an int; it must return a pair"):
        load_model(path)


def test_inputs_as_serving_code_passes_them():
    # ints, floats, bools, lists of ints (actual_seq_lengths), None, nested pytrees of tensors
    t = torch.ones(2)
    inputs = (t, [3, 5], (1, 2), 0.5, True, None, {"k": [t, {"v": t}]}, "BSH")
    assert normalize_inputs(inputs, "m.py:model") == (inputs, {})
    assert normalize_inputs({"x": t, "lens": [4]}, "m.py:model") == ((), {"x": t, "lens": [4]})
    assert normalize_inputs(([t], {"lens": [4]}), "m.py:model") == ((t,), {"lens": [4]})


def test_inputs_fxlab_cannot_pass_or_compare_are_rejected_with_the_argument_named():
    with pytest.raises(ModelLoadError, match=r"but argument 1 is an object, keyword 'c' holds an object\. Pass the object's tensors"):
        normalize_inputs(((torch.ones(1), object()), {"c": [1, object()]}), "m.py:model")
    with pytest.raises(ModelLoadError, match="example inputs are a str"):
        normalize_inputs("x", "m.py:model")


def test_model_that_is_not_callable_is_bad_input(write_model):
    with pytest.raises(ModelLoadError, match=r"`model` is an int, not something fxlab can call") as info:
        load_model(write_model("model = 3\nexample_inputs = ()\n"))
    assert info.value.exit_code == 2


def test_entry_raising_system_exit_is_reported(write_model):
    path = write_model("def get_model_and_inputs():\n    raise SystemExit(5)\n")
    with pytest.raises(ModelLoadError, match=r"get_model_and_inputs\(\) raised SystemExit: 5 .*Fix get_model_and_inputs\(\)"):
        load_model(path)


def test_a_model_needing_a_process_group_is_told_to_run_as_ranks(write_model):
    path = write_model(
        "import torch\nimport torch.distributed as dist\n\n"
        "def get_model_and_inputs():\n    return torch.nn.Linear(2, dist.get_world_size()), (torch.randn(2),)\n"
    )
    with pytest.raises(ModelLoadError) as info:
        load_model(path)
    message = str(info.value)
    assert "get_model_and_inputs() raised ValueError: Default process group has not been initialized" in message
    assert message.endswith("run `fxlab trace --nproc N MODEL.py` (or each rank under torchrun).")
    assert "Fix get_model_and_inputs()" not in message
