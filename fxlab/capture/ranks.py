"""What capturing one rank of a multi-rank model adds to a capture.

Collectives are graph nodes of the ``_c10d_functional`` / ``c10d_functional`` operators
(``wait_tensor`` aside) and of TorchAir's ``npu_define`` ones. A rank of a multi-rank
trace (``fxlab trace --nproc N``) captures with :class:`RankHooks`: the compiled model
runs before eager, each functional graph is shown to ``before_graph_runs`` before it
first runs (the cross-rank check of its collectives), ``after_compiled_run`` is told when
the compiled run ends, and the graphs whose Ascend IR runs on CPU are those every rank
can run (their collectives meet on every rank).

A single process on torch.distributed's fake process group runs no collective at all;
:func:`collectives_not_executed` says so, and the checks then say they could not run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx

COLLECTIVE_NAMESPACES = frozenset({"_c10d_functional", "c10d_functional", "npu_define"})
NOT_COLLECTIVES = frozenset({"wait_tensor"})
# Other operators that communicate, by name (``"npu.npu_moe_distribute_dispatch.default"``):
# the modules of their converters add them, and the cross-rank check then compares them.
COLLECTIVE_OPERATORS: set[str] = set()
FAKE_GROUP_NOTE = "collectives not executed under the fake process group"


@dataclass
class RankHooks:
    """See the module docstring."""

    before_graph_runs: Callable[[int, fx.GraphModule], None]
    after_compiled_run: Callable[[], None]
    runnable_everywhere: Callable[[list[int]], list[int]]


def is_collective(target: Any) -> bool:
    if getattr(target, "namespace", None) in COLLECTIVE_NAMESPACES:
        return getattr(target, "_opname", "") not in NOT_COLLECTIVES
    return bool(COLLECTIVE_OPERATORS) and str(target) in COLLECTIVE_OPERATORS


def has_collectives(graphs: Iterable[fx.GraphModule | None]) -> bool:
    return any(is_collective(n.target) for gm in graphs if gm is not None for n in gm.graph.nodes if n.op == "call_function")


def collectives_not_executed(graphs: Iterable[fx.GraphModule | None]) -> str | None:
    """Why the checks cannot compare values: the graphs' collectives ran on the fake
    process group, which moves no data. ``None`` otherwise."""
    dist = torch.distributed
    if not (dist.is_available() and dist.is_initialized()) or dist.get_backend() != "fake":
        return None
    return FAKE_GROUP_NOTE if has_collectives(graphs) else None


def wrap_before_runs(hooks: RankHooks, wrap: Callable[[fx.GraphModule], Any], counter: list[int]) -> Callable[[fx.GraphModule], Any]:
    """``wrap`` (the compiled-graph wrapper aot calls with each functional graph), showing
    the graph to ``hooks.before_graph_runs`` first."""

    def wrap_checked(fw: fx.GraphModule) -> Any:
        hooks.before_graph_runs(counter[0], fw)
        counter[0] += 1
        return wrap(fw)

    return wrap_checked


def after_call(compiled: Callable[..., Any], done: Callable[[], None]) -> Callable[..., Any]:
    """``compiled``, telling ``done`` when a call of it returns."""

    def call(*args: Any, **kwargs: Any) -> Any:
        out = compiled(*args, **kwargs)
        done()
        return out

    return call
