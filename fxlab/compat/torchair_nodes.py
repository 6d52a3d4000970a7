"""Per-node bookkeeping around TorchAir's ``GeConcreteGraph`` (see :mod:`fxlab.compat.bridge`).

:func:`recording_graph_class` builds, inside a TorchAir session, a subclass of TorchAir's
``GeConcreteGraph`` (created with ``record_ascend_ir=True``, TorchAir's own mode that
puts a mock op in place of a node without a converter) that also:

* stamps every GE op with the FX node and source line it came from;
* records a :class:`NodeConversion` per converted node, with TorchAir's reason when a
  node had no converter, and the converter's message when it raised (the partial ops it
  made are dropped and a mock op takes its place, so the walk goes on);
* applies ``air::scope_enter``/``scope_exit`` through TorchAir's scope-attr stack
  directly: when fxlab defined the ``air`` ops first, their kernels are fxlab's and
  would not push onto TorchAir's stack.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Any

import torch.fx as fx
from torch.utils._pytree import tree_leaves

from fxlab.errors import FxlabError
from fxlab.passes.conversion_result import SCOPE_ENTER, NodeConversion, Status, is_scope_marker, scope_enter_items, target_text
from fxlab.passes.torchair_refusals import REWRITES, mutated_views_of_one_base, symbolic_comparison_refusal
from fxlab.source_lines import describe_user_frame, node_source

# What TorchAir raises when a converter returns more values than the node has outputs.
_SHARED_BASE_FAILURE = "The length of ge_outputs must be equal to meta_outputs"


def _has_converter(fx2ge: Any, target: Any) -> bool:
    return hasattr(target, "_ge_converter") or fx2ge._get_converter(target) is not None


def _no_converter_reason(fx2ge: Any, target: Any) -> str:
    try:
        fx2ge.get_or_auto_gen_converter(target)
    except Exception as exc:  # noqa: BLE001 - TorchAir's reason, shown to the user
        return f"TorchAir has no converter for {target}: {_first_sentence(exc)}{_kit_hint(target)}"
    return f"TorchAir has no converter for {target}{_kit_hint(target)}"


def _first_sentence(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.split(". ", 1)[0].rstrip(".") + "." if text else type(exc).__name__


def _kit_hint(target: Any) -> str:
    """When the custom-op kit knows the op's GE type and it is not the CamelCase of the
    op name TorchAir's auto converter looks for, say what fixes it."""
    kit = sys.modules.get("fxlab.ops.define")
    record = kit.CUSTOM_OPS.get(target) if kit is not None else None
    if record is None or record.prototype is None:
        return ""
    if record.prototype.op_type == "".join(word.capitalize() for word in record.name.split("_")):
        return ""  # the auto converter found the type; its reason above is the one that counts
    return (
        f" The op's GE type is {record.prototype.op_type} (its prototype), which TorchAir's auto converter "
        f"does not derive from the name {record.name}: register a TorchAir converter calling "
        f'torchair.ge.custom_op("{record.prototype.op_type}", ...) in a file passed with --plugin.'
    )


