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
``meta["fxlab.ge_owner"]``, the reader's name.

With symbolic sizes (dynamic shapes) TorchAir does the same from the symbols it knows: a
``view``/``reshape`` whose size list names symbols records which graph value gives each
(its ``mapsym``, shared by every view of one base), and is skipped only when each symbolic
size of its result is one of them; a rebuilt ``Reshape`` then takes its symbolic sizes from
those values, or from the base's own shape (``Gather(Shape(base))``), the first value found
for a symbol serving the rest of the graph — except those found by the graph's first
rebuilt view, which TorchAir's map of them loses (a :func:`view_reshape` node); the skipped
view's own size list still becomes a ``Pack`` (a :func:`view_sizes` node).
Comparisons of sizes and strides use the traced values, as TorchAir's do.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx
from torch._guards import detect_fake_mode
from torch._refs import _reshape_view_helper
from torch.fx.experimental.symbolic_shapes import optimization_hint

from fxlab.passes.infra import PassResult

from fxlab.passes.annotate_scopes import SCOPES_KEY, annotate_scopes
from fxlab.passes.symbolic_lists import is_symbolic_list

GE_OWNER_KEY = "fxlab.ge_owner"
aten = torch.ops.aten
VIEW_TARGETS = frozenset({aten.permute.default, aten.view.default, aten.transpose.int, aten.t.default, aten.reshape.default})
SUPER_KERNEL_KEYS = frozenset({"_super_kernel_scope", "_super_kernel_options"})
FIRST_REBUILD = " (first rebuilt view)"  # marks the keys of the graph's first rebuilt view
# Meta keys a rebuilt node takes from its reader (where it came from, for every view).
_PROVENANCE_KEYS = ("stack_trace", "nn_module_stack", "source_fn_stack", "from_node", "fxlab.source", SCOPES_KEY, "fxlab.scope_attrs")


@dataclass(frozen=True)
class ViewOf:
    """A skipped view: its base node, the base's sizes (ints and ``SymInt`` s), the view as
    computed on a contiguous tensor of the base's sizes (a ``meta``-device tensor for
    static sizes: only its shape and strides matter, and meta kernels are many times
    cheaper than fake tensors; a fake one for symbolic sizes), and the graph values that
    give the symbolic sizes named by views of the base (symbol -> node)."""

    base: fx.Node
    base_shape: list[Any]
    meta: torch.Tensor
    sizes: dict[str, fx.Node] = field(default_factory=dict)


def view_reshape(x: torch.Tensor, base: torch.Tensor, dims: list[Any]) -> torch.Tensor:
    """``x`` reshaped to ``dims``: a rebuilt view with symbolic sizes. Each dim is an int,
    or ``(value, symbol, base_dim)``: the graph value a view named for the symbol (or
    ``None``), the key of the symbol's value in the graph, and the base's dim that has its
    size (or ``-1``). TorchAir builds the ``Reshape``'s size ``Pack`` from the value it
    first found for each symbol in the graph, else the value a view named, else
    ``Gather(Shape(base))``."""
    sizes = [d if isinstance(d, int) else (d[0] if d[0] is not None else base.size(d[2])) for d in dims]
    return x.reshape(sizes)


def view_sizes(sizes: list[Any]) -> list[Any]:
    """A size list naming symbolic sizes, as TorchAir packs it while reading a node's
    arguments: the list of a skipped ``view``/``reshape`` (its ``Pack`` stays in the graph,
    read by nothing), or a reader's, packed before the views it reads are rebuilt."""
    return sizes


def _hint(value: Any) -> int:
    """A size's traced value (TorchAir compares symbolic sizes and strides by it)."""
    return value if isinstance(value, int) else optimization_hint(value)


def contiguous_strides(shape: Sequence[Any]) -> list[Any]:
    strides: list[Any] = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return strides


