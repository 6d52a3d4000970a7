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
]


def _section(config, dotted: str):
    for part in filter(None, dotted.split(".")):
        config = getattr(config, part)
    return config


def _refusal(config, dotted: str, name: str, value: object) -> str | None:
    try:
        setattr(_section(config, dotted), name, value)
    except ValueError as exc:
        return str(exc)
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
    assert said is not None and said.startswith(("_", "Value "))


def test_the_stand_in_refuses_what_torchairs_own_config_refuses_in_its_words(torchair_path):
    for loaded in torchair_session(torchair_path):
        for section, name, value in MISTAKES:
            theirs = _refusal(loaded.package.CompilerConfig(), section, name, value)
            assert theirs is not None  # TorchAir's words on one line, then its traceback and error-code banner
            assert _refusal(CompilerConfig(), section, name, value) == theirs.split("\n")[0]
        options = [("experimental_config", "frozen_parameter", True), ("debug.graph_dump", "type", "py"), ("ge_config", "aicore_num", "20|40")]
        for section, name, value in options:  # and takes what it takes
            assert _refusal(loaded.package.CompilerConfig(), section, name, value) is None
            assert _refusal(CompilerConfig(), section, name, value) is None
