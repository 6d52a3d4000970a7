"""GE operator prototypes for the stood-in ``get_registered_ir_def``.

On a machine with CANN, TorchAir asks the Graph Engine's operator registry for an op's
prototype (inputs, outputs, attrs); its auto converter for custom ops and
``torchair.ge.custom_op`` depend on the answer. Without CANN, fxlab answers from two
sources: prototypes registered here (an msOpGen-style JSON of a custom op, as the
custom-op kit writes them), and the ``REG_OP`` text TorchAir keeps in the docstring of
each generated ``ge.<Op>`` function.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# The value-type tags TorchAir's ``torchair.ge.attr`` maps to attr constructors.
_REG_OP_ATTR_TAGS = {
    "Int": "VT_INT",
    "int": "VT_INT",
    "Float": "VT_FLOAT",
    "Bool": "VT_BOOL",
    "String": "VT_STRING",
    "Type": "VT_DATA_TYPE",
    "ListInt": "VT_LIST_INT",
    "ListFloat": "VT_LIST_FLOAT",
    "ListBool": "VT_LIST_BOOL",
    "ListString": "VT_LIST_STRING",
    "ListType": "VT_LIST_DATA_TYPE",
    "ListListInt": "VT_LIST_LIST_INT",
}
# msOpGen JSON attr "type" values.
_MSOPGEN_ATTR_TAGS = {
    "int": "VT_INT",
    "float": "VT_FLOAT",
    "bool": "VT_BOOL",
    "str": "VT_STRING",
    "string": "VT_STRING",
    "type": "VT_DATA_TYPE",
    "list_int": "VT_LIST_INT",
    "listint": "VT_LIST_INT",
    "list_float": "VT_LIST_FLOAT",
    "listfloat": "VT_LIST_FLOAT",
    "list_bool": "VT_LIST_BOOL",
    "listbool": "VT_LIST_BOOL",
    "list_str": "VT_LIST_STRING",
    "list_string": "VT_LIST_STRING",
    "list_list_int": "VT_LIST_LIST_INT",
}
_REG_OP_ENTRY = re.compile(
    r"\.(INPUT|OPTIONAL_INPUT|DYNAMIC_INPUT|OUTPUT|DYNAMIC_OUTPUT|ATTR|ATRR|REQUIRED_ATTR)\(\s*(\w+)\s*(?:,\s*(\w+))?"
)


@dataclass
class IrPrototype:
    """What ``get_registered_ir_def`` returns: ``(name, kind)`` pairs, where an input or
    output kind is ``required`` / ``optional`` / ``dynamic`` and an attr kind a ``VT_*`` tag."""

    op_type: str
    inputs: list[tuple[str, str]] = field(default_factory=list)
    outputs: list[tuple[str, str]] = field(default_factory=list)
    attrs: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def from_msopgen(cls, data: Mapping[str, Any]) -> IrPrototype:
        """From an msOpGen prototype (``op``, ``input_desc``, ``output_desc``, ``attr``)."""

        def kind(desc: Mapping[str, Any]) -> str:
            return str(desc.get("param_type", "required")).lower()

        attrs = [(a["name"], _MSOPGEN_ATTR_TAGS.get(str(a.get("type", "")).lower(), "VT_STRING")) for a in data.get("attr", [])]
        return cls(
            op_type=str(data["op"]),
            inputs=[(d["name"], kind(d)) for d in data.get("input_desc", [])],
            outputs=[(d["name"], kind(d)) for d in data.get("output_desc", [])],
            attrs=attrs,
        )

    @classmethod
    def from_kit(cls, proto: Any) -> IrPrototype:
        """From the custom-op kit's :class:`fxlab.ops.prototype.Prototype` (the same msOpGen
        JSON, already read)."""
        return cls(
            op_type=proto.op_type,
            inputs=[(p.name, p.param_type) for p in proto.inputs],
            outputs=[(p.name, p.param_type) for p in proto.outputs],
            attrs=[(a.name, _MSOPGEN_ATTR_TAGS.get(a.type.lower(), "VT_STRING")) for a in proto.attrs],
        )

    @classmethod
    def from_reg_op(cls, op_type: str, text: str) -> IrPrototype | None:
        """From GE's ``REG_OP(Name) .INPUT(x, ...) .ATTR(a, Int, 0) ...`` text."""
        if f"REG_OP({op_type})" not in text:
            return None
        proto = cls(op_type)
        for entry, name, type_name in _REG_OP_ENTRY.findall(text):
            if entry.endswith("INPUT"):
                proto.inputs.append((name, {"INPUT": "required", "OPTIONAL_INPUT": "optional"}.get(entry, "dynamic")))
            elif entry.endswith("OUTPUT"):
                proto.outputs.append((name, "required" if entry == "OUTPUT" else "dynamic"))
            else:
                proto.attrs.append((name, _REG_OP_ATTR_TAGS.get(type_name, "VT_STRING")))
        return proto


