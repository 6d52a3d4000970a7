"""The entry point itself: --version, and what a bare option without a command does."""
from __future__ import annotations

from importlib.metadata import version

import pytest

from tests.cli.cli_runner import run_main


def test_version_names_fxlab_and_torch():
    from fxlab import __version__

    code, out, err = run_main("--version")
    assert code == 0, err
    assert out.strip() == f"fxlab {__version__} (torch {version('torch')})"


def test_no_command_shows_help_and_fails():
    code, out, _ = run_main("--width")
    assert code == 2


def test_a_bug_in_fxlab_is_one_paragraph_and_exit_70(monkeypatch):
    import fxlab.cli.trace_command

    def broken(*args):
        raise RuntimeError("boom")

    monkeypatch.setattr(fxlab.cli.trace_command, "parse_stages", broken)
    monkeypatch.delenv("FXLAB_DEBUG", raising=False)
    code, _, err = run_main("trace", "model.py")
    assert code == 70 and "Traceback" not in err
    text = " ".join(err.split())
    assert "fxlab failed unexpectedly (RuntimeError: boom, at " in text and "FXLAB_DEBUG=1 shows the traceback" in text
    monkeypatch.setenv("FXLAB_DEBUG", "1")
    with pytest.raises(RuntimeError, match="boom"):
        run_main("trace", "model.py")


def test_the_model_calling_exit_while_it_runs_is_reported(write_model):
    model = write_model("import sys, torch\ndef model(x):\n    sys.exit(3)\nexample_inputs = (torch.randn(2),)\n")
    code, _, err = run_main("trace", str(model))
    assert code == 2
    assert "the model called exit (SystemExit: 3)" in " ".join(err.split()) and "Remove the exit()" in " ".join(err.split())
