"""Running a converted graph in tests: the FX graph's outputs as its converters computed them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from fxlab.ir.execute import execute
from fxlab.ir.host_outputs import converter_fx_outputs
from fxlab.ir.model import IrGraph


def execute_converted(graph: IrGraph, inputs: Sequence[torch.Tensor]) -> list[Any]:
    """Run ``graph``; the FX graph's outputs as its converters computed them: the
    ``NetOutput`` values, and for an output TorchAir makes on the host (a view of an
    input, a size) the value of the GE op its converter emitted, read by nothing
    (:func:`fxlab.ir.host_outputs.converter_fx_outputs`). What a converter test checks."""
    values: dict[str, Any] = {}
    return converter_fx_outputs(graph, inputs, execute(graph, inputs, values), values)
