"""What a conversion to Ascend IR produced, whoever converted: fxlab's own converters
(:mod:`fxlab.passes.convert_to_ascend_ir`) or TorchAir's (:mod:`fxlab.compat.bridge`).

Both walk an FX graph node by node and give back one :class:`ConversionResult`: the GE
graph, one :class:`NodeConversion` per FX node (the GE ops it made and how), the FX
graph the walk read, the GE options the graph needs, notes and warnings, and the record
of the GE-graph passes run after the walk. The bookkeeping both walks share lives here
too: the scope markers' names and arguments, the placeholder op of a node that could
not be converted, and the flattening of nested outputs.
"""

from __future__ import annotations

import enum
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import torch.fx as fx

from fxlab.ir.model import Attr, AttrKind, IrGraph, IrOp
from fxlab.passes.infra import PassRecord

UNSUPPORTED_OP_TYPE = "FxlabUnsupported"
SCOPE_ENTER = "air.scope_enter.default"
SCOPE_EXIT = "air.scope_exit.default"
OUTPUT_REUSE_PASS = "output_reuse"  # the GE-graph pass that turns Assigns into outputs


class Status(str, enum.Enum):
    CONVERTED = "converted"
    AUTO = "auto"  # TorchAir's auto converter rules for a custom op
    UNSUPPORTED = "unsupported"
    RAISED = "raised"
    REFUSED = "refused"  # TorchAir fails on it: its converter only raises, or it has none
    MARKER = "marker"  # scope markers and getitem: no GE op of their own


FAILED_STATUSES = (Status.UNSUPPORTED, Status.RAISED, Status.REFUSED)


@dataclass(slots=True, init=False)
class NodeConversion:
    """One FX node's conversion: the GE ops it produced and how."""

    node: str
    target: str
    status: Status
    ge_ops: list[str] = field(default_factory=list)
    message: str = ""
    source: str | None = None

    # Written out: one per FX node, and the generated one's default-factory check is slow.
    def __init__(
        self, node: str, target: str, status: Status, ge_ops: list[str] | None = None, message: str = "", source: str | None = None
    ) -> None:
        self.node = node
        self.target = target
        self.status = status
        self.ge_ops = [] if ge_ops is None else ge_ops
        self.message = message
        self.source = source


@dataclass
class ConversionResult:
    """One graph's conversion to Ascend IR, by fxlab's converters or TorchAir's."""

    graph: IrGraph
    nodes: list[NodeConversion]
    fx_graph: fx.GraphModule | None = None  # the FX graph the walk converted (TorchAir's: after its own FX passes)
    ge_options: dict[str, str] = field(default_factory=dict)  # GE compile options the graph needs
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    ge_passes: list[PassRecord] = field(default_factory=list)  # fxlab's GE-graph passes after the walk, in order
    seconds: float = 0.0

    @property
    def partial(self) -> bool:
        return any(n.status in FAILED_STATUSES for n in self.nodes)

    @property
    def assigns_to_outputs(self) -> list[str]:
        """The ``Assign`` ops the output-reuse pass made into graph outputs."""
        return [name for record in self.ge_passes if record.name == OUTPUT_REUSE_PASS for name in record.removed]


def target_text(target: Any) -> str:
    """A node's target as the user reads it: ``operator.ge`` for a Python builtin (whose
    ``str`` is ``<built-in function ge>``), the op's own name for anything else."""
    if not isinstance(target, types.BuiltinFunctionType):
        return str(target)
    module = (target.__module__ or "").lstrip("_")  # operator.ge lives in _operator
    return target.__name__ if module in ("", "builtins") else f"{module}.{target.__name__}"


def is_scope_marker(target_name: str) -> bool:
    return target_name in (SCOPE_ENTER, SCOPE_EXIT)


def scope_enter_items(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The attr keys and values an ``air::scope_enter(keys, values)`` call pushes."""
    keys = kwargs.get("keys", args[0] if args else [])
    values = kwargs.get("values", args[1] if len(args) > 1 else [])
    return list(keys), list(values)


def placeholder_attrs(target: str, message: str) -> dict[str, Attr]:
    """The attrs of the op that stands for a node neither walk could convert: its
    target and why (with :data:`UNSUPPORTED_OP_TYPE` as its type)."""
    return {"_fxlab_unsupported": Attr(AttrKind.STR, target), "_fxlab_reason": Attr(AttrKind.STR, message)}


def mark_placeholder(op: IrOp, target: str, message: str) -> None:
    """Make ``op`` the placeholder of a node that could not be converted."""
    op.set_attrs(placeholder_attrs(target, message))
    op.type = UNSUPPORTED_OP_TYPE


def flatten(value: Any) -> list[Any]:
    """The leaves of nested lists and tuples, in order. Not torch's pytree: there ``None``
    is an empty container, and a ``None`` graph output is an output all the same."""
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in flatten(v)]
    return [value]


def output_names(gm: fx.GraphModule) -> list[str]:
    """The node name of each (flattened) graph output; ``""`` for a constant."""
    output = next(n for n in gm.graph.nodes if n.op == "output")
    return [a.name if isinstance(a, fx.Node) else "" for a in flatten(output.args[0])]
