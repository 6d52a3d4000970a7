"""Building an Ascend IR graph: the API converters call.

A :class:`GraphBuilder` owns one :class:`IrGraph` under construction. While a converter
runs, the builder is *current* (a context variable, like TorchAir's default GE graph), so
converter code reads as TorchAir's does: ``ge.op("Add", {"x1": a, "x2": b})`` returns a
:class:`Tensor` handle. The builder names ops the way TorchAir does (``Add``, ``Add_1``,
...), stamps each op with the FX node and source line being converted, and applies the
scope attrs (SuperKernel, core limits, ...) pushed by ``air::scope_enter`` to every op a
node's conversion creates.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
from dataclasses import dataclass
from typing import Any, cast
from collections.abc import Iterator, Mapping, Sequence

import torch

from fxlab.ir.model import NO_ATTRS, UNKNOWN_RANK, Attr, AttrKind, DataType, FrozenAttrs, IrGraph, IrOp, TensorDesc, attr_of

# Scope attrs stored as bools; every other scope attr is a string (TorchAir's choice).
BOOL_SCOPE_ATTRS = frozenset({"_op_exec_never_timeout", "_enable_inner_parallel"})
SUPER_KERNEL_ATTRS = ("_super_kernel_scope", "_super_kernel_options")

# TorchAir writes an output desc's dtype only when something sets it: a ``Data`` or
# ``Const`` when it is made, a converter's result (from the FX node's fake value, once the
# converter returns) and the few outputs a converter sets by hand. Every other output desc
# keeps the proto default (undefined), and an op reading it copies that unset desc as its
# input desc; ``_normalize_ge_graph`` writes ``DT_FLOAT`` into each unset desc before GE
# infers the real types. :meth:`GraphBuilder.unset_helper_dtypes` does the same. Nor does
# TorchAir write an output shape it was not given: GE infers it. Such a desc keeps fxlab's
# shape when fxlab inferred one for the converter, else it says "unknown rank"
# (:data:`UNKNOWN_RANK`, GE's ``dim: -2``), never ``()``, which would read as a scalar.
UNSET_DTYPE = DataType.DT_FLOAT
# On a desc with symbolic sizes: the sizes as the FX value prints them (``[s0, 4]``).
SYMBOLIC_SHAPE_ATTR = "_fxlab_symbolic_shape"
DTYPE_SET_AT_CREATION = frozenset({"Data", "RefData", "Const"})


class Tensor:
    """One output of an op in the graph being built: ``"<op name>:<index>"``."""

    __slots__ = ("op", "index")

    def __init__(self, op: IrOp, index: int) -> None:
        self.op = op
        self.index = index

    @property
    def tensor(self) -> str:
        return f"{self.op.name}:{self.index}"

    @property
    def controller(self) -> str:
        return f"{self.op.name}:-1"

    @property
    def desc(self) -> TensorDesc:
        return self.op.output_desc[self.index]

    @property
    def dtype(self) -> DataType:
        return self.op.output_desc[self.index].dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self.op.output_desc[self.index].shape

    @property
    def rank(self) -> int:
        return len(self.op.output_desc[self.index].shape)

    @property
    def fake(self) -> Any:
        """The FX value (fake tensor or size) this tensor stands for, as TorchAir's
        ``set_meta`` gives one to a graph input's and each node result's tensor; ``None``
        for a tensor a converter made on its way."""
        return current_builder().fake_values.get(self.tensor)

    @property
    def symsize(self) -> list[Any] | None:
        """The sizes of :attr:`fake` (ints and ``SymInt`` s), TorchAir's ``symsize``."""
        fake = self.fake
        return list(fake.size()) if isinstance(fake, torch.Tensor) else None

    @property
    def symbolic_shape(self) -> str:
        """The sizes as TorchAir prints them to compare two tensors' (``[s0, 4]``;
        ``None`` for a tensor with no FX value)."""
        return str(self.symsize)

    def __repr__(self) -> str:
        return f"Tensor({self.tensor}, {self.dtype.name}, {list(self.shape)})"


InputSpec = Mapping[str, "Tensor | None"] | Sequence["Tensor | None"]


@dataclass
class Provenance:
    fx_node: str | None = None
    source: str | None = None


