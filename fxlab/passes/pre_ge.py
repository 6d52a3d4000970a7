"""The ``pre_ge`` stage: TorchAir's FX passes between the functional graph and its
conversion to a GE graph (``mode="max-autotune"``), in TorchAir's order and with the
config's settings.

TorchAir's ``_optimize_fx`` (:mod:`fxlab.passes.optimize_fx`, shared with the aclgraph
path): the user's ``post_grad_custom_pre_pass``; ``remove_noop_ops``;
``recover_view_inplace_pattern``; ``optimize_sym_input`` (GE graph only: a symbolic-size
input read from a tensor input's shape); pattern fusion (users' ``register_replacement``
patterns); ``view_to_reshape``; the user's ``post_grad_custom_post_pass``. Then its check
that scope markers pair up, and, during conversion, the view optimisation
(``experimental_config.enable_view_optimize``, default on).

The passes run on a copy (the functional graph is left as it was) through
:class:`~fxlab.passes.infra.PassManager`, which records what each did.
"""

from __future__ import annotations

from dataclasses import replace

import torch.fx as fx

from fxlab.passes.aclgraph.scope_pairs import check_scope_pairs
from fxlab.passes.graph_copy import copy_graph_module
from fxlab.passes.infra import NamedPass, PassManager
from fxlab.passes.optimize_fx import FxPassPlan, FxStageResult, optimize_fx_passes
from fxlab.passes.optimize_views import optimize_views
from fxlab.passes.torchair_options import MAX_AUTOTUNE, TorchAirOptions


def _plan(options: TorchAirOptions) -> tuple[FxPassPlan, list[NamedPass[fx.GraphModule]]]:
    plan = optimize_fx_passes(options if options.mode == MAX_AUTOTUNE else replace(options, mode=MAX_AUTOTUNE))
    passes = [*plan.passes, NamedPass("valid_graph", check_scope_pairs)]
    if options.enable_view_optimize:
        passes.append(NamedPass("optimize_views", optimize_views))
    return plan, passes


def pre_ge_graph(functional: fx.GraphModule, options: TorchAirOptions | None = None) -> FxStageResult:
    """A copy of ``functional`` after TorchAir's pre-conversion passes, and what each did."""
    plan, passes = _plan(options or TorchAirOptions())
    gm, records = PassManager(passes).run(copy_graph_module(functional))
    return FxStageResult(gm, records, plan.user_runs, plan.pattern_fusion.report if plan.pattern_fusion else None)
