"""The stand-ins offer every public name of TorchAir 2.13, npugraph_ex and torch_npu's
``torch_npu`` / ``torch_npu.npu`` (the list fxlab ships, made from the torch_npu wheel,
and checked against a fetched TorchAir); a name fxlab lacks is said to be fxlab's gap."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from fxlab.capture.loader import load_model
from fxlab.compat.layer import compat_layer
from fxlab.compat.public_names import API_MODULES, StandinGap, missing_from, names_of, public_names, scan, shipped
from fxlab.errors import ModelLoadError


def test_every_public_name_of_the_real_packages_is_in_the_stand_ins() -> None:
    assert set(API_MODULES) <= set(shipped()["names"])  # the shipped list covers every API module
    with compat_layer():
        missing = {module: missing_from(importlib.import_module(module), names_of(module)) for module in API_MODULES}
    assert {module: names for module, names in missing.items() if names} == {}


def test_the_shipped_lists_are_torchairs_and_npugraph_exs_own(torchair_path: Path) -> None:
    roots = {"torchair": torchair_path, "npugraph_ex": torchair_path.parent / "npugraph_ex"}
    fresh = scan(roots)
    modules = [m for m in API_MODULES if m.split(".")[0] in roots]
    for package in roots:
        assert fresh["modules"][package] == shipped()["modules"][package]
    assert {m: fresh["names"][m] for m in modules} == {m: names_of(m) for m in modules}
    with compat_layer():  # and the stand-ins offer every name the fetched sources have
        assert {m: missing_from(importlib.import_module(m), fresh["names"][m]) for m in modules} == dict.fromkeys(modules, [])


def test_the_rule_for_a_public_name() -> None:
    source = (
        "import torch\nimport pkg.sub\nfrom . import attr\nfrom pkg.impl import helper\n"
        "def f(): pass\nclass C: pass\n_hidden = 1\nVALUE = 2\ntry:\n    OPTIONAL = 3\nexcept ImportError:\n    OPTIONAL = None\n"
    )
    assert public_names(source, "pkg") == ["C", "OPTIONAL", "VALUE", "attr", "f", "sub"]
    assert public_names("__all__ = ['f']\ndef f(): pass\ndef g(): pass\nfrom . import attr\n", "pkg") == ["attr", "f"]


def test_torchair_under_torch_npu_dynamo_is_the_same_package() -> None:
    with compat_layer():
        import torchair
        from torch_npu.dynamo import torchair as nested
        from torch_npu.dynamo.torchair import scope

        import torch_npu.dynamo.torchair.ops as ops

        assert nested is torchair and scope is torchair.scope and ops.wait is torchair.ops.wait


def test_a_module_torchair_has_and_the_stand_in_lacks_is_fxlabs_gap() -> None:
    with compat_layer():
        with pytest.raises(StandinGap) as info:
            import torchair._contrib.custom_torch_ops  # noqa: F401
        with pytest.raises(ModuleNotFoundError) as unknown:
            import torchair.no_such_module  # noqa: F401
        with pytest.raises(StandinGap, match="torchair.ops.npu_print is part of torchair 2.13.0"):
            import torchair.ops

            torchair.ops.npu_print("x")
    assert str(info.value) == (
        "torchair._contrib is part of torchair 2.13.0, but fxlab's stand-in for torchair does not offer it yet: "
        "this is fxlab's gap, not a mistake in your code. To go on, run with --converter torchair, which loads TorchAir's own "
        "sources, or please report the name to fxlab."
    )
    assert not isinstance(unknown.value, StandinGap)


def test_a_model_file_stopped_by_a_gap_is_not_told_to_fix_itself(tmp_path: Path) -> None:
    model = tmp_path / "vllm_style.py"
    model.write_text(
        "import torch\nimport torchair._contrib.custom_torch_ops\nmodel = torch.nn.Identity()\nexample_inputs = (torch.ones(1),)\n"
    )
    with compat_layer(), pytest.raises(ModelLoadError) as info:
        load_model(model)
    message = str(info.value)
    assert f"importing the model file {model} stopped ({model}, line 2): torchair._contrib is part of" in message
    assert "fxlab's gap" in message and "Fix the model file" not in message
