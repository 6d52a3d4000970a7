"""fxlab's process hook, ``fxlab-run.pth``, lands at the top of site-packages from a wheel
and from ``pip install -e .`` alike (setup.py), holding the line fxlab ships."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile

import pytest

from tests.conftest import ROOT

HOOK = "fxlab-run.pth"


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A copy of the project's packaging files and package, to build from."""
    copy = tmp_path_factory.mktemp("project")
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, copy / name)
    shutil.copytree(ROOT / "fxlab", copy / "fxlab", ignore=shutil.ignore_patterns("__pycache__"))
    return copy


@pytest.mark.parametrize("hook", ["build_wheel", "build_editable"])
def test_the_hook_is_at_the_top_of_the_wheel(project, hook):
    built = project / f"dist-{hook}"
    code = f"from setuptools import build_meta; print(build_meta.{hook}({str(built)!r}))"
    name = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, check=True).stdout.splitlines()[-1]
    with zipfile.ZipFile(built / name) as wheel:
        assert wheel.read(HOOK) == (ROOT / "fxlab" / "cli" / HOOK).read_bytes()
        record = wheel.read(next(n for n in wheel.namelist() if n.endswith(".dist-info/RECORD"))).decode()
    assert f"\n{HOOK}," in f"\n{record}"  # pip removes it again on uninstall
    assert (ROOT / "fxlab" / "cli" / HOOK).read_text() == 'import os; os.environ.get("FXLAB_TRACE") and __import__("fxlab.cli.run_hook", fromlist=["start"]).start()\n'
