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

import traceback
from pathlib import Path
from typing import Any

import torch.fx as fx

from fxlab.passes.conversion_result import SCOPE_ENTER, NodeConversion, Status, is_scope_marker, scope_enter_items
from fxlab.passes.torchair_refusals import REWRITES
from fxlab.source_lines import describe_user_frame, node_source


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
    import sys

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
                del self.graph.op[before:]
                result = self._mock(target, args, kwargs, meta_outputs)
                self._record(node, Status.RAISED, first, _raised_message(node, exc))
                return result
            entry = self.get_ascend_ir_map().get(node.name)
            if entry is not None and entry.source == "":
                self._record(node, Status.UNSUPPORTED, first, _no_converter_reason(fx2ge, target))
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

        def _mock(self, target: Any, args: Any, kwargs: Any, meta_outputs: Any) -> Any:
            if str(target) == "auto_functionalized_v2":
                from torchair._ge_concrete_graph.auto_functionalized_v2 import conveter_auto_functionalize_v2

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
            self.fxlab_records.append(NodeConversion(node.name, str(node.target), status, ge_ops, message, node_source(node)))

    return RecordingGeConcreteGraph


def _raised_message(node: fx.Node, exc: BaseException) -> str:
    where = node_source(node)
    at = f" ({where})" if where else ""
    text = str(exc).strip().splitlines()
    message = f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")
    raised_in = _torchair_frame(exc)
    inside = f" [in TorchAir's {raised_in}]" if raised_in else ""
    user = describe_user_frame(exc, _in_torchair)  # a plugin's own converter, called by TorchAir's walk
    return f"TorchAir's converter for {node.target} raised at node {node.name}{at}{user}: {message}{inside}{_rewrite_hint(node, exc)}"


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
