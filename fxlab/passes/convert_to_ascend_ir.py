"""Convert a functional ATen FX graph to Ascend IR, node by node, as TorchAir does.

Placeholders become ``Data`` ops (``index`` attr, output desc ``y``), the output node a
``NetOutput``; every ``call_function`` node goes through its registered converter (or an
auto converter for custom ops) — except, as in TorchAir's walk, a node whose outputs are
all empty tensors (a ``Const`` of an empty tensor each); a tensor constant (``get_attr``)
becomes a ``Const`` in each node that reads it. ``air::scope_enter``/``scope_exit`` push
and pop scope attrs that land on every op created inside. A node that cannot be converted never stops
the pass: it becomes a clearly marked placeholder op and the result is *partial*.

The result holds one :class:`NodeConversion` per converted node: the GE op names it
produced and how (see :class:`Status`). The FX graph is left as it was.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import sympy
import torch
import torch.fx as fx

from fxlab.ir import ge
from fxlab.ir.builder import SYMBOLIC_SHAPE_ATTR, GraphBuilder, Tensor, building
from fxlab.ir.ge import desc_from_meta
from fxlab.ir.host_outputs import AS_STRIDED, GE, SYM, VIEW, VIEW_AS_COMPLEX, VIEW_AS_REAL, FxOutput, dim_text, record_fx_outputs
from fxlab.ir.model import TORCHAIR_DTYPE_NUMBER, Attr, AttrKind, DataType, IrGraph, IrOp, TensorDesc, attr_of
from fxlab.passes import converters  # noqa: F401 - registers fxlab's converters
from fxlab.passes.conversion_result import (
    SCOPE_ENTER,
    UNSUPPORTED_OP_TYPE,
    ConversionResult,
    NodeConversion,
    Status,
    flatten,
    is_scope_marker,
    placeholder_attrs,
    scope_enter_items,
    target_text,
)
from fxlab.passes.converters.registry import AUTO_CONVERTER_LOOKUPS, CONVERTERS, NAMED_CONVERTER_LOOKUPS, ORIGIN_FXLAB, ConverterRegistry
from fxlab.passes.inference_rule import attach_inference_rules
from fxlab.passes.optimize_views import GE_OWNER_KEY
from fxlab.passes.output_reuse import OUTPUT_DTYPES_ATTR
from fxlab.passes.symbolic_lists import HOST_TENSOR_ATTR, pack_symbolic_lists
from fxlab.passes.converters.auto import auto_converter_verdict, library_op_refusal
from fxlab.passes.torchair_refusals import (
    SYMBOLIC_COMPARISONS,
    NotBuiltIn,
    RefusedLikeTorchAir,
    is_protected,
    not_converted_reason,
    refusal,
    symbolic_comparison_refusal,
)
from fxlab.source_lines import describe_user_frame, node_source
from fxlab.passes.converters.custom_reference import ascribe_torch_call

CONVERT_REFUSED_HINT = "fxlab converts it only when asked (--convert-refused), since TorchAir would not"

# What the pass does with a call_function target (see AscendIrConverter._plan).
_CONVERT, _GETITEM, _SCOPE, _UNSUPPORTED, _REFUSED = "convert", "getitem", "scope", "unsupported", "refused"
_COMPARISON = "comparison"  # Python's comparison of sizes, which TorchAir's walk fails on
_UNKNOWN: Any = object()  # "not computed yet", where None is a valid value

# (kind, converter, status, target name)
_Plan = tuple[str, "Callable[..., Any] | None", Status, str]

_ONLY_INT = frozenset({int})


@dataclass(frozen=True)
class _GraphConstant:
    """A tensor constant of the graph (``get_attr``), not yet a GE op."""

    tensor: torch.Tensor


# Types torch has no counterpart for (torch_npu carries them in uint8): a converter's
# result typed so by hand keeps its type when the node's fake value types it, as
# TorchAir's ``set_meta`` keeps it.
KEPT_RESULT_DTYPES = frozenset({DataType.DT_HIFLOAT8, DataType.DT_FLOAT8_E8M0, DataType.DT_FLOAT4_E2M1, DataType.DT_FLOAT4_E1M2})


def _result_desc(result: Tensor, meta: Any) -> TensorDesc:
    """A converter result's desc from the node's fake value (its type kept when it is
    one of :data:`KEPT_RESULT_DTYPES`)."""
    desc = desc_from_meta(meta, result.op.output_desc[result.index].name)
    kept = result.op.output_desc[result.index].dtype
    if kept in KEPT_RESULT_DTYPES:
        desc.dtype = kept
    return desc


def _output_values(node: fx.Node) -> Any:
    """The node's value; for a higher-order operator, which records none (``control_deps``,
    around a stream wait), its outputs as its ``getitem`` readers have them."""
    meta = node.meta.get("val")
    if meta is not None:
        return meta
    read = {user.args[1]: user.meta.get("val") for user in node.users if user.target is operator.getitem and isinstance(user.args[1], int)}
    return [read.get(i) for i in range(max(read) + 1)] if read else None


def _no_converter_reason(target: Any) -> str:
    """Why ``target`` has no converter here: for an op of torch's or torch_npu's own
    namespaces, TorchAir's verdict on it (no GE op is ever assumed for one); for a
    custom op, why TorchAir's auto converter would not make one."""
    if is_protected(str(target)):
        return not_converted_reason(target)
    if isinstance(target, torch._ops.OpOverload):
        _, _, why = auto_converter_verdict(target)
        if why:
            return f"no Ascend IR converter for {target}, and TorchAir's auto converter would not make one: {why}"
    return f"no Ascend IR converter for {target}"


