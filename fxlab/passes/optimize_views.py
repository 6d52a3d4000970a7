"""TorchAir's view optimisation (``experimental_config.enable_view_optimize``, on by
default), as an FX pass.

TorchAir converts nothing at a view node (``permute``, ``view``, ``transpose``, ``t``,
``reshape``: its ``view_white_list``). It follows the chain of views from their base —
the view as computed on a contiguous copy of the base — and, where a non-view node
(or the graph output) reads the view, rebuilds it from the base for that reader: the
base itself when the chain comes back to the base's shape, else a ``Reshape`` to the
view's shape, or, for a strided view, ``Reshape`` / ``Transpose`` / ``Reshape`` derived
from its strides. A view is rebuilt once, at its first reader; later readers share it.
Views inside a scope other than a SuperKernel one are converted where they stand.

Here the same happens to the FX graph: view nodes are removed, and each rebuilt view is
a short chain of ``reshape`` / ``permute`` nodes placed just before its first reader.
Their GE ops belong to that reader, as in TorchAir: each new node carries
``meta["fxlab.ge_owner"]``, the reader's name. Views with symbolic sizes stay as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast
from collections.abc import Callable

import torch
import torch.fx as fx

from fxlab.passes.infra import PassResult

from fxlab.passes.annotate_scopes import SCOPES_KEY, annotate_scopes

GE_OWNER_KEY = "fxlab.ge_owner"
aten = torch.ops.aten
VIEW_TARGETS = frozenset({aten.permute.default, aten.view.default, aten.transpose.int, aten.t.default, aten.reshape.default})
SUPER_KERNEL_KEYS = frozenset({"_super_kernel_scope", "_super_kernel_options"})
# Meta keys a rebuilt node takes from its reader (where it came from, for every view).
_PROVENANCE_KEYS = ("stack_trace", "nn_module_stack", "source_fn_stack", "from_node", "fxlab.source", SCOPES_KEY, "fxlab.scope_attrs")


@dataclass(frozen=True)
class ViewOf:
    """A skipped view: its base node, the base's shape, and the view as computed on a
    contiguous tensor of the base's shape (a ``meta``-device tensor: only its shape and
    strides matter, and meta kernels are many times cheaper than fake tensors)."""

    base: fx.Node
    base_shape: list[int]
    meta: torch.Tensor


def contiguous_strides(shape: Sequence[int]) -> list[int]:
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return strides


def rebuild_steps(shape: list[int], stride: list[int], base_shape: list[int]) -> list[tuple[str, list[int]]]:
    """The ``("reshape", shape)`` / ``("permute", perm)`` steps that make a view of
    ``shape`` and ``stride`` from a contiguous base of ``base_shape``, as TorchAir's
    ``optimize_view`` derives them (empty: the view is the base)."""
    if shape == base_shape and stride == contiguous_strides(base_shape):
        return []
    # TorchAir's contiguity test receives (shape, stride) where it expects (stride,
    # shape); reproduced, as it decides between its two ways of rebuilding.
    if _torchair_contiguity_test(shape, stride):
        return [("reshape", shape)]
    kept = [(st, sh) for st, sh in zip(stride, shape) if st != 0 and sh != 1]
    if not kept:
        return [("reshape", shape)]
    need_transpose = any(kept[i][0] > kept[i - 1][0] for i in range(1, len(kept)))
    if not need_transpose:
        return [("reshape", shape)]
    order = sorted(range(len(kept)), key=lambda i: kept[i], reverse=True)
    perm = [order.index(i) for i in range(len(kept))]
    before, after = [kept[i][1] for i in order], [sh for _, sh in kept]
    steps = [] if before == base_shape else [("reshape", before)]
    steps.append(("permute", perm))
    return steps + ([] if after == shape else [("reshape", shape)])


def _torchair_contiguity_test(stride: list[int], shape: list[int]) -> bool:
    if len(stride) <= 1:
        return True
    if stride[-1] != 1:
        return False
    return all(stride[i] == stride[i + 1] * shape[i + 1] for i in range(len(shape) - 1))


def _skippable(node: fx.Node) -> bool:
    """TorchAir skips a view with no scope open, or only SuperKernel scopes."""
    frames = node.meta.get(SCOPES_KEY) or []
    if not frames:
        return True
    keys = {key for frame in frames for key in frame.get("attrs", {})}
    return bool(keys) and keys <= SUPER_KERNEL_KEYS


def _static(val: Any) -> bool:
    return isinstance(val, torch.Tensor) and all(isinstance(d, int) for d in (*val.shape, *val.stride()))


def _fake_mode(gm: fx.GraphModule) -> Any:
    from torch._guards import detect_fake_mode

    return detect_fake_mode([n.meta.get("val") for n in gm.graph.nodes if n.op == "placeholder"])


class ViewOptimizer:
    """One walk over a graph; see the module docstring."""

    def __init__(self, gm: fx.GraphModule) -> None:
        self.gm, self.graph = gm, gm.graph
        self.fake_mode = _fake_mode(gm)
        self.views: dict[fx.Node, ViewOf] = {}
        self.rebuilt: dict[fx.Node, fx.Node] = {}

    def run(self) -> bool:
        for node in list(self.graph.nodes):
            if node.op == "call_function" and node.target in VIEW_TARGETS and _skippable(node):
                view = self._follow(node)
                if view is not None:
                    self.views[node] = view
                    continue
            if node.op == "output" or (
                node.op == "call_function" and isinstance(node.target, (torch._ops.OpOverload, torch._ops.HigherOrderOperator))
            ):
                self._rebuild_inputs(node)
        for node in reversed(list(self.views)):
            if not node.users:
                self.graph.erase_node(node)
        if self.views:
            self.gm.recompile()
        return bool(self.views)

    def _follow(self, node: fx.Node) -> ViewOf | None:
        source = node.args[0]
        val = node.meta.get("val")
        if not isinstance(source, fx.Node) or not _static(val) or not _static(source.meta.get("val")):
            return None
        parent = self.views.get(source) or self._base_view(source)
        meta = cast(Callable[..., Any], node.target)(parent.meta, *node.args[1:], **node.kwargs)
        return ViewOf(parent.base, parent.base_shape, meta)

    def _base_view(self, base: fx.Node) -> ViewOf:
        val = base.meta["val"]
        shape = list(val.shape)
        meta = torch.empty_strided(shape, contiguous_strides(shape), dtype=val.dtype, device="meta")
        return ViewOf(base, shape, meta)

    def _mode(self) -> Any:
        import contextlib

        return self.fake_mode if self.fake_mode is not None else contextlib.nullcontext()

    def _rebuild_inputs(self, reader: fx.Node) -> None:
        def rebuilt(arg: fx.Node) -> fx.Node:
            return self._rebuild(arg, reader) if arg in self.views else arg

        reader.args = fx.node.map_arg(reader.args, rebuilt)
        reader.kwargs = fx.node.map_arg(reader.kwargs, rebuilt)

    def _rebuild(self, view_node: fx.Node, reader: fx.Node) -> fx.Node:
        done = self.rebuilt.get(view_node)
        if done is not None:
            return done
        view = self.views[view_node]
        out = view.base
        steps = rebuild_steps(list(view.meta.shape), list(view.meta.stride()), view.base_shape)
        for i, (kind, values) in enumerate(steps):
            last = i == len(steps) - 1
            out = self._add(
                reader, aten.reshape.default if kind == "reshape" else aten.permute.default, out, values, view_node if last else None
            )
        self.rebuilt[view_node] = out
        return out

    def _add(self, reader: fx.Node, target: Any, source: fx.Node, values: list[int], view_node: fx.Node | None) -> fx.Node:
        """A rebuilt step before ``reader``; the last step of a chain takes the view's own
        value (what its readers expect), an inner one gets its value computed."""
        with self.graph.inserting_before(reader):
            node = self.graph.call_function(target, (source, values))
        node.meta.update({k: reader.meta[k] for k in _PROVENANCE_KEYS if k in reader.meta})
        if view_node is not None:
            node.meta["val"] = view_node.meta["val"]
        else:
            with self._mode():
                node.meta["val"] = target(source.meta["val"], values)
        node.meta[GE_OWNER_KEY] = reader.name
        return node


def optimize_views(gm: fx.GraphModule) -> PassResult[fx.GraphModule]:
    """Apply TorchAir's view optimisation to ``gm`` in place."""
    annotate_scopes(gm)  # which views sit in which scopes
    return PassResult(gm, ViewOptimizer(gm).run())
