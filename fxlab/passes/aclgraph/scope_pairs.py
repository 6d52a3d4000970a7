"""TorchAir's ``_valid_graph``, run after ``_optimize_fx`` (users' passes may break it): every
``scope_exit`` closes a ``scope_enter`` and every ``scope_enter`` is closed; every
``npu.super_kernel_scope_end`` closes a ``super_kernel_scope_begin`` of the same name.
A graph that breaks the rule fails to compile under TorchAir; here the check fails with
the node named, which the pass list then names too."""

from __future__ import annotations

import torch.fx as fx

from fxlab.errors import FxlabError
from fxlab.passes.infra import PassResult
from fxlab.passes.stream_labels import is_marker


class UnpairedScopeError(FxlabError):
    """Scope markers that do not pair up (TorchAir refuses the graph)."""


def check_scope_pairs(gm: fx.GraphModule, namespace: str = "air") -> PassResult[fx.GraphModule]:
    open_scopes: list[fx.Node] = []
    super_kernels: list[fx.Node] = []
    for node in gm.graph.nodes:
        if is_marker(node, namespace, "enter"):
            open_scopes.append(node)
        elif is_marker(node, namespace, "exit"):
            if not open_scopes:
                raise UnpairedScopeError(
                    f"{node.name} ({namespace}.scope_exit) closes no open scope_enter; TorchAir refuses such a graph. "
                    "Check the model's scopes and any post_grad_custom_pre_pass / post_grad_custom_post_pass."
                )
            open_scopes.pop()
        elif str(node.target) == "npu.super_kernel_scope_begin.default":
            super_kernels.append(node)
        elif str(node.target) == "npu.super_kernel_scope_end.default":
            name = node.args[0] if node.args else None
            match = next((b for b in super_kernels if (b.args[0] if b.args else None) == name), None)
            if match is None:
                raise UnpairedScopeError(
                    f"{node.name} (super_kernel_scope_end {name!r}) has no super_kernel_scope_begin of that name; TorchAir refuses such a graph."
                )
            super_kernels.remove(match)
    if open_scopes or super_kernels:
        names = ", ".join(n.name for n in [*open_scopes, *super_kernels])
        raise UnpairedScopeError(
            f"{names} opened a scope that is never closed; TorchAir refuses such a graph (a graph break inside a scope also does this)."
        )
    return PassResult(gm, False)