class GraphBuilder:
    """Accumulates ops into one :class:`IrGraph`."""

    def __init__(self, name: str) -> None:
        self.graph = IrGraph(name=name)
        self.taken_names: set[str] = set()
        # Per op type, its names not taken yet, in order (an endless iterator).
        self._candidates: dict[str, Iterator[str]] = {}
        self.explicit_names = 0  # ops named by their caller (Data, NetOutput)
        self.provenance = Provenance()
        self.scope_stack: list[dict[str, str]] = []
        # Tensor name -> the FX value it stands for (graph inputs and node results).
        self.fake_values: dict[str, Any] = {}
        # Attrs with the current scopes applied, by the id of the attrs they were made
        # from (with that object, to keep the id its own); emptied when scopes change.
        self._scoped_attrs: dict[int, tuple[FrozenAttrs, FrozenAttrs]] = {}
        # State converters share across one graph's conversion, by key (TorchAir keeps
        # such state on its graph: the RNG seed and offsets of each generator).
        self.graph_state: dict[Any, Any] = {}
        # Outputs ("<op>:<index>") whose dtype a converter set by hand, as TorchAir's
        # converters set ``desc.dtype`` on some helper outputs.
        self.dtype_set_by_hand: set[str] = set()
        # Ops the graph keeps although nothing reads them: control inputs of NetOutput.
        self.must_keep: list[Tensor] = []
        # Ops made with no output shapes given: what their converter does not set stays unknown.
        self.made_without_shapes: set[str] = set()

    # -- naming -----------------------------------------------------------------------
    def unique_name(self, op_type: str, name: str | None = None) -> str:
        """TorchAir's scheme: the type itself first, then ``Type_1``, ``Type_2``, ...
        (the first of those not taken; numbers once passed are not tried again)."""
        if name is not None:
            self.explicit_names += 1
            if name in self.taken_names:
                raise ValueError(f"duplicated GE op name {name!r}")
            self.taken_names.add(name)
            return name
        candidate = next(self.name_source(op_type))
        self.taken_names.add(candidate)
        return candidate

    def name_source(self, op_type: str) -> Iterator[str]:
        """The names of ``op_type`` :meth:`unique_name` gives, one per ``next``: the first
        candidate not in ``taken_names`` then. The caller adds each name it draws to
        ``taken_names``; names drawn for several types before being added are still those
        of one at a time once each type has drawn its first name."""
        candidates = self._candidates.get(op_type)
        if candidates is None:
            candidates = self._candidates[op_type] = self._free_names(op_type)
        return candidates

    def _free_names(self, op_type: str) -> Iterator[str]:
        """The names of ``op_type`` not taken when asked for, in order: the taken set is
        read lazily, at each ``next``."""
        return itertools.filterfalse(self.taken_names.__contains__, name_candidates(op_type))

    # -- op creation ------------------------------------------------------------------
    def add_op(
        self,
        op_type: str,
        inputs: InputSpec = (),
        attrs: Mapping[str, Any] | None = None,
        outputs: Sequence[str] | int = ("y",),
        *,
        dtypes: Sequence[DataType] | DataType | None = None,
        shapes: Sequence[tuple[int, ...]] | None = None,
        dependencies: Sequence[Tensor] = (),
        name: str | None = None,
    ) -> list[Tensor]:
        """Append one op and return a handle per output.

        ``inputs`` maps prototype input names to tensors (a sequence gets ``x0, x1, ...``;
        ``None`` is an absent optional input). Output dtypes default to the first input's.
        """
        # The hot path of every conversion: each list is built once and handed to IrOp.
        # The name is taken first, so a call that then fails still uses it up.
        op_name = self.unique_name(op_type, name)
        op_inputs = [dep.controller for dep in dependencies] if dependencies else []
        input_desc: list[TensorDesc] = []
        first_dtype = DataType.DT_UNDEFINED
        for input_name, tensor in _named_inputs(inputs):
            if tensor is None:
                op_inputs.append("")
                input_desc.append(TensorDesc(input_name, attrs={"_is_unfed_optional": _UNFED_OPTIONAL}))
                continue
            if type(tensor) is not Tensor and not isinstance(tensor, Tensor):
                raise TypeError(f"{op_type} input {input_name!r} must be a graph Tensor, got {type(tensor).__name__}")
            src = tensor.op.output_desc[tensor.index]
            op_inputs.append(f"{tensor.op.name}:{tensor.index}")
            input_desc.append(TensorDesc(input_name, src.dtype, src.shape, src.layout))
            if first_dtype is DataType.DT_UNDEFINED:
                first_dtype = src.dtype
        # Made as the op keeps them: IrOp would copy any other dict into a FrozenAttrs.
        op_attrs = FrozenAttrs(zip(attrs.keys(), map(attr_of, attrs.values()))) if attrs else NO_ATTRS
        output_desc = _output_descs(outputs, dtypes, shapes, first_dtype)
        if shapes is None:
            self.made_without_shapes.add(op_name)
        provenance = self.provenance
        op = IrOp(op_name, op_type, op_inputs, op_attrs, input_desc, output_desc, provenance.fx_node, provenance.source)
        self.graph.ops.append(op)
        if len(output_desc) == 1:
            return [Tensor(op, 0)]
        return [Tensor(op, i) for i in range(len(output_desc))]

    def add_constant_op(self, op_type: str, attrs: Mapping[str, Attr], dtype: DataType, shape: tuple[int, ...]) -> Tensor:
        """``add_op(op_type, (), attrs, dtypes=dtype, shapes=[shape])[0]`` for an op with
        no inputs and attrs already typed (``Const``: almost half the ops of a graph)."""
        op_name = self.unique_name(op_type)
        provenance = self.provenance
        op = IrOp(op_name, op_type, [], attrs, (), (TensorDesc("y", dtype, shape),), provenance.fx_node, provenance.source)
        self.graph.ops.append(op)
        return Tensor(op, 0)

    def set_dtype(self, tensor: Tensor, dtype: DataType) -> Tensor:
        """Write ``dtype`` on ``tensor``'s output desc and keep it there: a converter that
        sets a helper output's ``desc.dtype`` itself, as some of TorchAir's do."""
        desc = tensor.desc
        tensor.op.set_output_desc(tensor.index, TensorDesc(desc.name, dtype, desc.shape, desc.layout, dict(desc.attrs)))
        self.dtype_set_by_hand.add(tensor.tensor)
        return tensor

    def unset_helper_dtypes(self, first_new: int) -> None:
        """TorchAir's descs for the ops made since ``first_new`` (one node's conversion,
        before its result gets the node's fake value): an output nobody set gets
        :data:`UNSET_DTYPE`, and so does every input desc copied from such an output.
        The dtypes fxlab inferred while converting served the converter; GE infers its
        own, and the reference kernels compute from values. An output made with no shape
        that nobody gave one says :data:`UNKNOWN_RANK`, as do the input descs copied from it."""
        ops = self.graph.ops
        if len(ops) == first_new:
            return
        by_hand = self.dtype_set_by_hand
        unset: set[str] = set()
        unshaped: set[str] = set()
        for op in ops[first_new:]:
            if op.input_desc and (unset or unshaped):
                op.input_desc = _unset_inputs(op, unset, unshaped)
            if op.type in DTYPE_SET_AT_CREATION:
                continue
            shapeless = op.name in self.made_without_shapes
            new_descs = []
            for index, desc in enumerate(op.output_desc):
                ref = f"{op.name}:{index}"
                by_hand_here = bool(by_hand) and ref in by_hand
                dtype = desc.dtype if by_hand_here else UNSET_DTYPE
                shape = UNKNOWN_RANK if shapeless and not desc.shape else desc.shape
                if not by_hand_here:
                    unset.add(ref)
                if shape is not desc.shape:
                    unshaped.add(ref)
                if dtype is not desc.dtype or shape is not desc.shape:
                    desc = TensorDesc(desc.name, dtype, shape, desc.layout, desc.attrs)
                new_descs.append(desc)
            op.output_desc = tuple(new_descs)
        self.made_without_shapes.difference_update(op.name for op in ops[first_new:])

    # -- provenance and scopes ---------------------------------------------------------
    @contextlib.contextmanager
    def converting(self, fx_node: str | None, source: str | None) -> Iterator[None]:
        """Stamp ops created inside with their FX node, and give them the pushed scope
        attrs when the node's conversion is done (helper ops included, as TorchAir)."""
        token = self.begin_node(fx_node, source)
        try:
            yield
        finally:
            self.end_node(token)

    def begin_node(self, fx_node: str | None, source: str | None) -> tuple[Provenance, int]:
        """:meth:`converting` without a context manager (the conversion pass's hot path);
        hand the token to :meth:`end_node`, also when the conversion fails."""
        saved = self.provenance
        self.provenance = Provenance(fx_node, source)
        return saved, len(self.graph.ops)

    def end_node(self, token: tuple[Provenance, int]) -> None:
        saved, first_new = token
        self.provenance = saved
        if self.scope_stack:
            self.apply_scopes(self.graph.ops[first_new:])

    def apply_scopes(self, ops: Sequence[IrOp]) -> None:
        """Give ``ops`` the attrs of every pushed scope (see :func:`scoped_attrs`). Ops
        that shared attrs share the scoped ones too (the dumps render them once)."""
        cache = self._scoped_attrs
        for op in ops:
            entry = cache.get(id(op.attrs))
            if entry is None:  # keeps the key's object alive, so its id stays its own
                entry = cache[id(op.attrs)] = (op.attrs, scoped_attrs(op.attrs, self.scope_stack))
            op.attrs = entry[1]

    def push_scope(self, keys: Sequence[str], values: Sequence[str]) -> None:
        self.scope_stack.append(dict(zip(keys, values)))
        self._scoped_attrs = {}

    def pop_scope(self) -> bool:
        """Pop the innermost scope; ``False`` when there was none (an unbalanced exit)."""
        if not self.scope_stack:
            return False
        self.scope_stack.pop()
        self._scoped_attrs = {}
        return True


