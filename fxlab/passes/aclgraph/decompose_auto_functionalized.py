"""Inductor's ``decompose_auto_functionalized``, which TorchAir runs after re-inplacing the
graph inputs: each ``auto_functionalized`` / ``auto_functionalized_v2`` node becomes the
custom in-place op itself, on clones of the bases that still need one
(``meta["only_clone_these_tensors"]``, set by ``reinplace_input_mutated_ops``) and on the
bases themselves otherwise; then ``get_attr`` nodes nothing reads any more go.

Inductor's pass is used as it is (importing Inductor takes a second or two), and only on
a graph that has such nodes; on any other graph its pattern pass finds nothing and only
its ``get_attr`` clean-up can act, which is done here without importing it.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx as fx
from torch._guards import detect_fake_mode

from fxlab.passes.infra import PassResult


def _wrappers() -> tuple[Any, ...]:
    return tuple(
        t for t in (getattr(torch.ops.higher_order, n, None) for n in ("auto_functionalized", "auto_functionalized_v2")) if t is not None
    )


def decompose_auto_functionalized(gm: fx.GraphModule) -> PassResult[fx.GraphModule]:
    wrappers = _wrappers()
    found = [n for n in gm.graph.nodes if n.op == "call_function" and n.target in wrappers]
    if found:
        _inductor_decompose(gm)
    else:
        _drop_unread_get_attrs(gm)
    return PassResult(gm, False, notes=[f"{n.name}: the custom op runs in place" for n in found])


def _inductor_decompose(gm: fx.GraphModule) -> None:
    # lazy: Inductor takes over a second to import; only a graph with auto_functionalized nodes needs it
    from torch._inductor.fx_passes.post_grad import decompose_auto_functionalized as inductor_pass
    from torch._inductor.virtualized import V

    fake_mode = detect_fake_mode([n.meta.get("val") for n in gm.graph.nodes if n.op == "placeholder"])
    with V.set_fake_mode(fake_mode):
        inductor_pass(gm.graph)


def _drop_unread_get_attrs(gm: fx.GraphModule) -> None:
    """Inductor's clean-up: unread ``get_attr`` nodes go, and the sub-modules only they named."""
    unread = [n for n in gm.graph.nodes if n.op == "get_attr" and not n.users]
    read = {n.target for n in gm.graph.nodes if n.op == "get_attr" and n.users}
    for node in unread:
        gm.graph.erase_node(node)
    for target in dict.fromkeys(n.target for n in unread):
        if target not in read and isinstance(getattr(gm, str(target), None), fx.GraphModule):
            delattr(gm, str(target))
