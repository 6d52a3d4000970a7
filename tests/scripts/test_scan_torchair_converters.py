"""The developer script that regenerates the tables fxlab ships from TorchAir's sources:
run on the TorchAir copy the tests use, it writes exactly the shipped files."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from fxlab.passes.inference_rule import GE_APIS_PATH
from fxlab.passes.torchair_refusals import TABLE_PATH
from tests.conftest import ROOT

SCRIPT = ROOT / "scripts" / "scan_torchair_converters.py"


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("scan_torchair_converters", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_script_writes_the_shipped_tables(torchair_path: Path | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    where = torchair_path
    if where is None:
        pytest.skip("the installed TorchAir is used")
    table, ge_apis = tmp_path / "converters.json", tmp_path / "ge_apis.json"
    assert _script().main([str(where)], table, ge_apis) == 0
    assert table.read_text(encoding="utf-8") == TABLE_PATH.read_text(encoding="utf-8")
    assert ge_apis.read_text(encoding="utf-8") == GE_APIS_PATH.read_text(encoding="utf-8")
    assert "registrations (" in capsys.readouterr().out


def test_the_script_is_not_installed_with_fxlab() -> None:
    from setuptools import find_packages

    packages = find_packages(str(ROOT))  # what pyproject.toml's package finder installs
    assert "fxlab.compat" in packages and not any(p.split(".")[0] == "scripts" for p in packages)