def recording_graph_class(fx2ge: Any, scope_attr: Any) -> type:
    base = fx2ge.GeConcreteGraph

    class RecordingGeConcreteGraph(base):  # type: ignore[misc, valid-type]
        def __init__(self, config: Any, name: str) -> None:
            super().__init__(config, name=name, record_ascend_ir=True)
            self.fxlab_records: list[NodeConversion] = []
            self.fxlab_provenance: dict[str, tuple[str | None, str | None]] = {}

        # -- provenance of graph inputs and outputs -------------------------------------
        def parse_input(self, target: Any, args: Any, kwargs: Any, meta_outputs: Any) -> Any:
            before = len(self.graph.op)
            result = super().parse_input(target, args, kwargs, meta_outputs)
            self._stamp(before)
            return result

        def parse_output(self, target: Any, args: Any, kwargs: Any, meta_outputs: Any) -> Any:
            before = len(self.graph.op)
            result = super().parse_output(target, args, kwargs, meta_outputs)
            self._stamp(before)
            return result

        # -- one call_function node -------------------------------------------------------
        def parse_node(self, target: Any, args: Any, kwargs: Any, meta_outputs: Any) -> Any:
            node: fx.Node = self._converter_ctx.node
            if is_scope_marker(str(target)):
                return self._scope_marker(node, target, args, kwargs)
            had_converter = str(target) == "auto_functionalized_v2" or _has_converter(fx2ge, target)
            before = len(self.graph.op)
            # The node's ops start where TorchAir's walk counted them: before it unpacked
            # the arguments, which makes the Pack of a symbolic size list.
            counted = getattr(self._converter_ctx, "op_count_before", None)
            first = counted if isinstance(counted, int) and counted <= before else before
            try:
                result = super().parse_node(target, args, kwargs, meta_outputs)
            except Exception as exc:  # noqa: BLE001 - one converter's failure is recorded, not fatal
                self._forget_ops(before)
                result = self._mock_after_failure(target, args, kwargs, meta_outputs, before)
                status, message = _failure(node, exc)
                self._record(node, status, first, message)
                return result
            entry = self.get_ascend_ir_map().get(node.name)
            if entry is not None and entry.source == "":
                # For auto_functionalized_v2 the converter missing is the wrapped op's.
                wrapped = args[0] if str(target) == "auto_functionalized_v2" and args else target
                self._record(node, Status.UNSUPPORTED, first, _no_converter_reason(fx2ge, wrapped))
            else:
                self._record(node, Status.CONVERTED if had_converter else Status.AUTO, first, "")
            return result

        def _scope_marker(self, node: fx.Node, target: Any, args: Any, kwargs: Any) -> None:
            if str(target) == SCOPE_ENTER:
                scope_attr.scope_enter(*scope_enter_items(args, kwargs))
            else:
                scope_attr.scope_exit()
            self._record(node, Status.MARKER, len(self.graph.op), "")
            return None

        def stand_in(self, node: fx.Node, exc: BaseException, env: dict[fx.Node, Any], value_pack: type, made_from: int) -> Any:
            """The value of a node TorchAir's walk failed on outside a converter: the ops
            its step made from op ``made_from`` on dropped, the node recorded as failed, a
            placeholder op standing in for it, and the walk goes on."""
            from torchair.ge._ge_graph import Tensor as GeTensor  # optional: TorchAir's, importable inside its session only

            self._forget_ops(made_from)
            with self.converter_context(node=node):
                before = len(self.graph.op)
                packs = [env.get(n) for n in node.all_input_nodes]
                npu_values = [getattr(p, "npu", None) for p in packs if isinstance(p, value_pack)]
                tensors = [v for v in npu_values if isinstance(v, GeTensor)]
                meta = node.meta.get("val")
                result = self._placeholder(node.target, tensors, {}, None, count=len(meta) if isinstance(meta, (list, tuple)) else 1)
                status, message = _failure(node, exc, in_converter=False)
                self._record(node, status, before, message)
            if isinstance(meta, (list, tuple)):  # one placeholder output is its tensor, not a list of one
                outputs = result if isinstance(result, (list, tuple)) else [result]
                return [value_pack(m, t) for m, t in zip(meta, outputs)]
            return value_pack(meta, result)

        def _forget_ops(self, before: int) -> None:
            """Drop the ops a failed converter made, and their names from the names
            TorchAir's graph has handed out, so the op standing in for the node may take them."""
            names = {op.name for op in self.graph.op[before:]}
            del self.graph.op[before:]
            used = getattr(self.graph, "op_name_list", None)
            if isinstance(used, list):
                used[:] = [name for name in used if name not in names]

        def _mock_after_failure(self, target: Any, args: Any, kwargs: Any, meta_outputs: Any, before: int) -> Any:
            """TorchAir's mock op for the node; where TorchAir's mock fails too (its
            ``auto_functionalized_v2`` mock returns one value per mutated argument), a plain
            op with one output per FX output."""
            try:
                return self._mock(target, args, kwargs, meta_outputs)
            except Exception:  # noqa: BLE001 - the node is recorded as failed either way
                self._forget_ops(before)
                return self._placeholder(target, args, kwargs, meta_outputs)

        def _placeholder(self, target: Any, args: Any, kwargs: Any, meta_outputs: Any, count: int | None = None) -> Any:
            # optional: TorchAir's modules, importable only inside the session this class is made in.
            from torchair._ge_concrete_graph.compat_ir import ge_op
            from torchair.ge._ge_graph import Tensor as GeTensor

            tensors = [leaf for leaf in tree_leaves((args, kwargs)) if isinstance(leaf, GeTensor)]
            metas = list(meta_outputs) if isinstance(meta_outputs, (list, tuple)) else [meta_outputs]
            outputs = [f"y{i}" for i in range(len(metas) if count is None else count)]
            result = ge_op(op_type=target_text(target), inputs={f"x{i}": t for i, t in enumerate(tensors)}, outputs=outputs)
            if meta_outputs is not None:
                fx2ge.set_ge_outputs(result, meta_outputs)
            return result

        def _mock(self, target: Any, args: Any, kwargs: Any, meta_outputs: Any) -> Any:
            if str(target) == "auto_functionalized_v2":
                from torchair._ge_concrete_graph.auto_functionalized_v2 import (
                    conveter_auto_functionalize_v2,
                )  # optional: TorchAir's session only

                result = conveter_auto_functionalize_v2(*args, _conveter_auto_functionalize_v2_internal_mock=True, **kwargs)
            else:
                result = self._create_mock_node_for_op(target, args, kwargs)
            if meta_outputs is not None:
                fx2ge.set_ge_outputs(result, meta_outputs)
            return result

        # -- bookkeeping --------------------------------------------------------------------
        def _stamp(self, before: int) -> list[str]:
            node = getattr(self._converter_ctx, "node", None)
            provenance = (node.name, node_source(node)) if node is not None else (None, None)
            names = [op.name for op in self.graph.op[before:]]
            for op_name in names:
                self.fxlab_provenance[op_name] = provenance
            return names

        def _record(self, node: fx.Node, status: Status, before: int, message: str) -> None:
            ge_ops = self._stamp(before)
            self.fxlab_records.append(NodeConversion(node.name, target_text(node.target), status, ge_ops, message, node_source(node)))

    return RecordingGeConcreteGraph


