"""The typer application every command module adds itself to (``fxlab.cli.main`` runs it)."""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from fxlab import heap
from fxlab.cli import console
from fxlab.version import __version__


class _FlagHelpOption:
    """``--help`` listed as the flag it is: typer labels it with a type (``<bool>``) that no
    other flag of fxlab's shows."""

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:
            option.metavar = ""
        return option


class FxlabGroup(_FlagHelpOption, TyperGroup):
    pass


class FxlabCommand(_FlagHelpOption, TyperCommand):
    pass


class FxlabTyper(typer.Typer):
    """fxlab's typer application and sub-applications: their groups and commands list
    ``--help`` as a flag."""

    def __init__(self, **options: Any) -> None:
        super().__init__(cls=FxlabGroup, **options)

    def command(self, *args: Any, **options: Any) -> Any:
        return super().command(*args, cls=FxlabCommand, **options)


app = FxlabTyper(
    name="fxlab",
    help=(
        "See how PyTorch graph mode on Ascend NPUs (TorchAir) turns your model into what the NPU "
        "runs: for every Dynamo graph, each stage from the Dynamo graph through functionalization "
        "and TorchAir's own passes to the Ascend IR (GE graph, max-autotune) or the graph it "
        "captures as an ACL graph (reduce-overhead, npugraph_ex), with every op traced back to its "
        "FX node and source line. Runs on CPU; uses the real TorchAir when importable."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", metavar="", help="Print fxlab's and torch's versions and exit.", is_eager=True),
) -> None:
    if version:
        console.out().print(version_line(), markup=False)
        raise typer.Exit(0)
    # The collector's settings for the whole command, undone when it ends (fxlab/heap.py).
    ctx.with_resource(heap.long_lived_heap())
    if ctx.invoked_subcommand is None:  # options but no command: say what to run
        console.out().print(ctx.get_help(), markup=False)
        raise typer.Exit(2)


def version_line() -> str:
    """``fxlab X (torch Y)``, read from the installed metadata so torch is not imported."""
    from importlib.metadata import PackageNotFoundError, version  # lazy: ~9 ms, and only --version reads it

    try:
        torch_version = version("torch")
    except PackageNotFoundError:
        torch_version = "not installed"
    return f"fxlab {__version__} (torch {torch_version})"
