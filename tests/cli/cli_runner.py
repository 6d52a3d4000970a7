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


def run_main(*args: str) -> tuple[int, str, str]:
    """Run ``fxlab ARGS`` through ``main()``, as the console script does: errors are
    printed (not returned), and any exception that escapes fails the caller's test."""
    import contextlib
    import io

    from fxlab.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return code, out.getvalue(), err.getvalue()