def _same(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return len(a) == len(b) and all(_hint(x) == _hint(y) for x, y in zip(a, b))


def rebuild_steps(shape: list[Any], stride: list[Any], base_shape: list[Any]) -> list[tuple[str, list[Any]]]:
    """The ``("reshape", shape)`` / ``("permute", perm)`` steps that make a view of
    ``shape`` and ``stride`` from a contiguous base of ``base_shape``, as TorchAir's
    ``optimize_view`` derives them (empty: the view is the base)."""
    if _same(shape, base_shape) and _same(stride, contiguous_strides(base_shape)):
        return []
    # TorchAir's contiguity test receives (shape, stride) where it expects (stride,
    # shape); reproduced, as it decides between its two ways of rebuilding.
    if _torchair_contiguity_test(shape, stride):
        return [("reshape", shape)]
    kept = [(st, sh) for st, sh in zip(stride, shape) if _hint(st) != 0 and _hint(sh) != 1]
    if not kept:
        return [("reshape", shape)]
    need_transpose = any(_hint(kept[i][0]) > _hint(kept[i - 1][0]) for i in range(1, len(kept)))
    if not need_transpose:
        return [("reshape", shape)]
    order = sorted(range(len(kept)), key=lambda i: (_hint(kept[i][0]), _hint(kept[i][1])), reverse=True)
    perm = [order.index(i) for i in range(len(kept))]
    before, after = [kept[i][1] for i in order], [sh for _, sh in kept]
    steps = [] if _same(before, base_shape) else [("reshape", before)]
    steps.append(("permute", perm))
    return steps + ([] if _same(after, shape) else [("reshape", shape)])


def _torchair_contiguity_test(stride: list[Any], shape: list[Any]) -> bool:
    if len(stride) <= 1:
        return True
    if _hint(stride[-1]) != 1:
        return False
    return all(_hint(stride[i]) == _hint(stride[i + 1]) * _hint(shape[i + 1]) for i in range(len(shape) - 1))


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
    return detect_fake_mode([n.meta.get("val") for n in gm.graph.nodes if n.op == "placeholder"])


class ViewOptimizer:
    """One walk over a graph; see the module docstring."""

    def __init__(self, gm: fx.GraphModule) -> None:
        self.gm, self.graph = gm, gm.graph
        self.fake_mode = _fake_mode(gm)
        self.views: dict[fx.Node, ViewOf] = {}
        self.bases: dict[fx.Node, ViewOf] = {}  # a base whose views were skipped: its sizes map
        self.rebuilt: dict[fx.Node, fx.Node] = {}
        self.rebuilt_any = False  # whether a view was rebuilt yet (see _symbolic_dim)
        # Static views computed, by what decides them: a model's repeated layers view
        # tensors of the same layouts the same ways (torch's Python reference is slow).
        self.static_views: dict[tuple[Any, ...], torch.Tensor] = {}

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
        if not isinstance(source, fx.Node) or not isinstance(val, torch.Tensor) or not isinstance(source.meta.get("val"), torch.Tensor):
            return None
        symbolic = not (_static(val) and _static(source.meta["val"]))
        if symbolic and self.fake_mode is None:
            return None
        parent = self.views.get(source) or self.bases.get(source) or self._base_view(source)
        if node.target in (aten.view.default, aten.reshape.default):
            _record_sizes(parent.sizes, node.args[1])
            if any(isinstance(d, torch.SymInt) and str(d) not in parent.sizes for d in val.shape):
                return None  # TorchAir converts it where it stands: a size it cannot name
            self._keep_size_pack(node)
        if parent.base is source and source not in self.views:
            self.bases.setdefault(source, parent)
        view: Any = node.target  # one of VIEW_TARGETS
        args = _values(node.args[1:])
        if symbolic:
            with self._mode():
                meta = view(parent.meta, *args, **node.kwargs)
        else:
            meta = self._static_view(view, parent.meta, args)
        return ViewOf(parent.base, parent.base_shape, meta, parent.sizes)

    def _static_view(self, view: Any, meta: torch.Tensor, args: Sequence[Any]) -> torch.Tensor:
        """:func:`as_fake_views` of a static view, once per layout and arguments (the result is
        a ``meta``-device tensor only read for its shape and strides, so views share it)."""
        try:
            key = (view, tuple(meta.shape), meta.stride(), meta.storage_offset(), meta.dtype, _frozen(args))
            hash(key)
        except TypeError:  # an argument that is no plain value
            return as_fake_views(view, meta, args)
        found = self.static_views.get(key)
        if found is None:
            found = self.static_views[key] = as_fake_views(view, meta, args)
        return found

    def _keep_size_pack(self, node: fx.Node) -> None:
        """A skipped view's symbolic size list still becomes its ``Pack`` (see :func:`view_sizes`)."""
        if not is_symbolic_list(node.args[1]):
            return
        with self.graph.inserting_before(node):
            pack = self.graph.call_function(view_sizes, (node.args[1],))
        pack.meta.update({k: node.meta[k] for k in _PROVENANCE_KEYS if k in node.meta})
        pack.meta[GE_OWNER_KEY] = node.name

    def _base_view(self, base: fx.Node) -> ViewOf:
        val = base.meta["val"]
        shape = list(val.shape)
        if _static(val):
            meta = torch.empty_strided(shape, contiguous_strides(shape), dtype=val.dtype, device="meta")
        else:
            with self._mode():
                meta = torch.empty_strided(shape, contiguous_strides(shape), dtype=val.dtype, device=val.device)
        return ViewOf(base, shape, meta, {})

    def _mode(self) -> Any:
        return self.fake_mode if self.fake_mode is not None else contextlib.nullcontext()

    def _rebuild_inputs(self, reader: fx.Node) -> None:
        def rebuilt(arg: fx.Node) -> fx.Node:
            return self._rebuild(arg, reader) if arg in self.views else arg

        if any(arg in self.views and arg not in self.rebuilt for arg in reader.all_input_nodes):
            self._pack_sizes_first(reader)
        reader.args = fx.node.map_arg(reader.args, rebuilt)
        reader.kwargs = fx.node.map_arg(reader.kwargs, rebuilt)

    def _pack_sizes_first(self, reader: fx.Node) -> None:
        """TorchAir packs a reader's symbolic size lists while reading its arguments,
        before it rebuilds the views the reader reads: each such list becomes a
        :func:`view_sizes` node placed first, and the reader takes its ``Pack``."""

        def packed(arg: Any) -> Any:
            if not is_symbolic_list(arg):
                return arg
            with self.graph.inserting_before(reader):
                node = self.graph.call_function(view_sizes, (arg,))
            node.meta.update({k: reader.meta[k] for k in _PROVENANCE_KEYS if k in reader.meta})
            node.meta[GE_OWNER_KEY] = reader.name
            return node

        reader.args = tuple(packed(a) for a in reader.args)
        reader.kwargs = {k: packed(v) for k, v in reader.kwargs.items()}

    def _rebuild(self, view_node: fx.Node, reader: fx.Node) -> fx.Node:
        done = self.rebuilt.get(view_node)
        if done is not None:
            return done
        view = self.views[view_node]
        out = view.base
        steps = rebuild_steps(list(view.meta.shape), list(view.meta.stride()), view.base_shape)
        first, self.rebuilt_any = bool(steps) and not self.rebuilt_any, self.rebuilt_any or bool(steps)
        for i, (kind, values) in enumerate(steps):
            last = i == len(steps) - 1
            if kind == "permute":
                args: tuple[Any, ...] = (out, values)
                target: Any = aten.permute.default
            elif any(isinstance(size, torch.SymInt) for size in values):
                args, target = (out, view.base, [self._symbolic_dim(size, view, first) for size in values]), view_reshape
            else:
                args, target = (out, values), aten.reshape.default
            out = self._add(reader, target, args, view_node if last else None)
        self.rebuilt[view_node] = out
        return out

    @staticmethod
    def _symbolic_dim(size: Any, view: ViewOf, first: bool) -> Any:
        """One dim of a :func:`view_reshape`: an int, or (the value a view named for the
        symbol, the key its value is kept under for the graph, the base's dim of that
        size). The key is the symbol, except in the graph's first rebuilt view: TorchAir's
        graph-wide map of the values it found is created only as that view's rebuild
        ends, and replaces the one its ``Reshape`` s wrote to, so what they found serves
        that view alone (:data:`FIRST_REBUILD`)."""
        if not isinstance(size, torch.SymInt):
            return size
        base_dim = next((d for d, b in enumerate(view.base_shape) if isinstance(b, torch.SymInt) and _hint(b) == _hint(size)), -1)
        return (view.sizes.get(str(size)), f"{str(size)}{FIRST_REBUILD if first else ''}", base_dim)

    def _add(self, reader: fx.Node, target: Any, args: tuple[Any, ...], view_node: fx.Node | None) -> fx.Node:
        """A rebuilt step before ``reader``; the last step of a chain takes the view's own
        value (what its readers expect), an inner one gets its value computed."""
        with self.graph.inserting_before(reader):
            node = self.graph.call_function(target, args)
        node.meta.update({k: reader.meta[k] for k in _PROVENANCE_KEYS if k in reader.meta})
        if view_node is not None:
            node.meta["val"] = view_node.meta["val"]
        else:
            with self._mode():
                node.meta["val"] = target(*_values(args))
        node.meta[GE_OWNER_KEY] = reader.name
        return node


def as_fake_views(view: Any, meta: torch.Tensor, args: Sequence[Any]) -> torch.Tensor:
    """``view(meta, *args)`` on a ``meta``-device tensor with the strides a fake tensor gets,
    which TorchAir's view optimisation compares: a fake tensor's ``view`` is torch's Python
    reference (``_reshape_view_helper``), whose strides of size-1 dims can differ from the
    C++ kernel's (a ``[1, 2, 8]`` view of a permuted ``[2, 1, 1, 8]`` view: ``(8, 8, 1)``,
    not ``(16, 8, 1)``), and ``reshape`` is that ``view``, or a contiguous copy where the
    C++ kernel cannot view."""
    if view is aten.reshape.default:
        try:
            meta.view(*args)
        except RuntimeError:
            meta = meta.contiguous()
    elif view is not aten.view.default:
        return view(meta, *args)
    return _reshape_view_helper(meta, *args, allow_copy=False)


def _frozen(value: Any) -> Any:
    """``value`` with its lists as tuples (a key's part)."""
    return tuple(_frozen(v) for v in value) if isinstance(value, (list, tuple)) else value


def _values(args: Any) -> Any:
    """``args`` with each node replaced by its value."""
    return fx.node.map_arg(args, lambda n: n.meta["val"])


def _record_sizes(sizes: dict[str, fx.Node], size_arg: Any) -> None:
    """Which graph value gives each symbolic size named in a view's size list (TorchAir
    reads them from the list's ``Pack``; a list of ints names none)."""
    if not is_symbolic_list(size_arg):
        return
    for item in size_arg:
        if isinstance(item, fx.Node) and isinstance(item.meta.get("val"), torch.SymInt):
            sizes[str(item.meta["val"])] = item


def optimize_views(gm: fx.GraphModule) -> PassResult[fx.GraphModule]:
    """Apply TorchAir's view optimisation to ``gm`` in place."""
    annotate_scopes(gm)  # which views sit in which scopes
    return PassResult(gm, ViewOptimizer(gm).run())