def _failure(node: fx.Node, exc: BaseException, in_converter: bool = True) -> tuple[Status, str]:
    """How a node TorchAir failed on is recorded: refused, with the cause and the fix,
    where the failure is one fxlab knows TorchAir makes (the built-in conversion refuses
    the node alike); else raised, with TorchAir's message."""
    if str(node.target) == "auto_functionalized_v2" and node.args and _SHARED_BASE_FAILURE in str(exc):
        refused = mutated_views_of_one_base(node.args[0], node.kwargs)
        if refused is not None:
            return Status.REFUSED, refused.message()
    comparison = symbolic_comparison_refusal(node)
    if comparison is not None and isinstance(exc, TypeError) and "ValuePack" in str(exc):
        return Status.REFUSED, comparison
    return Status.RAISED, _raised_message(node, exc, "converter" if in_converter else "walk over the graph")


def _raised_message(node: fx.Node, exc: BaseException, what: str = "converter") -> str:
    where = node_source(node)
    at = f" ({where})" if where else ""
    text = str(exc).strip().splitlines()
    message = f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")
    raised_in = _torchair_frame(exc)
    inside = f" [in TorchAir's {raised_in}]" if raised_in else ""
    user = describe_user_frame(exc, _in_torchair)  # a plugin's own converter, called by TorchAir's walk
    return f"TorchAir's {what} for {target_text(node.target)} raised at node {node.name}{at}{user}: {message}{inside}{_rewrite_hint(node, exc)}"


def _rewrite_hint(node: fx.Node, exc: BaseException) -> str:
    """The rewrite Ascend users apply for an op TorchAir refuses (its converter raises
    NotImplementedError), as the built-in conversion says it."""
    rewrite = REWRITES.get(str(node.target).rsplit(".", 1)[0]) if isinstance(exc, NotImplementedError) else None
    return f". Fix: {rewrite}" if rewrite else ""


def _in_torchair(path: str) -> bool:
    return "torchair" in Path(path).parts


def _torchair_frame(exc: BaseException) -> str | None:
    """``path/inside/torchair.py:line`` of the innermost TorchAir frame that raised."""
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        parts = Path(frame.filename).parts
        if "torchair" in parts:
            found = f"{'/'.join(parts[len(parts) - parts[::-1].index('torchair') :])}:{frame.lineno}"
    return found


def guard_walk(walker: Any, graph: Any, value_pack: type) -> None:
    """TorchAir's walk stops at the first node it fails on outside a converter (a Python
    builtin it evaluates itself, the fake run of a node): with this, such a node is
    recorded as failed with TorchAir's error and a placeholder stands in for it, as for a
    converter's failure, so the rest of the graph is still converted."""
    run_node = walker.run_node

    def run(node: fx.Node) -> Any:
        before = len(graph.graph.op)
        try:
            return run_node(node)
        except FxlabError:
            raise  # fxlab's own verdict on the model (a scope without its exit ...), said as it is
        except Exception as exc:  # noqa: BLE001 - recorded on the node, as a converter's failure is
            if node.op != "call_function":
                raise
            return graph.stand_in(node, exc, walker.env, value_pack, before)

    vars(walker)["run_node"] = run  # this walker's own, in place of its class's