AUTO_FUNCTIONALIZED_V2 = getattr(torch.ops.higher_order, "auto_functionalized_v2", None)


class AscendIrConverter:
    """One pass over a functional graph; see the module docstring."""

    def __init__(self, gm: fx.GraphModule, name: str, registry: ConverterRegistry | None = None, *, convert_refused: bool = False) -> None:
        self.gm = gm
        self.convert_refused = convert_refused
        self._refusals: dict[int, str] = {}  # by id(target): why TorchAir fails on it
        self.builder = GraphBuilder(name)
        self.registry = CONVERTERS if registry is None else registry  # an empty registry is falsy
        self.values: dict[fx.Node, Any] = {}
        self.records: list[NodeConversion] = []
        self.warnings: list[str] = []
        self._data_index = 0
        self._tensor_inputs: list[tuple[int, torch.Tensor]] = []  # (Data index, fake value)
        self._symbol_inputs: dict[str, int] = {}  # symbol -> Data index of the SymInt input
        self._input_storages: dict[int, tuple[int, torch.Tensor]] | None = None  # built at the output node
        self._plans: dict[int, _Plan] = {}
        self._symbolic = False  # a graph input has a symbolic size: lists of sizes are packed

    def run(self) -> ConversionResult:
        start = time.perf_counter()
        with building(self.builder):
            for node in self.gm.graph.nodes:
                self._convert_node(node)
        if self.builder.scope_stack:
            self.warnings.append(f"{len(self.builder.scope_stack)} scope(s) entered and never exited")
        return ConversionResult(self.builder.graph, self.records, self.gm, warnings=self.warnings, seconds=time.perf_counter() - start)

    def _convert_node(self, node: fx.Node) -> None:
        if node.op == "call_function":  # nearly every node: tested first
            self._convert_call(node)
        elif node.op == "placeholder":
            self._convert_placeholder(node)
        elif node.op == "get_attr":
            self._convert_get_attr(node)
        elif node.op == "output":
            self._convert_output(node)
        else:
            self._record(node, Status.UNSUPPORTED, [], f"FX node kind {node.op!r} is not converted")

    # -- graph boundary ---------------------------------------------------------------
    def _convert_placeholder(self, node: fx.Node) -> None:
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            # Symbolic ints (dynamic shapes) are also graph inputs in TorchAir.
            if not isinstance(val, torch.SymInt):
                self.values[node] = val
                return
        # builder.add_op("Data", ...) under converting(), written out: one per weight.
        builder = self.builder
        source = node_source(node)
        name = builder.unique_name("Data", node.name)
        attrs = {"index": attr_of(self._data_index)}
        if not isinstance(val, torch.Tensor):
            attrs[HOST_TENSOR_ATTR] = attr_of(True)  # a size is fed from the host, as in TorchAir
        op = IrOp(name, "Data", [], attrs, (), (desc_from_meta(val, "y"),), name, source)
        builder.graph.ops.append(op)
        if builder.scope_stack:
            builder.apply_scopes((op,))
        if isinstance(val, torch.Tensor):
            self._tensor_inputs.append((self._data_index, val))
            self._symbolic = self._symbolic or SYMBOLIC_SHAPE_ATTR in op.output_desc[0].attrs
        elif isinstance(val.node.expr, sympy.Symbol):
            self._symbolic = True
            self._symbol_inputs.setdefault(str(val.node.expr), self._data_index)
        self._data_index += 1
        builder.graph.inputs.append(name)
        builder.fake_values[f"{name}:0"] = val
        self.values[node] = Tensor(op, 0)

    def _convert_get_attr(self, node: fx.Node) -> None:
        """A tensor constant makes no op where it is read: as in TorchAir's walk, each
        node that takes it makes its own ``Const`` (see :meth:`_input_value`)."""
        value = getattr(self.gm, str(node.target))
        self.values[node] = _GraphConstant(value) if isinstance(value, torch.Tensor) else value
        self._record(node, Status.CONVERTED, [])

    def _input_value(self, node: fx.Node) -> Any:
        """The value a converter receives for ``node``; a tensor constant becomes a
        ``Const`` in the taking node's conversion (TorchAir's op builders turn a torch
        tensor argument into one)."""
        value = self.values.get(node)
        if type(value) is _GraphConstant:
            return ge.const(value.tensor)
        return value

    def _convert_output(self, node: fx.Node) -> None:
        """``NetOutput`` as TorchAir assembles it (see :mod:`fxlab.ir.host_outputs`):
        views of graph inputs, symbolic sizes and non-tensor values are made on the
        host, and a GE tensor returned twice is one output."""
        tensors: list[Tensor] = []
        index_of: dict[str, int] = {}
        items = flatten(node.args[0])
        fx_outputs = [self._fx_output(item, tensors, index_of) for item in items]
        with self.builder.converting(node.name, None):
            inputs = {f"x{i}": t for i, t in enumerate(tensors)}
            self.builder.add_op("NetOutput", inputs, None, (), name="NetOutput", dependencies=self.builder.must_keep)
        self.builder.graph.outputs.extend(t.tensor for t in tensors)
        record_fx_outputs(self.builder.graph, fx_outputs)
        self._record_untyped_outputs(items, fx_outputs, tensors)

    def _record_untyped_outputs(self, items: list[Any], fx_outputs: list[FxOutput], tensors: list[Tensor]) -> None:
        """TorchAir types its graph outputs (``_output_dtypes``) from the FX values: an
        output whose node has none (an op that returns nothing) is DT_UNDEFINED there,
        whatever its desc says. Written only then; the GE passes write it otherwise."""
        metas: list[Any] = [None] * len(tensors)
        for item, out in zip(items, fx_outputs):
            if out.kind == GE and out.ge_index is not None and isinstance(item, fx.Node):
                metas[out.ge_index] = item.meta.get("val")
        if all(m is not None for m in metas):
            return
        numbers = [TORCHAIR_DTYPE_NUMBER[DataType.DT_UNDEFINED if m is None else t.dtype] for m, t in zip(metas, tensors)]
        self.builder.graph.attrs[OUTPUT_DTYPES_ATTR] = Attr(AttrKind.LIST_INT, tuple(numbers))

    def _fx_output(self, item: Any, tensors: list[Tensor], index_of: dict[str, int]) -> FxOutput:
        """Where one FX output comes from; a new GE output is appended to ``tensors``."""
        if not isinstance(item, fx.Node):
            return FxOutput.plain("", item)
        value, meta = self.values.get(item), item.meta.get("val")
        if type(value) is _GraphConstant:  # a constant returned as it is
            with self.builder.converting(item.name, node_source(item)):
                value = self._input_value(item)
        if not isinstance(value, Tensor):
            return FxOutput.plain(item.name, value)
        if isinstance(meta, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            return FxOutput(
                SYM, item.name, expr=str(meta.node.expr), symbols=self._symbols_in(meta.node.expr.free_symbols), ge_value=value.tensor
            )
        if isinstance(meta, torch.Tensor):
            view = self._view_of_input(item.name, meta, value.tensor)
            if view is not None:
                return view
        ge_index = index_of.setdefault(value.tensor, len(tensors))
        if ge_index == len(tensors):
            tensors.append(value)
        return FxOutput(GE, item.name, ge_index=ge_index)

    def _view_of_input(self, name: str, meta: torch.Tensor, ge_value: str) -> FxOutput | None:
        """TorchAir's test: the output's fake tensor shares memory with a graph input's
        (the first such input, in input order)."""
        found = self._input_sharing_memory_with(meta)
        if found is None:
            return None
        index, base = found
        view_fn = AS_STRIDED
        if meta.is_complex() and not base.is_complex():
            view_fn = VIEW_AS_COMPLEX
        elif base.is_complex() and not meta.is_complex():
            view_fn = VIEW_AS_REAL
        dims = (*meta.shape, *meta.stride(), meta.storage_offset())
        free = set().union(*(d.node.expr.free_symbols for d in dims if isinstance(d, torch.SymInt)))
        return FxOutput(
            VIEW,
            name,
            input_index=index,
            view_fn=view_fn,
            size=tuple(map(dim_text, meta.shape)),
            stride=tuple(map(dim_text, meta.stride())),
            offset=dim_text(meta.storage_offset()),
            symbols=self._symbols_in(free),
            ge_value=ge_value,
        )

    def _input_sharing_memory_with(self, meta: torch.Tensor) -> tuple[int, torch.Tensor] | None:
        """The first graph input (``Data`` index, fake value) whose memory ``meta``
        shares, as ``torch._C._is_alias_of`` decides: by storage, looked up in a table of
        the inputs' storages built once (a graph has hundreds of weights)."""
        if self._input_storages is None:
            self._input_storages = {}
            for index, base in self._tensor_inputs:
                key = _storage_key(base)
                if key is not None:
                    self._input_storages.setdefault(key, (index, base))
        key = _storage_key(meta)
        if key is not None:
            return self._input_storages.get(key)
        # torch._C._is_alias_of exists; torch's stubs (torch/_C/__init__.pyi) leave it out.
        return next(((i, base) for i, base in self._tensor_inputs if torch._C._is_alias_of(base, meta)), None)  # type: ignore[attr-defined]

    def _symbols_in(self, free_symbols: Any) -> dict[str, int]:
        """Each symbol -> the ``Data`` index of the symbolic graph input that holds it."""
        return {str(s): self._symbol_inputs[str(s)] for s in free_symbols if str(s) in self._symbol_inputs}

    # -- call_function ----------------------------------------------------------------
    def _convert_call(self, node: fx.Node) -> None:
        target = node.target
        # By id: an OpOverload hashes in Python; the graph keeps every target alive.
        plan = self._plans.get(id(target))
        if plan is None:
            plan = self._plan(target)
        kind, fn, status, target_name = plan
        if (
            kind is not _GETITEM
            and kind is not _SCOPE
            and _all_outputs_empty(node.meta.get("val"))
            and target_name not in KEEPS_EMPTY_OUTPUTS
        ):
            self._convert_empty(node, target_name)
        elif kind is _CONVERT and fn is not None:
            refused = self._wrapped_refusal(node) if target is AUTO_FUNCTIONALIZED_V2 else None
            if refused is None:
                self._run_converter(node, fn, status, target_name)
            else:
                self._emit_placeholder(node, Status.REFUSED, refused)
        elif kind is _GETITEM:
            base, index = node.args
            self.values[node] = self.values[cast(fx.Node, base)][index]
            self._record(node, Status.MARKER, [], source=node_source(node), target_name=target_name)
        elif kind is _SCOPE:
            self._convert_scope_marker(node)
        elif kind is _REFUSED:
            self._emit_placeholder(node, Status.REFUSED, self._refusals[id(target)])
        elif kind is _COMPARISON:
            self._emit_placeholder(node, Status.REFUSED, symbolic_comparison_refusal(node) or target_name)
        else:
            self._emit_placeholder(node, Status.UNSUPPORTED, _no_converter_reason(target))

    def _convert_empty(self, node: fx.Node, target_name: str) -> None:
        """TorchAir runs no converter for a node whose every output is an empty tensor of
        fixed shape: each output is a ``Const`` holding an empty tensor of its shape and
        dtype, whatever the op (``make_real_tensor_like`` in its walk)."""
        ops = self.builder.graph.ops
        first_new = len(ops)
        with self.builder.converting(node.name, node_source(node)):
            self.values[node] = _empty_consts(node.meta.get("val"))
        self._record(node, Status.CONVERTED, [op.name for op in ops[first_new:]], target_name=target_name)

    def _plan(self, target: Any) -> _Plan:
        """What to do with every node of ``target``, decided once per target and run."""
        target_name = target_text(target)
        plan: _Plan
        if target is operator.getitem:
            plan = (_GETITEM, None, Status.MARKER, target_name)
        elif target_name in SYMBOLIC_COMPARISONS:
            plan = (_COMPARISON, None, Status.REFUSED, target_name)
        elif is_scope_marker(target_name):
            plan = (_SCOPE, None, Status.MARKER, target_name)
        else:
            fn, status = self._lookup(target)
            refused = self._refusal(target, fn)
            if refused is not None:
                self._refusals[id(target)] = refused
                plan = (_REFUSED, None, Status.REFUSED, target_name)
            else:
                plan = (_UNSUPPORTED if fn is None else _CONVERT, fn, status, target_name)
        self._plans[id(target)] = plan
        return plan

    def _refusal(self, target: Any, fn: Callable[..., Any] | None) -> str | None:
        """Why TorchAir fails on ``target``, when it does and fxlab must say so: a user's
        converter replaces TorchAir's (as a plugin does on an NPU machine), and with
        ``convert_refused`` fxlab's own converter runs (with a warning)."""
        converter = self.registry.get(target)
        if converter is not None and converter.origin != ORIGIN_FXLAB:
            return None
        verdict = refusal(target) or library_op_refusal(target)
        if verdict is None:
            return None
        if self.convert_refused and fn is not None:
            self.warnings.append(f"{verdict.message()}; converted by fxlab's own converter as asked (--convert-refused)")
            return None
        return verdict.message() + (f"; {CONVERT_REFUSED_HINT}" if fn is not None else "")

    def _wrapped_refusal(self, node: fx.Node) -> str | None:
        """Why TorchAir fails on the custom op an ``auto_functionalized_v2`` node wraps,
        when an installed library defines it and nothing converts it (see :meth:`_refusal`)."""
        op = node.args[0] if node.args else None
        if op is None or self.registry.get(op) is not None:
            return None
        verdict = library_op_refusal(op)
        return verdict.message() if verdict is not None else None

    def _convert_scope_marker(self, node: fx.Node) -> None:
        if str(node.target) == SCOPE_ENTER:
            self.builder.push_scope(*scope_enter_items(node.args, node.kwargs))
        elif not self.builder.pop_scope():
            self.warnings.append(f"{node.name}: scope_exit without a matching scope_enter")
        self._record(node, Status.MARKER, [])

    def _lookup(self, target: Any) -> tuple[Callable[..., Any] | None, Status]:
        """The converter of ``target`` and its status."""
        converter = self.registry.get(target)
        if converter is not None:
            return converter.fn, Status.CONVERTED
        for lookup in NAMED_CONVERTER_LOOKUPS:
            fn = lookup(target)
            if fn is not None:
                return fn, Status.CONVERTED
        for lookup in AUTO_CONVERTER_LOOKUPS:
            fn = lookup(target)
            if fn is not None:
                return fn, Status.AUTO
        return None, Status.UNSUPPORTED

    def _run_converter(self, node: fx.Node, fn: Callable[..., Any], status: Status, target_name: str) -> None:
        meta = node.meta.get("val")
        builder = self.builder
        ops = builder.graph.ops
        first_new = len(ops)
        source = node_source(node)
        token = builder.begin_node(node.name, source)
        try:
            value_of = self._input_value
            args = fx.node.map_arg(node.args, value_of)
            kwargs = fx.node.map_arg(node.kwargs, value_of) if node.kwargs else {}
            if self._symbolic:
                args, kwargs = pack_symbolic_lists(node.args, args), pack_symbolic_lists(node.kwargs, kwargs)
                # TorchAir packs a node's symbolic size lists before its scope attrs apply
                # (outside guard_scope_attr): the Pack and its Consts stay out of the scopes.
                token = (token[0], len(ops))
            result = self._call_converter(fn, args, kwargs, meta, node)
        except (RefusedLikeTorchAir, NotBuiltIn) as exc:
            builder.end_node(token)
            del ops[first_new:]
            status = Status.REFUSED if isinstance(exc, RefusedLikeTorchAir) else Status.UNSUPPORTED
            self._emit_placeholder(node, status, exc.message(node.target))
            return
        except Exception as exc:  # noqa: BLE001 - any converter failure becomes a placeholder
            builder.end_node(token)
            del ops[first_new:]
            self._emit_placeholder(node, Status.RAISED, _raised_message(node, source, exc))
            return
        builder.end_node(token)
        builder.unset_helper_dtypes(first_new)
        if _inside_a_rebuilt_view(node):
            self._set_helper_descs(result, meta)
        elif type(result) is Tensor:
            if meta is not None:  # an op that returns nothing keeps the desc its converter made, as in TorchAir
                result.op.set_output_desc(result.index, _result_desc(result, meta))
                builder.fake_values[result.tensor] = meta
        else:
            self._set_output_descs(result, meta)
        if node.target is not AUTO_FUNCTIONALIZED_V2:  # that converter attaches its op's rule (and reference) itself
            attach_inference_rules(ops[first_new:], (args, kwargs), result, meta, node.name, node.target)
            ascribe_torch_call(node.target, args, kwargs, result, ops[first_new:])
        self.values[node] = result
        ge_ops = [op.name for op in ops[first_new:]]
        self.records.append(NodeConversion(node.name, target_name, status, ge_ops, "", source))

    def _call_converter(self, fn: Callable[..., Any], args: Any, kwargs: dict[str, Any], meta: Any, node: fx.Node) -> Any:
        """``fn``'s result, its output count checked against the node's."""
        result = fn(*args, **kwargs, meta_outputs=meta)
        _check_output_count(result, meta, node, fn)
        return result

    def _set_helper_descs(self, result: Any, meta: Any) -> None:
        """Each result tensor's shape and FX value from the node's, its dtype left unset as
        a helper's (GE infers it)."""
        pairs = zip(result, meta) if isinstance(result, (list, tuple)) and isinstance(meta, (list, tuple)) else [(result, meta)]
        for out, val in pairs:
            if isinstance(out, Tensor) and isinstance(val, torch.Tensor):
                desc = desc_from_meta(val, out.desc.name)
                desc.dtype = out.desc.dtype
                out.op.set_output_desc(out.index, desc)
                self.builder.fake_values[out.tensor] = val

    def _set_output_descs(self, result: Any, meta: Any) -> None:
        """Each result tensor's desc and FX value from the node's, as TorchAir's
        ``set_ge_outputs`` gives them."""
        if isinstance(result, Tensor):
            result.op.set_output_desc(result.index, _result_desc(result, meta))
            self.builder.fake_values[result.tensor] = meta
        elif isinstance(result, (list, tuple)) and isinstance(meta, (list, tuple)):
            for out, val in zip(result, meta):
                if isinstance(out, Tensor) and isinstance(val, torch.Tensor):
                    out.op.set_output_desc(out.index, _result_desc(out, val))
                    self.builder.fake_values[out.tensor] = val

    def _emit_placeholder(self, node: fx.Node, status: Status, message: str) -> None:
        meta = _output_values(node)
        metas = list(meta) if isinstance(meta, (list, tuple)) else [meta]
        attrs = placeholder_attrs(target_text(node.target), message)
        readers_inputs = self._without_its_rebuilt_views(node)
        first_new = len(self.builder.graph.ops)
        with self.builder.converting(node.name, node_source(node)):
            inputs = [v for v in map(self._input_value, readers_inputs) if isinstance(v, Tensor)]
            outs = self.builder.add_op(UNSUPPORTED_OP_TYPE, {f"x{i}": t for i, t in enumerate(inputs)}, attrs, len(metas))
        for out, val in zip(outs, metas):
            out.op.set_output_desc(out.index, desc_from_meta(val, out.desc.name))
        self.values[node] = outs if isinstance(meta, (list, tuple)) else outs[0]
        self._record(node, status, [op.name for op in self.builder.graph.ops[first_new:]], message)

    def _without_its_rebuilt_views(self, reader: fx.Node) -> list[fx.Node]:
        """The inputs of a node that is not converted, its rebuilt views (the view
        optimisation's nodes made for it alone) taken out: TorchAir rebuilds a view while
        it converts the view's reader, so a reader that fails keeps none of those ops and
        reads the view's base."""
        made_for_it = self._rebuilt_for(reader)
        rebuilt = {n for n in made_for_it if set(n.users) <= {reader} | made_for_it}
        if not rebuilt:
            return reader.all_input_nodes
        names = {n.name for n in rebuilt}
        dropped: set[str] = set()
        for record in self.records:
            if record.node in names:
                dropped.update(record.ge_ops)
                record.ge_ops = []
        self.builder.graph.ops[:] = [op for op in self.builder.graph.ops if op.name not in dropped]
        inputs = []
        for node in reader.all_input_nodes:
            while node in rebuilt and isinstance(node.args[0], fx.Node):  # a rebuilt step's first argument is what it views
                node = node.args[0]
            inputs.append(node)
        return inputs

    @staticmethod
    def _rebuilt_for(reader: fx.Node) -> set[fx.Node]:
        """The view optimisation's nodes made for ``reader`` (``meta["fxlab.ge_owner"]``), its own inputs and theirs."""
        found: set[fx.Node] = set()
        stack = [n for n in reader.all_input_nodes if n.meta.get(GE_OWNER_KEY) == reader.name]
        while stack:
            node = stack.pop()
            if node not in found:
                found.add(node)
                stack.extend(n for n in node.all_input_nodes if n.meta.get(GE_OWNER_KEY) == reader.name)
        return found

    def _record(
        self, node: fx.Node, status: Status, ge_ops: list[str], message: str = "", *, source: Any = _UNKNOWN, target_name: str | None = None
    ) -> None:
        if source is _UNKNOWN:
            source = node_source(node)
        name = target_text(node.target) if target_name is None else target_name
        self.records.append(NodeConversion(node.name, name, status, ge_ops, message, source))


def _inside_a_rebuilt_view(node: fx.Node) -> bool:
    """A step of a view the view optimisation rebuilt that only later steps read (the
    ``Reshape`` before a ``Transpose``): TorchAir's ``optimize_view`` makes it inside the
    reader's converter and sets the FX value on the chain's last op alone, so its desc
    stays a helper's (see ``GraphBuilder.unset_helper_dtypes``)."""
    return GE_OWNER_KEY in node.meta and bool(node.users) and all(GE_OWNER_KEY in user.meta for user in node.users)


# Ops TorchAir converts even when all their outputs are empty (collectives that must
# still meet their peers); none of them is in a CPU trace, the list is TorchAir's.
KEEPS_EMPTY_OUTPUTS = frozenset(
    {
        "npu_define.reduce_scatter_tensor_uneven.default",
        "npu_define.all_to_all_single_npu.default",
        "npu_define.allgather_in_tensor_uneven.default",
        "npu_define._recv.default",
    }
)


def _all_outputs_empty(meta: Any) -> bool:
    """Every output of the node is a tensor with no elements and no symbolic size,
    stride or offset (TorchAir's test, outputs of nested lists included)."""
    flat = flatten(meta)
    return bool(flat) and all(isinstance(t, torch.Tensor) and _static_and_empty(t) for t in flat)


def _static_and_empty(t: torch.Tensor) -> bool:
    shape = t.shape
    if not _ONLY_INT.issuperset(map(type, shape)) or 0 not in shape:
        return False
    return _ONLY_INT.issuperset(map(type, (*t.stride(), t.storage_offset())))


def _empty_consts(meta: Any) -> Any:
    if isinstance(meta, (list, tuple)):
        return [_empty_consts(m) for m in meta]
    out = ge.const(torch.empty(meta.shape, dtype=meta.dtype))
    out.op.set_output_desc(out.index, desc_from_meta(meta, out.desc.name))
    return out


def _raised_message(node: fx.Node, source: str | None, exc: Exception) -> str:
    """Which converter raised, at which node and model line, and where in the user's own
    code (a plugin's converter: its function, file and line) when the raise passed there."""
    target = node.target
    if target is AUTO_FUNCTIONALIZED_V2 and node.args:
        target = f"{node.args[0]} (in auto_functionalized_v2)"
    where = f" ({source})" if source else ""
    return f"converter for {target} raised at node {node.name}{where}{describe_user_frame(exc)}: {type(exc).__name__}: {exc}"


def _check_output_count(result: Any, meta: Any, node: fx.Node, fn: Callable[..., Any]) -> None:
    """Raise, naming the converter, when it did not return one GE tensor per tensor output
    of the node (else the next op using the value would be blamed)."""
    if isinstance(meta, torch.Tensor):
        if not isinstance(result, Tensor):
            raise TypeError(f"{_converter_name(fn)} returned {_describe(result)}; the schema of {node.target} has 1 tensor output")
        return
    if not isinstance(meta, (list, tuple)):
        return
    if not isinstance(result, (list, tuple)):
        raise TypeError(f"{_converter_name(fn)} returned {_describe(result)}; the schema of {node.target} has {len(meta)} outputs")
    if len(result) != len(meta):
        raise TypeError(f"{_converter_name(fn)} returned {len(result)} outputs; the schema of {node.target} has {len(meta)}")
    for i, (out, val) in enumerate(zip(result, meta)):
        if isinstance(val, torch.Tensor) and not isinstance(out, Tensor):
            raise TypeError(f"{_converter_name(fn)} returned {_describe(out)} as output {i} of {node.target}, a tensor")


def _converter_name(fn: Callable[..., Any]) -> str:
    code = getattr(fn, "__code__", None)
    where = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
    return f"converter {getattr(fn, '__qualname__', repr(fn))}{where}"


def _describe(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return f"a {len(value)}-{type(value).__name__}"
    return "None" if value is None else f"a {type(value).__name__} ({value!r:.40})"


def _storage_key(t: torch.Tensor) -> int | None:
    """The address of ``t``'s storage (shared by every view of it); ``None`` for a tensor
    without one."""
    try:
        return t.untyped_storage()._cdata
    except Exception:  # noqa: BLE001 - a tensor subclass without storage: compared one by one
        return None


def convert_to_ascend_ir(
    gm: fx.GraphModule, name: str = "graph", registry: ConverterRegistry | None = None, *, convert_refused: bool = False
) -> ConversionResult:
    """Convert ``gm`` (a functional ATen graph with fake ``val`` meta) to Ascend IR. Ops
    TorchAir fails on become placeholders (status ``refused``) unless ``convert_refused``
    lets fxlab's own converters run for them."""
    result = AscendIrConverter(gm, name, registry, convert_refused=convert_refused).run()
    _ops_to_their_owners(gm, result.graph)
    return result


def _ops_to_their_owners(gm: fx.GraphModule, graph: IrGraph) -> None:
    """Ops of nodes a pass made on behalf of another (``meta["fxlab.ge_owner"]``: views
    rebuilt for their reader) belong to that node, as in TorchAir's conversion."""
    owners = {n.name: n.meta[GE_OWNER_KEY] for n in gm.graph.nodes if GE_OWNER_KEY in n.meta}
    if owners:
        for op in graph.ops:
            owner = owners.get(op.fx_node or "")
            if owner is not None:
                op.fx_node = owner
