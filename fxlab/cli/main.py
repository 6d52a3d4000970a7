"""``fxlab``: the command-line entry point. Each command lives in its own module and is
thin: parse, call the layers below, render, choose the exit code."""

from __future__ import annotations

import os
import sys

import typer

from fxlab.cli import console

app = typer.Typer(
    name="fxlab",
    help=(
        "See how PyTorch graph mode on Ascend NPUs (TorchAir) turns your model into the "
        "Ascend IR (GE graph): every Dynamo graph, each stage from the Dynamo graph through "
        "functionalization and re-inplacing to the converted GE ops, with every op traced back "
        "to its FX node and source line. Runs on CPU; uses the real TorchAir when importable."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", help="Print fxlab's and torch's versions and exit.", is_eager=True),
) -> None:
    if version:
        console.out().print(version_line(), markup=False)
        raise typer.Exit(0)
    if ctx.invoked_subcommand is None:  # options but no command: say what to run
        console.out().print(ctx.get_help(), markup=False)
        raise typer.Exit(2)


def version_line() -> str:
    """``fxlab X (torch Y)``, read from the installed metadata so torch is not imported."""
    from importlib.metadata import PackageNotFoundError, version

    from fxlab import __version__

    try:
        torch_version = version("torch")
    except PackageNotFoundError:
        torch_version = "not installed"
    return f"fxlab {__version__} (torch {torch_version})"


def _register_commands() -> None:
    # Each module adds its command(s) to ``app``; heavy imports stay inside the commands.
    from fxlab.cli import trace  # noqa: F401

    for optional in ("diff", "scopes", "ops", "torchair"):
        try:
            __import__(f"fxlab.cli.{optional}")
        except ModuleNotFoundError as exc:
            if exc.name != f"fxlab.cli.{optional}":
                raise


def main(argv: list[str] | None = None) -> None:
    from fxlab.errors import FxlabError

    _register_commands()
    try:
        app(args=argv, standalone_mode=True)
    except FxlabError as exc:
        console.error(str(exc))
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        _interrupted()
    except SystemExit as exc:
        if _from_interrupt(exc):  # typer turns Ctrl-C into a silent exit 130
            _interrupted()
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
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "an unknown place"


def _interrupted() -> None:
    console.error(
        "interrupted (Ctrl-C). Run the command again to finish; a --out folder holds a whole trace, the new one or the one it held before."
    )
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