def scoped_attrs(attrs: Mapping[str, Attr], stack: Sequence[Mapping[str, str]]) -> FrozenAttrs:
    """``attrs`` with every pushed scope attr, outer scope first so inner ones override;
    an empty SuperKernel scope name clears the SuperKernel attrs set by outer scopes."""
    out = dict(attrs)
    for scope in stack:
        for key, value in scope.items():
            if key == "_super_kernel_scope" and value in ("", None):
                for sk_key in SUPER_KERNEL_ATTRS:
                    out.pop(sk_key, None)
                break
            if key in BOOL_SCOPE_ATTRS:
                out[key] = Attr(AttrKind.BOOL, str(value) == "True")
            else:
                out[key] = Attr(AttrKind.STR, str(value))
    return FrozenAttrs(out)


_LARGEST_NAME_CHUNK = 256


def name_candidates(op_type: str) -> Iterator[str]:
    """``Type``, ``Type_1``, ``Type_2``, ... made a chunk at a time (a name is taken per
    op: a list's iterator hands them out faster than a chain of maps makes them). Chunks
    double from one name up to 256, so a type makes at most 256 names it never uses,
    and rare types few."""
    prefix = f"{op_type}_"

    def chunk(start: int) -> list[str]:
        return [prefix + str(n) for n in range(start, start + min(start, _LARGEST_NAME_CHUNK))]

    # chunks of 1, 2, 4, ..., 128 names from Type_1, then of 256 from Type_256 on
    starts = itertools.chain((1 << k for k in range(8)), itertools.count(_LARGEST_NAME_CHUNK, _LARGEST_NAME_CHUNK))
    return itertools.chain((op_type,), itertools.chain.from_iterable(map(chunk, starts)))


