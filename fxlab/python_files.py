"""Whether a path names a Python file a command can import (a model file, a plugin): said
before anything heavy is imported, so a mistyped path fails at once, in the words the
importer would use."""

from __future__ import annotations

import importlib.machinery
from pathlib import Path

from fxlab.errors import ModelLoadError


def python_file_error(path: str | Path, role: str = "model") -> ModelLoadError | None:
    """Why ``path`` cannot be imported as the ``role`` file, or None."""
    path = Path(path).expanduser()
    if not path.is_file():
        what = "is a directory" if path.is_dir() else "does not exist"
        return ModelLoadError(f"the {role} file {path} {what}. Pass the path of a Python file.")
    if path.suffix not in importlib.machinery.SOURCE_SUFFIXES:
        return ModelLoadError(
            f"cannot import the {role} file {path}: it is not a Python source file. Pass the .py file that defines the {role}."
        )
    return None
