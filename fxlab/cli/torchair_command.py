"""``fxlab torchair fetch``: TorchAir's sources for the installed torch, into the user's cache."""

from __future__ import annotations

from pathlib import Path

import typer

from fxlab.cli import console
from fxlab.cli.app import FxlabTyper, app

torchair_app = FxlabTyper(
    name="torchair",
    help="TorchAir's own sources: fetch the copy that --converter torchair and `fxlab diff ... ascend_ir:torchair` load.",
    no_args_is_help=True,
)
app.add_typer(torchair_app, name="torchair")


@torchair_app.command(
    "fetch",
    help=(
        "Download the torch_npu wheel built for the installed torch (never installing it) and extract "
        "TorchAir's Python sources into the user's cache ($FXLAB_CACHE_DIR, $XDG_CACHE_HOME/fxlab or "
        "~/.cache/fxlab), where fxlab finds them. Prints the folder (a value for FXLAB_TORCHAIR_PATH).\n\n"
        "Examples:\n\n  fxlab torchair fetch\n\n  fxlab torchair fetch --wheel torch_npu-2.13.0-cp311-cp311-manylinux_2_17_x86_64.whl"
    ),
)
def fetch_command(
    torch_version: str | None = typer.Option(
        None, "--torch-version", metavar="VERSION", help="torch version to match (default: the installed one)."
    ),
    cache_dir: Path | None = typer.Option(
        None,
        "--cache-dir",
        metavar="DIR",
        help="Folder to extract into (default: torchair/ in fxlab's cache: $FXLAB_CACHE_DIR, else $XDG_CACHE_HOME/fxlab, else ~/.cache/fxlab).",
    ),
    wheel: Path | None = typer.Option(
        None, "--wheel", metavar="FILE", help="Extract from this torch_npu wheel instead of downloading one."
    ),
) -> None:
    # lazy: importlib.metadata and the fetcher, ~15 ms at every start; only this command needs them
    from importlib.metadata import version

    from fxlab.compat.torchair_fetch import fetch_torchair, torchair_cache_dir

    wanted = torch_version or version("torch")
    folder = fetch_torchair(wanted, cache_dir or torchair_cache_dir(), wheel, progress=console.note)
    console.note(f"TorchAir's sources are in {folder}")
    console.out().print(str(folder), markup=False, highlight=False, soft_wrap=True)