def _unset_inputs(op: IrOp, unset: set[str], unshaped: set[str]) -> tuple[TensorDesc, ...]:
    """``op``'s input descs, those read from an ``unset`` output with the unset dtype (and
    the unknown rank when read from an ``unshaped`` one)."""
    refs = [ref for ref in op.inputs if not ref.endswith(":-1")]
    out = list(op.input_desc)
    for index, ref in enumerate(refs):
        if index >= len(out) or (ref not in unset and ref not in unshaped):
            continue
        desc = out[index]
        dtype = UNSET_DTYPE if ref in unset else desc.dtype
        shape = UNKNOWN_RANK if ref in unshaped and not desc.shape else desc.shape
        if dtype is not desc.dtype or shape is not desc.shape:
            out[index] = TensorDesc(desc.name, dtype, shape, desc.layout, desc.attrs)
    return tuple(out)


_UNFED_OPTIONAL = Attr(AttrKind.INT, 1)
_INPUT_NAMES = tuple(f"x{i}" for i in range(64))


def _named_inputs(inputs: InputSpec) -> Any:
    kind = type(inputs)
    if kind is dict or (kind is not tuple and kind is not list and isinstance(inputs, Mapping)):
        return cast(Mapping[str, Any], inputs).items()
    if (kind is tuple or kind is list) and len(inputs) <= len(_INPUT_NAMES):
        return zip(_INPUT_NAMES, inputs)
    return ((f"x{i}", t) for i, t in enumerate(inputs))


def _output_descs(
    outputs: Sequence[str] | int, dtypes: Sequence[DataType] | DataType | None, shapes: Sequence[tuple[int, ...]] | None, default: DataType
) -> list[TensorDesc]:
    if outputs == ("y",) and dtypes is None and shapes is None:
        return [TensorDesc("y", default)]
    names = [f"y{i}" for i in range(outputs)] if isinstance(outputs, int) else list(outputs)
    out_dtypes = _expand_dtypes(dtypes, len(names), default)
    return [TensorDesc(out_name, out_dtypes[i], tuple(shapes[i]) if shapes is not None else ()) for i, out_name in enumerate(names)]


def _expand_dtypes(dtypes: Sequence[DataType] | DataType | None, count: int, default: DataType) -> list[DataType]:
    if dtypes is None:
        return [default] * count
    if isinstance(dtypes, DataType):
        return [dtypes] * count
    if len(dtypes) != count:
        raise ValueError(f"{len(dtypes)} output dtypes given for {count} outputs")
    return list(dtypes)


_CURRENT: contextvars.ContextVar[GraphBuilder | None] = contextvars.ContextVar("fxlab_ge_builder", default=None)


def current_builder() -> GraphBuilder:
    builder = _CURRENT.get()
    if builder is None:
        raise RuntimeError("no Ascend IR graph is being built: GE ops can only be created inside a converter")
    return builder


@contextlib.contextmanager
def building(builder: GraphBuilder) -> Iterator[GraphBuilder]:
    """Make ``builder`` the current graph for ``ge.*`` calls inside the block."""
    token = _CURRENT.set(builder)
    try:
        yield builder
    finally:
        _CURRENT.reset(token)
