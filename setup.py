"""fxlab's process hook, ``fxlab-run.pth``, installed at the top of site-packages beside
the package, from a wheel and from ``pip install -e .`` alike (pyproject.toml holds all
the rest). Python runs the file's one line in every process it starts: the line reads
``FXLAB_TRACE`` and does nothing more when it is not set (fxlab/cli/run_hook.py)."""

from __future__ import annotations

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

HOOK = os.path.join("fxlab", "cli", "fxlab-run.pth")


class BuildPyWithHook(build_py):
    """A wheel: the hook at the wheel's top, which pip unpacks into site-packages."""

    def run(self) -> None:
        super().run()
        self.copy_file(HOOK, os.path.join(self.build_lib, os.path.basename(HOOK)), preserve_mode=False)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [*super().get_outputs(include_bytecode), os.path.join(self.build_lib, os.path.basename(HOOK))]


class EditableWheelWithHook(editable_wheel):
    """``pip install -e .``: setuptools writes what goes to site-packages (its own .pth
    files) into the editable wheel's folder here; the hook goes beside them."""

    def _install_namespaces(self, installation_dir: str, pth_prefix: str) -> None:
        super()._install_namespaces(installation_dir, pth_prefix)
        shutil.copy(HOOK, os.path.join(installation_dir, os.path.basename(HOOK)))


setup(cmdclass={"build_py": BuildPyWithHook, "editable_wheel": EditableWheelWithHook})
