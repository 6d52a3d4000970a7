"""The ``functional`` stage of a plain function, without Dynamo: for tests that exercise a
pass or a converter on a small graph."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.fx as fx
from torch.fx.experimental.proxy_tensor import make_fx

from fxlab.capture.stages import fake_mode_of, functional_stage


def functional_graph(fn: Callable[..., Any], *inputs: torch.Tensor) -> fx.GraphModule:
    """The ``functional`` stage of a plain function or module, without Dynamo: traced
    with ``make_fx`` to a graph module first, then through aot_autograd as the capture does."""

    def as_tuple(*args: Any) -> tuple[Any, ...]:
        out = fn(*args)  # aot_autograd wants tuple outputs
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)

    with torch.no_grad():
        gm = make_fx(as_tuple, tracing_mode="fake")(*inputs)
        fake_mode = fake_mode_of([n.meta.get("val") for n in gm.graph.nodes if n.op == "placeholder"])
        fake_inputs = [fake_mode.from_tensor(x) if isinstance(x, torch.Tensor) else x for x in inputs] if fake_mode else list(inputs)
        if fake_mode is None:
            functional, _ = functional_stage(gm, fake_inputs)
        else:
            with fake_mode:
                functional, _ = functional_stage(gm, fake_inputs)
    return functional
