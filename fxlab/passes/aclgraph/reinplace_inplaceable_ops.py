"""TorchAir's ``reinplace_inplaceable_ops`` (not when ``debug.aclgraph.
disable_reinplace_inplaceable_ops_pass``): ``b = foo(a)`` becomes ``foo_(a)`` where nothing
can tell the difference, with a stream rule on top of torch's re-inplacing.

The algorithm is ``torch.fx.passes.reinplace``'s (see there for the full argument), on a
fake-tensor run of the graph that records which nodes share memory:

1. an op whose first argument is a tensor, with an in-place variant of matching schema;
   the first argument must have the result's element count and dtype, no internal
   overlap, not be passed twice, and not share memory with a graph input;
2. no alias of it may be read after the op, except by a ``{view}_scatter`` that would
   only write back what the op wrote (that scatter is then dropped);
3. TorchAir's addition: the readers of the written tensor all run on one stream
   (:mod:`~fxlab.passes.aclgraph.stream_users`); and torch_npu's functional
   multi-output operators are swapped whole for their in-place operators (no check 1-2);
4. a re-inplaced ``{view}_scatter(base, src, ...)`` becomes ``view(base, ...)`` +
   ``copy_(view, src)``; later readers of the op's result read ``a``.

Graph inputs are never written here (``reinplace_input_mutated_ops`` handles inputs a
trailing ``copy_`` writes anyway). TorchAir skips the pass, leaving the graph as it was,
when torch's fake-tensor run fails on the graph.

One step differs from torch's and is followed as TorchAir's code has it: when a
``{view}_scatter`` goes (step 2), torch's readers of the scatter read its base, TorchAir's
read the re-inplaced op's own input, the view (:data:`SCATTER_READ_HAZARD` notes it). Its
own runs never get there: step 2 replays the view on the pass's own fake tensors, and
TorchAir's compiler runs inside aot_autograd with another fake mode entered
(:mod:`fxlab.passes.compiler_mode`, which fxlab's pipeline enters too), so the replay
fails and no scatter of a view of an intermediate is ever dropped: the scatter itself is
written in place (step 4) and the op on the view stays functional.

Neither pass looks at the op's other inputs: ``sub(x[..., 1:], x[..., :-1])`` becomes
``sub_`` writing memory it still reads (GPT-2's position ids). Torch refuses such an op on
CPU ("some elements of the input tensors and the written-to tensor refer to a single
memory location"); an NPU kernel may read elements it already wrote. The pass notes it
(:data:`OVERLAP_HAZARD`, torch's own test: same storage, both dense, the byte ranges meet
without being the same); the numeric check runs the op as out-of-place + ``copy_``.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Any

import torch
import torch.fx as fx
from torch._prims_common import is_non_overlapping_and_dense_or_false
from torch._subclasses.fake_tensor import FakeTensor
from torch.fx.passes.reinplace import (
    _VIEW_INVERSE_MAP,
    _FunctionalizationMetadataProp,
    _get_all_later_node_usages,
    _get_view_inverse_node_usages,
    _maybe_get_inplace_op,
)
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils import _pytree as pytree
from torch.utils._pytree import tree_map_only

from fxlab.passes.fx_args import arg_node
from fxlab.passes.aclgraph.stream_users import MultiInplaceOp, multi_inplace_ops, writes_are_stream_safe
from fxlab.passes.infra import PassResult
from fxlab.passes.stream_labels import annotate_stream_scopes
from fxlab.passes.torchair_refusals import HAZARD


SCATTER_READ_HAZARD = f"{HAZARD} (a dropped scatter's readers)"
OVERLAP_HAZARD = f"{HAZARD} (overlapping in-place op)"


def _storage(value: Any) -> StorageWeakRef:
    return StorageWeakRef(value._typed_storage())


def _storages(value: Any) -> set[StorageWeakRef]:
    return {_storage(x) for x in pytree.tree_leaves(value) if isinstance(x, FakeTensor)}


def _partial_overlap(a: Any, b: Any) -> bool:
    """ATen's ``get_overlap_status(a, b) == PARTIAL``: one storage, both dense, byte ranges
    that meet and differ."""
    if not (isinstance(a, FakeTensor) and isinstance(b, FakeTensor)) or a.numel() == 0 or b.numel() == 0:
        return False
    if _storage(a) != _storage(b) or not (is_non_overlapping_and_dense_or_false(a) and is_non_overlapping_and_dense_or_false(b)):
        return False
    a_start, b_start = a.storage_offset() * a.element_size(), b.storage_offset() * b.element_size()
    a_end, b_end = a_start + a.numel() * a.element_size(), b_start + b.numel() * b.element_size()
    if not all(isinstance(x, int) for x in (a_start, a_end, b_start, b_end)):  # symbolic sizes: not decided here
        return False
    return (a_start, a_end) != (b_start, b_end) and a_start < b_end and b_start < a_end


class _Reinplacer:
    def __init__(self, gm: fx.GraphModule, namespace: str = "air") -> None:
        self.gm = gm
        self.namespace = namespace
        self.multi = multi_inplace_ops()
        self.aliases: dict[StorageWeakRef, set[fx.Node]] = defaultdict(set)
        for node in gm.graph.nodes:
            for leaf in pytree.tree_leaves(node.meta.get("fake_result")):
                if isinstance(leaf, FakeTensor):
                    self.aliases[_storage(leaf)].add(node)
        self.inputs = {
            _storage(n.meta["fake_result"])
            for n in gm.graph.nodes
            if n.op == "placeholder" and isinstance(n.meta["fake_result"], torch.Tensor)
        }
        self.scatters_to_drop: set[fx.Node] = set()
        self.rewritten: list[str] = []
        self.faults: list[str] = []

    def run(self) -> None:
        for node in list(self.gm.graph.nodes):
            if node.op == "call_function" and node.graph is self.gm.graph:
                self._visit(node)
        for scatter in self.scatters_to_drop:
            self.gm.graph.erase_node(scatter)

    def _candidates(self, node: fx.Node) -> tuple[list[tuple[int, fx.Node]], dict[int, int], MultiInplaceOp | None] | None:
        """The written arguments (index, node), which output each becomes, and the
        multi-output operator's entry; None when the op is no candidate."""
        entry = self.multi.get(node.target)
        if entry is not None:
            if not all(0 <= i < len(node.args) for i in entry.mutated_args):
                return None
            outputs = len(pytree.tree_leaves(node.meta["fake_result"]))
            first = outputs - len(entry.mutated_args)
            written = [(i, arg_node(node, i)) for i in entry.mutated_args]
            ok = writes_are_stream_safe(node, entry.mutated_args, self.namespace)
            return (written, {i: first + k for k, i in enumerate(entry.mutated_args)}, entry) if ok else None
        if not isinstance(node.target, torch._ops.OpOverload):
            return None
        arguments = node.target._schema.arguments
        if len(arguments) < 1 or not isinstance(arguments[0].type, torch.TensorType):
            return None
        if not writes_are_stream_safe(node, [0], self.namespace):
            return None
        return [(0, arg_node(node))], {0: 0}, None

    def _visit(self, node: fx.Node) -> None:
        found = self._candidates(node)
        if found is None:
            return
        written, output_of, entry = found
        inverses: list[set[fx.Node]] = []
        for _, arg in written:
            if entry is None and not self._metadata_allows(node, arg):
                return
            storage = _storage(arg.meta["fake_result"])
            if storage in self.inputs:
                return
            if entry is not None:
                inverses.append(set())
                continue
            later = _get_all_later_node_usages(self.aliases[storage], node.meta["node_idx"])
            scatters = _get_view_inverse_node_usages(later, self.aliases[storage])
            if later - scatters:
                return
            inverses.append(scatters)
        if not self._rewrite(node, written, entry):
            return
        self._note_overlap(node, written)
        self._redirect(node, written, output_of, inverses)

    def _note_overlap(self, node: fx.Node, written: list[tuple[int, fx.Node]]) -> None:
        """An op now written in place that reads memory partially overlapping what it writes."""
        if node in self.scatters_to_drop:  # a {view}_scatter became view + copy_
            return
        targets = {arg for _, arg in written}
        readers = [a for a in pytree.tree_leaves((node.args, node.kwargs)) if isinstance(a, fx.Node) and a not in targets]
        for _, arg in written:
            for other in readers:
                if _partial_overlap(arg.meta.get("fake_result"), other.meta.get("fake_result")):
                    self.faults.append(
                        f"{OVERLAP_HAZARD}: {node.name} ({node.target}) writes {arg.name} while reading {other.name}, which partly "
                        "overlaps it: torch refuses this on CPU and an NPU kernel may read elements it already wrote; "
                        "TorchAir's reinplace_inplaceable_ops (as torch's) does not look at the op's other inputs"
                    )

    def _metadata_allows(self, node: fx.Node, arg: fx.Node) -> bool:
        mine, result = pytree.tree_leaves(arg.meta["fake_result"]), pytree.tree_leaves(node.meta["fake_result"])
        if not all(isinstance(leaf, torch.Tensor) for leaf in (*mine, *result)):
            return False  # an op that returns no tensor (npu_define._send) has nothing to write in place
        wrong = False
        if len(mine) == len(result):
            for a, b in zip(mine, result):
                wrong |= a.numel() != b.numel() or a.dtype != b.dtype or torch._debug_has_internal_overlap(a) == 1
        if wrong and node.target is not torch.ops.aten.resize.default:
            return False
        return sum(1 for x in node.args if x is arg) <= 1

    def _rewrite(self, node: fx.Node, written: list[tuple[int, fx.Node]], entry: MultiInplaceOp | None) -> bool:
        if node.target in _VIEW_INVERSE_MAP and node not in self.scatters_to_drop:
            with self.gm.graph.inserting_before(node):
                view = self.gm.graph.create_node(
                    "call_function", _VIEW_INVERSE_MAP[node.target], (written[0][1], *node.args[2:]), node.kwargs
                )
                self.gm.graph.create_node("call_function", torch.ops.aten.copy_.default, (view, node.args[1]), {})
            self.scatters_to_drop.add(node)
            self.rewritten.append(f"{node.name}: {node.target} -> {view.target} + copy_")
            return True
        inplace = entry.inplace_op if entry is not None else _maybe_get_inplace_op(node.target)
        if inplace is None:
            return False
        self.rewritten.append(f"{node.name}: {node.target} -> {inplace}")
        node.target = inplace
        return True

    def _redirect(self, node: fx.Node, written: list[tuple[int, fx.Node]], output_of: dict[int, int], inverses: list[set[fx.Node]]) -> None:
        """Merge the memory sets of input and result; later readers read the input."""
        results = pytree.tree_leaves(node.meta["fake_result"])
        for position, (index, arg) in enumerate(written):
            mine = _storage(arg.meta["fake_result"])
            out = output_of.get(index)
            theirs = _storage(results[out] if out is not None and out < len(results) else results[0])
            self.aliases[mine].update(self.aliases[theirs])
            self.aliases[theirs].update(self.aliases[mine])
            if position >= len(inverses):
                continue
            self.scatters_to_drop.update(inverses[position])
            for old in itertools.chain([node], inverses[position]):
                self._read_input_instead(node, old, arg)

    def _read_input_instead(self, node: fx.Node, old: fx.Node, new: fx.Node) -> None:
        readers = [n for n in old.users if n.meta["node_idx"] > node.meta["node_idx"]]
        if old is not node and readers and old.args[0] is not new:
            self.faults.append(
                f"{SCATTER_READ_HAZARD}: {', '.join(r.name for r in readers)} read {new.name} (what {node.name} wrote) where they read "
                f"{old.name}, the whole of {arg_node(old).name}: TorchAir's reinplace_inplaceable_ops replaces a dropped {old.target} by the "
                "re-inplaced op's input, torch's own pass by the scatter's base"
            )
        for reader in readers:
            reader.args = tree_map_only(fx.Node, lambda a: new if a == old else a, reader.args)
            reader.kwargs = tree_map_only(fx.Node, lambda a: new if a == old else a, reader.kwargs)
            old_storages, reader_storages = _storages(old.meta["fake_result"]), _storages(reader.meta["fake_result"])
            if len(old_storages) == 1 and len(reader_storages) == 1 and old_storages == reader_storages:
                (new_ref,) = _storages(new.meta["fake_result"])
                (reader_ref,) = reader_storages
                self.aliases[reader_ref].update(self.aliases[new_ref])
                self.aliases[new_ref].update(self.aliases[reader_ref])


def reinplace_inplaceable_ops(gm: fx.GraphModule, sample_inputs: list[Any], namespace: str = "air") -> PassResult[fx.GraphModule]:
    """Re-inplace ``gm`` in place; ``sample_inputs`` are the graph's (fake) inputs."""
    annotate_stream_scopes(gm, namespace)
    try:
        _FunctionalizationMetadataProp(gm).propagate(*sample_inputs)
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001 - TorchAir skips the pass on such graphs
        return PassResult(gm, False, notes=[f"skipped, as TorchAir skips it: the fake-tensor run failed ({type(exc).__name__}: {exc})"])
    reinplacer = _Reinplacer(gm, namespace)
    reinplacer.run()
    gm.recompile()
    return PassResult(gm, bool(reinplacer.rewritten), notes=reinplacer.rewritten + reinplacer.faults)
