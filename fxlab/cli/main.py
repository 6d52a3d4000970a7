"""``fxlab``: the command-line entry point. Each command lives in its own module and is
thin: parse, call the layers below, render, choose the exit code."""

from __future__ import annotations

import os
import sys
import traceback

from fxlab.cli import console
from fxlab.cli.app import app
from fxlab.errors import FxlabError

__all__ = ["app", "main"]


def _register_commands() -> None:
    # registers: each module adds its command(s) to ``app``; heavy imports stay inside the commands.
    from fxlab.cli import diff_command, dumps_command, ops_command, run_command, scopes_command, torchair_command, trace_command  # noqa: F401


def main(argv: list[str] | None = None) -> None:
    _register_commands()
    args = sys.argv[1:] if argv is None else argv
    try:
        app(args=argv, standalone_mode=True)
    except FxlabError as exc:
        console.error(str(exc))
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        _interrupted(args)
    except SystemExit as exc:
        if _from_interrupt(exc):  # typer turns Ctrl-C into a silent exit 130
            _interrupted(args)
        raise
    except Exception as exc:  # a bug in fxlab itself: one paragraph, the traceback on request
        if os.environ.get("FXLAB_DEBUG"):
            raise
        console.error(
            f"fxlab failed unexpectedly ({type(exc).__name__}: {exc}, at {_last_frame(exc)}). This is a bug in fxlab, "
            "not in your input: please report it with the command and the model file; FXLAB_DEBUG=1 shows the traceback."
        )
        sys.exit(INTERNAL_ERROR)


INTERNAL_ERROR = 70  # sysexits' EX_SOFTWARE


def _last_frame(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "an unknown place"


def _interrupted(args: list[str]) -> None:
    """What --out holds after an interruption is said by the command that writes it."""
    console.error("interrupted (Ctrl-C). Run the command again to finish.")
    sys.exit(130)


def _from_interrupt(exc: BaseException) -> bool:
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False
