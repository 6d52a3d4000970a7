"""TorchAir's ``recover_view_inplace_pattern``: functionalization's out-of-place scatter
written back into a graph input becomes the in-place NPU op again.

The pattern is ``input -> view -> op -> view -> copy_(input, ...)`` where ``op`` is one
of torch_npu's out-of-place scatter ops with an in-place twin (``scatter_update`` ->
``scatter_update_``, ``npu_scatter_nd_update`` -> ``npu_scatter_nd_update_``,
``npu_quant_scatter`` -> ``npu_quant_scatter_``) whose first argument is the first view;
the input must be used only by that view and the ``copy_``, and the view only by the
op. The op is replaced by its in-place twin on the same arguments, and the ``copy_``
goes when nothing uses it. TorchAir runs this with CANN 8.3.RC1 or later; the ops exist
only where torch_npu (or a definition of its operators) is loaded, so elsewhere the pass
finds nothing.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx as fx

from fxlab.passes.infra import PassResult
from fxlab.passes.fx_args import arg_node

# Out-of-place torch_npu op name -> its in-place twin; the op's output 0 is written
# into its argument 0.
INPLACE_TWINS = {
    "scatter_update": "scatter_update_",
    "npu_scatter_nd_update": "npu_scatter_nd_update_",
    "npu_quant_scatter": "npu_quant_scatter_",
}


def inplace_twins() -> dict[Any, Any]:
    """``{out-of-place overload: in-place overload}`` for the ops this process defines."""
    twins = {}
    for name, inplace in INPLACE_TWINS.items():
        packets: list[Any] = [getattr(torch.ops.npu, n, None) if hasattr(torch.ops.npu, n) else None for n in (name, inplace)]
        if all(p is not None and hasattr(p, "default") for p in packets):
            twins[packets[0].default] = packets[1].default
    return twins


def _is_view(node: Any) -> bool:
    return isinstance(node, fx.Node) and node.op == "call_function" and node.target is torch.ops.aten.view.default


def _shape(node: fx.Node) -> Any:
    val = node.meta.get("val")
    return tuple(val.shape) if isinstance(val, torch.Tensor) else None


def matches(copy: fx.Node, twins: dict[Any, Any]) -> fx.Node | None:
    """The out-of-place op of ``copy``'s pattern, or ``None`` when ``copy`` is no such
    write-back."""
    if copy.op != "call_function" or copy.target is not torch.ops.aten.copy_.default or len(copy.args) != 2:
        return None
    dst, post_view = copy.args
    if not (isinstance(dst, fx.Node) and dst.op == "placeholder" and isinstance(post_view, fx.Node)):
        return None
    if post_view.op == "placeholder" or _shape(dst) is None or _shape(dst) != _shape(post_view) or not _is_view(post_view):
        return None
    op = post_view.args[0]
    if not (isinstance(op, fx.Node) and op.op == "call_function" and op.target in twins):
        return None
    pre_view = arg_node(op)
    if not _is_view(pre_view) or pre_view.args[0] is not dst:
        return None
    return op if len(pre_view.users) == 1 and len(dst.users) == 2 else None


def recover_view_inplace_pattern(gm: fx.GraphModule, *, cann_supported: bool = True) -> PassResult[fx.GraphModule]:
    """Rewrite every matched pattern of ``gm`` in place.
    ``cann_supported=False`` is a CANN before 8.3.RC1, where TorchAir skips the pass."""
    twins = inplace_twins()
    if not cann_supported or not twins:
        return PassResult(gm, False)
    graph = gm.graph
    found = [(copy, op) for copy in graph.nodes if (op := matches(copy, twins)) is not None]
    for copy, op in found:
        with graph.inserting_after(op):
            inplace = graph.call_function(twins[op.target], op.args, op.kwargs)
        inplace.name = f"{op.name}_inplace"
        op.replace_all_uses_with(inplace, propagate_meta=True)
        if not copy.users:
            graph.erase_node(copy)
        graph.erase_node(op)
    if found:
        graph.lint()
        gm.recompile()
    return PassResult(gm, bool(found), changed_nodes=[f"{op.name}_inplace" for _, op in found])
