"""``--soc`` / ``--soc-ini``: the one way every command names the SoC it stands in for.

Each command that takes them resolves them with :func:`fxlab.socs.choose_soc` before it
captures anything, so an unknown name is refused alike everywhere (exit 2, naming the
known SoCs), and all default to :data:`fxlab.socs.DEFAULT_SOC`.
"""

from __future__ import annotations

import typer

from fxlab.socs import DEFAULT_SOC

SocOpt = typer.Option(
    None,
    "--soc",
    metavar="NAME",
    help=f"The SoC to stand in for and check core counts against (default: {DEFAULT_SOC}, an Atlas A2 part); an unknown name lists the known ones.",
    show_default=False,
)
SocIniOpt = typer.Option(
    None,
    "--soc-ini",
    metavar="FILE",
    help="CANN platform ini of the SoC (<arch>-linux/data/platform_config/<SoC>.ini), for a SoC --soc does not know.",
    show_default=False,
)
