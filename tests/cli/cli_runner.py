"""Run fxlab commands in-process (typer's CliRunner) and get (exit code, stdout, error)."""
from __future__ import annotations

from typer.testing import CliRunner

from fxlab.cli.main import _register_commands, app

_register_commands()
_runner = CliRunner()


def run_cli(*args: str, width: int = 160) -> tuple[int, str, str]:
    """An FxlabError the CLI would print is returned as (its exit code, stdout, message)."""
    from fxlab.errors import FxlabError

    result = _runner.invoke(app, list(args), env={"FXLAB_WIDTH": str(width), "NO_COLOR": "1"})
    if result.exception and not isinstance(result.exception, SystemExit):
        if isinstance(result.exception, FxlabError):
            return result.exception.exit_code, result.stdout, str(result.exception)
        raise result.exception
    return result.exit_code, result.stdout, result.stderr
