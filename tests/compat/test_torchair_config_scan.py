"""TorchAir's CompilerConfig tree, scanned from its sources: the table fxlab ships is a
fresh scan, and the stand-in config refuses what TorchAir's own refuses, in its words."""

from __future__ import annotations

from pathlib import Path

import pytest

from fxlab.compat.config import CompilerConfig
from fxlab.compat.torchair_config_scan import CONFIGS_PATH, configs_text, scan_configs
from tests.conftest import torchair_session

MISTAKES = [
    ("experimental_config", "frozen_parameters", True),  # a misspelt option
    ("debug.graph_dump", "type", "json"),  # a value TorchAir does not list
    ("", "mode", "reduce_overhead"),
    ("debug.aclgraph", "disable_reinplace_inplaceable_ops", True),
    # typed values: out of range, of another type, not matching the pattern
    ("debug.aclgraph", "static_capture_size_limit", 0),
    ("debug.aclgraph", "static_capture_size_limit", "64"),
    ("experimental_config", "static_model_ops_lower_limit", -2),
    ("dump_config", "dump_step", "1,2"),
    ("dump_config", "dump_layer", "Add;Mul"),
    ("experimental_config.aclgraph", "_aclnn_static_shape_kernel_sym_value_range", [1, "2"]),
    ("experimental_config.aclgraph", "_aclnn_static_shape_kernel_sym_value_range", 3),
    ("experimental_config.aclgraph", "_aclnn_static_shape_kernel_build_dir", 5),
    ("experimental_config.aclgraph", "_super_kernel_optimize_options", ["a"]),
    ("", "post_grad_custom_pre_pass", "my_pass"),
]
# Values TorchAir's config takes; the paths it checks are the NPU machine's and not checked here.
TAKEN = [
    ("experimental_config", "frozen_parameter", True),
    ("debug.graph_dump", "type", "py"),
    ("ge_config", "aicore_num", "20|40"),
    ("debug.aclgraph", "static_capture_size_limit", 128),
    ("dump_config", "dump_step", "0|1|2-5"),
    ("dump_config", "dump_layer", "Mul_1 Add1"),
    ("experimental_config.aclgraph", "_aclnn_static_shape_kernel_sym_value_range", [1, 8]),
    ("experimental_config.aclgraph", "_super_kernel_optimize_options", {"a": 1}),
    ("", "post_grad_custom_pre_pass", print),
]


def _section(config, dotted: str):
    for part in filter(None, dotted.split(".")):
        config = getattr(config, part)
    return config


def _refusal(config, dotted: str, name: str, value: object) -> str | None:
    try:
        setattr(_section(config, dotted), name, value)
    except (ValueError, TypeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def test_the_shipped_table_is_a_fresh_scan_of_torchairs_sources(torchair_path):
    if torchair_path is None:
        pytest.skip("the installed TorchAir is used")
    import json

    origin = json.loads(CONFIGS_PATH.read_text(encoding="utf-8"))["from"]
    assert CONFIGS_PATH.read_text(encoding="utf-8") == configs_text(scan_configs(Path(torchair_path)), origin), (
        "the table is stale: run `python scripts/scan_torchair_configs.py`"
    )


@pytest.mark.parametrize(("section", "name", "value"), MISTAKES)
def test_the_stand_in_refuses_a_mistake(section, name, value):
    said = _refusal(CompilerConfig(), section, name, value)
    assert said is not None and said.startswith(("ValueError: ", "TypeError: "))


@pytest.mark.parametrize(("section", "name", "value"), TAKEN)
def test_the_stand_in_takes_what_torchair_takes(section, name, value):
    assert _refusal(CompilerConfig(), section, name, value) is None


def test_a_path_the_npu_machine_has_is_kept_unchecked(tmp_path):
    config = CompilerConfig()
    config.dump_config.dump_path = str(tmp_path / "on_the_npu_machine")
    assert config.dump_config.dump_path == str(tmp_path / "on_the_npu_machine")


def test_the_stand_in_refuses_what_torchairs_own_config_refuses_in_its_words(torchair_path):
    for loaded in torchair_session(torchair_path):
        for section, name, value in MISTAKES:
            theirs = _refusal(loaded.package.CompilerConfig(), section, name, value)
            assert theirs is not None  # TorchAir's words on one line, then its traceback and error-code banner
            assert _refusal(CompilerConfig(), section, name, value) == theirs.split("\n")[0]
        for section, name, value in TAKEN:  # and takes what it takes
            assert _refusal(loaded.package.CompilerConfig(), section, name, value) is None
            assert _refusal(CompilerConfig(), section, name, value) is None