# Custom-op prototypes registered for this process (op type -> prototype).
REGISTERED: dict[str, IrPrototype] = {}


def _cann_op(op_type: str, required: str, optional: str, outputs: str, attrs: str) -> IrPrototype:
    """A prototype from space-separated names; attrs as ``name:Tag``."""
    inputs = [(n, "required") for n in required.split()] + [(n, "optional") for n in optional.split()]
    return IrPrototype(
        op_type,
        inputs,
        [(n, "required") for n in outputs.split()],
        [(a.split(":")[0], _REG_OP_ATTR_TAGS[a.split(":")[1]]) for a in attrs.split()],
    )


_SPARSE_BAND = "sparse_mode:Int pre_tokens:Int next_tokens:Int"
# Ops of CANN's transformer op package (ops-transformer), which TorchAir makes with
# ``torchair.ge.custom_op`` and finds registered on a machine with CANN installed; their
# prototypes are not in TorchAir's generated ``ge`` functions.
CANN_PROTOTYPES: dict[str, IrPrototype] = {
    p.op_type: p
    for p in (
        _cann_op(
            "LightningIndexer",
            "query key weights",
            "actual_seq_lengths_query actual_seq_lengths_key block_table",
            "sparse_indices sparse_values",
            f"layout_query:String layout_key:String sparse_count:Int {_SPARSE_BAND} return_values:Bool",
        ),
        _cann_op(
            "QuantLightningIndexer",
            "query key weights query_dequant_scale key_dequant_scale",
            "actual_seq_lengths_query actual_seq_lengths_key block_table",
            "sparse_indices",
            f"query_quant_mode:Int key_quant_mode:Int layout_query:String layout_key:String sparse_count:Int {_SPARSE_BAND}",
        ),
        _cann_op(
            "SparseFlashAttention",
            "query key value sparse_indices",
            "block_table actual_seq_lengths_query actual_seq_lengths_kv query_rope key_rope sinks",
            "attention_out softmax_max softmax_sum",
            f"scale_value:Float sparse_block_size:Int layout_query:String layout_kv:String {_SPARSE_BAND} attention_mode:Int return_softmax_lse:Bool",
        ),
        _cann_op(
            "KvQuantSparseFlashAttention",
            "query key value sparse_indices",
            "key_dequant_scale value_dequant_scale block_table actual_seq_lengths_query actual_seq_lengths_kv sinks",
            "attention_out",
            "scale_value:Float key_quant_mode:Int value_quant_mode:Int sparse_block_size:Int layout_query:String layout_kv:String "
            f"{_SPARSE_BAND} attention_mode:Int quant_scale_repo_mode:Int tile_size:Int rope_head_dim:Int",
        ),
    )
}


def custom_op_prototype(op_type: str) -> IrPrototype | None:
    """A custom op's prototype, as CANN's registry answers once the op package is installed:
    one registered here first, then CANN's own (:data:`CANN_PROTOTYPES`), else one the custom-op kit (``fxlab.ops``) holds — its seed
    ops' and any a user or plugin registered with it. The kit is asked only when it is
    already imported: importing it defines the seed ops, which a lookup must not do."""
    if op_type in REGISTERED:
        return REGISTERED[op_type]
    if op_type in CANN_PROTOTYPES:
        return CANN_PROTOTYPES[op_type]
    kit = sys.modules.get("fxlab.ops.prototype")
    found = kit.registered_prototype(op_type) if kit is not None else None
    return IrPrototype.from_kit(found) if found is not None else None


def register_prototype(prototype: IrPrototype | Mapping[str, Any]) -> IrPrototype:
    """Make ``prototype`` (an :class:`IrPrototype` or msOpGen JSON) known to the stand-in."""
    proto = prototype if isinstance(prototype, IrPrototype) else IrPrototype.from_msopgen(prototype)
    REGISTERED[proto.op_type] = proto
    return proto


def unregister_prototype(op_type: str) -> None:
    REGISTERED.pop(op_type, None)
