"""The passes of the ``pre_ge`` stage a config enables, as its pass manager gets them."""

from __future__ import annotations

from typing import Any

from fxlab.passes.pre_ge import _plan
from fxlab.passes.torchair_options import TorchAirOptions


def planned_passes(options: TorchAirOptions) -> list[Any]:
    """The passes ``options`` enable, in TorchAir's order (as a GE graph, whatever the mode)."""
    return _plan(options)[1]
