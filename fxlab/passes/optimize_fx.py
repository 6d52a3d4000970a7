"""TorchAir's ``_optimize_fx``: the FX passes it runs on the functional graph before
either back end, in its order, with the settings of the config's mode.

Both modes share it, as TorchAir's compiler does: the ``pre_ge`` stage (GE graph) and the
``aclgraph`` stage (ACL graph capture) start with these passes::

    post_grad_custom_pre_pass    the user's (config.post_grad_custom_pre_pass), when set
    remove_noop_ops              experimental_config.remove_noop_ops (default on)
    recover_view_inplace_pattern
    optimize_sym_input           max-autotune only (GE graph: fewer inputs)
    apply_pattern_passes         experimental_config.pattern_fusion_pass (default on):
                                 users' register_replacement patterns
    view_to_reshape
    post_grad_custom_post_pass   the user's, when set

TorchAir calls a user's pass as ``fn(gm, example_inputs, config)``; so does fxlab, with the
graph's fake inputs and the user's own config object. Each user pass is recorded as the
user's (``NamedPass(origin="user")``), and the graph before and after it is kept
(:class:`UserPassRun`) so the trace can run both on the traced inputs and name a pass
that changes the results.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch.fx as fx

from fxlab.passes.graph_copy import copy_graph_module
from fxlab.passes.infra import NamedPass, PassError, PassRecord, PassResult
from fxlab.passes.optimize_sym_input import optimize_sym_input
from fxlab.passes.pattern_fusion import PatternFusion, PatternReport, UserPassRun
from fxlab.passes.recover_view_inplace_pattern import recover_view_inplace_pattern
from fxlab.passes.remove_noop_ops import remove_noop_ops
from fxlab.passes.torchair_options import MAX_AUTOTUNE, TorchAirOptions, describe_callable
from fxlab.passes.view_to_reshape import view_to_reshape

FxPass = NamedPass[fx.GraphModule]


@dataclass
class FxPassPlan:
    """The passes to run, and where the user's passes leave their traces."""

    passes: list[FxPass]
    user_runs: list[UserPassRun] = field(default_factory=list)
    pattern_fusion: PatternFusion | None = None


@dataclass
class FxStageResult:
    """An FX stage made by a list of TorchAir's passes (``pre_ge``, ``aclgraph``): its
    graph, what each pass did, the runs of the user's passes, the user's patterns and
    their matches, and on the aclgraph path the capture code and what its passes learnt."""

    gm: fx.GraphModule
    records: list[PassRecord]
    user_runs: list[UserPassRun] = field(default_factory=list)
    patterns: PatternReport | None = None
    capture_code: str | None = None
    info: Any = None  # the aclgraph path's CaptureInfo

    @property
    def pattern_matches(self) -> list[dict[str, Any]]:
        """The user's patterns with their matches, as data (none when no pattern is registered)."""
        return self.patterns.to_json() if self.patterns and self.patterns.patterns else []


class _UserPass:
    """A user's pass as TorchAir calls it, keeping the graph before and after."""

    def __init__(self, name: str, fn: Callable[..., Any], config: Any, runs: list[UserPassRun]) -> None:
        self.name, self.fn, self.config, self.runs = name, fn, config, runs

    def __call__(self, gm: fx.GraphModule) -> PassResult[fx.GraphModule]:
        run = UserPassRun(self.name, describe_callable(self.fn), copy_graph_module(gm))
        before = _signature(gm)
        try:
            returned = self.fn(gm, example_inputs(gm), self.config)
        except Exception as exc:
            raise PassError(f"{run.function} raised {type(exc).__name__}: {exc}") from exc
        if isinstance(returned, fx.GraphModule) and returned is not gm:
            raise PassError(
                f"{run.function} returned a new GraphModule; TorchAir ignores what a custom pass returns, so the pass must change gm in place"
            )
        gm.recompile()
        run.after = copy_graph_module(gm)
        self.runs.append(run)
        changed = before != _signature(gm)
        return PassResult(gm, changed, notes=[f"the user's {run.function}"])


def _signature(gm: fx.GraphModule) -> list[tuple[Any, ...]]:
    return [(n.name, n.op, str(n.target), str(n.args), str(n.kwargs)) for n in gm.graph.nodes]


def example_inputs(gm: fx.GraphModule) -> list[Any]:
    """The graph's inputs as TorchAir's compiler holds them: the fake values."""
    return [n.meta.get("val") for n in gm.graph.nodes if n.op == "placeholder"]


def optimize_fx_passes(options: TorchAirOptions) -> FxPassPlan:
    """The passes ``options`` enable, in TorchAir's order."""
    plan = FxPassPlan([])
    add = plan.passes.append

    def user_pass(name: str, fn: Any) -> NamedPass[fx.GraphModule]:
        return NamedPass(name, _UserPass(name, fn, options.config, plan.user_runs), "user")

    if options.custom_pre_pass is not None:
        add(user_pass("post_grad_custom_pre_pass", options.custom_pre_pass))
    if options.remove_noop_ops:
        in_order = options.aclgraph  # the aclgraph path runs the graph node by node
        add(NamedPass("remove_noop_ops", lambda gm: remove_noop_ops(gm, in_order)))
    cann = options.cann_supports_view_inplace
    add(NamedPass("recover_view_inplace_pattern", lambda gm: recover_view_inplace_pattern(gm, cann_supported=cann)))
    if options.mode == MAX_AUTOTUNE:
        add(NamedPass("optimize_sym_input", optimize_sym_input))
    if options.pattern_fusion_pass:
        plan.pattern_fusion = PatternFusion(options.patterns, options.mode, plan.user_runs)
        add(NamedPass("apply_pattern_passes", plan.pattern_fusion, "user" if options.patterns else "torchair"))
    add(NamedPass("view_to_reshape", view_to_reshape))
    if options.custom_post_pass is not None:
        add(user_pass("post_grad_custom_post_pass", options.custom_post_pass))
    return plan
