"""A path that cannot be the model or plugin file is refused before torch is imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fxlab.python_files import python_file_error
from tests.conftest import ROOT


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("nosuch.py", "the model file {path} does not exist. Pass the path of a Python file."),
        ("folder", "the model file {path} is a directory. Pass the path of a Python file."),
        ("notes.md", "cannot import the model file {path}: it is not a Python source file. Pass the .py file that defines the model."),
    ],
)
def test_what_is_wrong_with_the_path_is_said_in_the_importers_words(tmp_path, name, said):
    (tmp_path / "folder").mkdir()
    (tmp_path / "notes.md").write_text("# not a model\n")
    path = tmp_path / name
    assert str(python_file_error(path)) == said.format(path=path)
    assert python_file_error(path).exit_code == 2


def test_a_real_python_file_is_fine(tmp_path):
    (tmp_path / "m.py").write_text("x = 1\n")
    assert python_file_error(tmp_path / "m.py") is None


def test_the_command_refuses_a_missing_model_file_without_importing_torch(tmp_path):
    probe = (
        "import sys\nfrom fxlab.cli.main import main\n"
        "try:\n    main(['trace', 'nosuch.py'])\nexcept SystemExit as exc:\n    print(exc.code, 'torch' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert done.stdout.split() == ["2", "False"], done.stderr
    assert "the model file nosuch.py does not exist" in done.stderr
