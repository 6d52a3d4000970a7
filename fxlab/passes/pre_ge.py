"""The ``pre_ge`` stage: TorchAir's FX passes between the functional graph and its
conversion, in TorchAir's order and with its defaults (its ``_optimize_fx``, then the view
optimisation its converter applies while walking the graph).

TorchAir's order: the user's ``post_grad_custom_pre_pass``; ``remove_noop_ops`` (when
``experimental_config.remove_noop_ops``, default on); ``recover_view_inplace_pattern``;
``optimize_sym_input`` (in its default GE graph mode: a symbolic-size input read from a
tensor input's shape);
pattern fusion (``experimental_config.pattern_fusion_pass``, default on: torch_npu operator
combinations fused into one operator, :mod:`fxlab.passes.torchair_patterns`);
``view_to_reshape``; the user's ``post_grad_custom_post_pass``; then, during conversion,
the view optimisation (``experimental_config.enable_view_optimize``, default on).

The passes work on a copy; the functional graph is left as it was. Each pass says
whether it changed the graph and how many nodes it added and removed, so a user sees
what each did.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch.fx as fx

from fxlab.passes.graph_copy import copy_graph_module
from fxlab.passes.optimize_sym_input import optimize_sym_input
from fxlab.passes.optimize_views import optimize_views
from fxlab.passes.torchair_patterns import fuse_torchair_patterns
from fxlab.passes.recover_view_inplace_pattern import recover_view_inplace_pattern
from fxlab.passes.remove_noop_ops import remove_noop_ops
from fxlab.passes.view_to_reshape import view_to_reshape

UserPass = Callable[..., Any]


@dataclass(frozen=True)
class PreGeOptions:
    """The TorchAir settings the passes follow (its ``CompilerConfig`` defaults)."""

    remove_noop_ops: bool = True  # experimental_config.remove_noop_ops
    enable_view_optimize: bool = True  # experimental_config.enable_view_optimize
    cann_supports_view_inplace: bool = True  # CANN >= 8.3.RC1
    ge_graph_mode: bool = True  # mode="max-autotune" (GE graph), not "reduce-overhead" (ACL graph)
    pattern_fusion: bool = True  # experimental_config.pattern_fusion_pass
    custom_pre_pass: UserPass | None = None  # post_grad_custom_pre_pass(gm)
    custom_post_pass: UserPass | None = None  # post_grad_custom_post_pass(gm)


@dataclass
class PassRecord:
    """What one pass did to the graph."""

    name: str
    changed: bool
    removed: list[str] = field(default_factory=list)  # node names gone
    added: list[str] = field(default_factory=list)  # node names new

    def to_json(self) -> dict[str, Any]:
        return {"pass": self.name, "changed": self.changed, "removed": list(self.removed), "added": list(self.added)}


def _user_pass(fn: UserPass | None) -> Callable[[fx.GraphModule], bool] | None:
    if fn is None:
        return None

    def run(gm: fx.GraphModule) -> bool:
        before = [(n.name, n.target, n.args, n.kwargs) for n in gm.graph.nodes]
        fn(gm)  # TorchAir calls it as fn(gm, example_inputs, config); a graph is enough here
        gm.recompile()
        return before != [(n.name, n.target, n.args, n.kwargs) for n in gm.graph.nodes]

    return run


def planned_passes(options: PreGeOptions) -> list[tuple[str, Callable[[fx.GraphModule], bool]]]:
    """The passes ``options`` enable, in TorchAir's order."""
    planned: list[tuple[str, Callable[[fx.GraphModule], bool] | None]] = [
        ("post_grad_custom_pre_pass", _user_pass(options.custom_pre_pass)),
        ("remove_noop_ops", remove_noop_ops if options.remove_noop_ops else None),
        ("recover_view_inplace_pattern", lambda gm: recover_view_inplace_pattern(gm, cann_supported=options.cann_supports_view_inplace)),
        ("optimize_sym_input", optimize_sym_input if options.ge_graph_mode else None),
        ("pattern_fusion", fuse_torchair_patterns if options.pattern_fusion else None),
        ("view_to_reshape", view_to_reshape),
        ("post_grad_custom_post_pass", _user_pass(options.custom_post_pass)),
        ("optimize_views", optimize_views if options.enable_view_optimize else None),
    ]
    return [(name, fn) for name, fn in planned if fn is not None]


def pre_ge_graph(functional: fx.GraphModule, options: PreGeOptions | None = None) -> tuple[fx.GraphModule, list[PassRecord]]:
    """A copy of ``functional`` after TorchAir's pre-conversion passes, and what each did."""
    gm = copy_graph_module(functional)
    records = []
    for name, run in planned_passes(options or PreGeOptions()):
        before = {n.name for n in gm.graph.nodes}
        try:
            changed = bool(run(gm))
        except Exception as exc:
            raise RuntimeError(f"TorchAir's pre-conversion pass {name} failed: {type(exc).__name__}: {exc}") from exc
        after = {n.name for n in gm.graph.nodes}
        records.append(PassRecord(name, changed, sorted(before - after), sorted(after - before)))
    return gm, records
