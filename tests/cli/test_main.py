"""The entry point itself: --version, and what a bare option without a command does."""
from __future__ import annotations

from importlib.metadata import version

from tests.cli.cli_runner import run_main


def test_version_names_fxlab_and_torch():
    from fxlab import __version__

    code, out, err = run_main("--version")
    assert code == 0, err
    assert out.strip() == f"fxlab {__version__} (torch {version('torch')})"


def test_no_command_shows_help_and_fails():
    code, out, _ = run_main("--width")
    assert code == 2
