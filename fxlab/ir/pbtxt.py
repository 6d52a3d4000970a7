"""GE ``ModelDef`` as protobuf text (``.pbtxt``), written straight from the IR model.

The text is exactly what ``google.protobuf.text_format.MessageToString`` prints for the
``ModelDef`` that :func:`fxlab.ir.ge_proto.encode_model_def` writes (fields in number
order, map entries sorted by key, floats as their shortest 32-bit decimal, strings
C-escaped), so GE tooling and ``text_format.Parse`` read it; it is produced without
building message objects, which is many times faster. Reading goes through
``text_format.Parse`` and the same message walk as the binary reader.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import text_encoding, text_format

from fxlab.ir.ge_proto import (
    PROVENANCE_FX_NODE,
    PROVENANCE_SOURCE,
    graph_from_model_def,
    shortest_float32,
)
from fxlab.ir.ge_schema import GeProtoError, schema
from fxlab.ir.model import (
    TORCHAIR_DTYPE_NUMBER,
    Attr,
    AttrKind,
    IrGraph,
    IrOp,
    TensorDesc,
)

_VAL_TYPE_NAMES = {
    AttrKind.LIST_STR: ("s", "VT_LIST_STRING"),
    AttrKind.LIST_INT: ("i", "VT_LIST_INT"),
    AttrKind.LIST_FLOAT: ("f", "VT_LIST_FLOAT"),
    AttrKind.LIST_BOOL: ("b", "VT_LIST_BOOL"),
    AttrKind.LIST_DTYPE: ("dt", "VT_LIST_DATA_TYPE"),
}


# -0.0 == 0.0 as a dict key, yet they print differently; tensors are unhashable.
_UNCACHED_KINDS = frozenset({AttrKind.FLOAT, AttrKind.LIST_FLOAT, AttrKind.TENSOR})


def desc_cache_key(tag: Any, desc: TensorDesc) -> tuple[Any, ...] | None:
    """A dict key for a desc's encoding, or ``None`` when it cannot be cached."""
    if not desc.attrs:
        return (tag, desc.name, desc.dtype, desc.shape, desc.layout)
    if any(a.kind in _UNCACHED_KINDS for a in desc.attrs.values()):
        return None
    key = (tag, desc.name, desc.dtype, desc.shape, desc.layout, tuple(desc.attrs.items()))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _is_plain(text: str) -> bool:
    """Whether ``text`` is printable ASCII without quotes or backslashes: written as is."""
    return text.isascii() and text.isprintable() and '"' not in text and "'" not in text and "\\" not in text


def _quote(text: str | bytes) -> str:
    if isinstance(text, str) and _is_plain(text):
        return f'"{text}"'
    raw = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    return f'"{text_encoding.CEscape(raw, False)}"'


_plain_quote = '"{}"'.format  # _quote of a plain string


def _float_text(value: float) -> str:
    return str(shortest_float32(value))


def _scalar_text(kind: AttrKind, value: Any) -> str:
    if kind is AttrKind.LIST_STR:
        return _quote(value)
    if kind is AttrKind.LIST_FLOAT:
        return _float_text(value)
    if kind is AttrKind.LIST_BOOL:
        return "true" if value else "false"
    if kind is AttrKind.LIST_DTYPE:
        return str(TORCHAIR_DTYPE_NUMBER[value])
    return str(int(value))


def _attr_lines(attr: Attr, ind: str, out: list[str]) -> None:
    """The lines of one ``AttrDef`` body at indent ``ind``."""
    kind, value = attr.kind, attr.value
    if kind is AttrKind.STR:
        out.append(f"{ind}s: {_quote(value)}")
    elif kind is AttrKind.INT:
        out.append(f"{ind}i: {int(value)}")
    elif kind is AttrKind.FLOAT:
        out.append(f"{ind}f: {_float_text(value)}")
    elif kind is AttrKind.BOOL:
        out.append(f"{ind}b: {'true' if value else 'false'}")
    elif kind is AttrKind.DTYPE:
        out.append(f"{ind}dt: {TORCHAIR_DTYPE_NUMBER[value]}")
    elif kind is AttrKind.TENSOR:
        out.append(f"{ind}t {{")
        out.append(f"{ind}  desc {{")
        _desc_lines(value.desc, ind + "    ", out)
        out.append(f"{ind}  }}")
        if value.data:
            out.append(f"{ind}  data: {_quote(value.data)}")
        out.append(f"{ind}}}")
    elif kind is AttrKind.LIST_INDEXED_STR:
        out.append(f"{ind}list {{")
        out.extend(f"{ind}  s: {_quote(layout)}" for _, layout in value)
        out.extend(f"{ind}  i: {int(index)}" for index, _ in value)
        out.append(f"{ind}}}")
    elif kind is AttrKind.LIST_LIST_INT:
        out.append(f"{ind}list_list_int {{")
        for row in value:
            out.append(f"{ind}  list_list_i {{")
            out.extend(f"{ind}    list_i: {int(v)}" for v in row)
            out.append(f"{ind}  }}")
        out.append(f"{ind}}}")
    else:
        field, val_type = _VAL_TYPE_NAMES[kind]
        out.append(f"{ind}list {{")
        out.extend(f"{ind}  {field}: {_scalar_text(kind, v)}" for v in value)
        out.append(f"{ind}  val_type: {val_type}")
        out.append(f"{ind}}}")


def _attr_entry_lines(field: str, key: str, attr: Attr, ind: str, out: list[str]) -> None:
    out.append(f"{ind}{field} {{")
    out.append(f"{ind}  key: {_quote(key)}")
    out.append(f"{ind}  value {{")
    _attr_lines(attr, ind + "    ", out)
    out.append(f"{ind}  }}")
    out.append(f"{ind}}}")


def _desc_lines(desc: TensorDesc, ind: str, out: list[str]) -> None:
    if desc.name:
        out.append(f"{ind}name: {_quote(desc.name)}")
    if desc.dtype:
        out.append(f"{ind}dtype: {desc.dtype.name}")
    if desc.shape:
        out.append(f"{ind}shape {{")
        out.extend(f"{ind}  dim: {d}" for d in desc.shape)
        out.append(f"{ind}}}")
    if desc.layout:
        out.append(f"{ind}layout: {_quote(desc.layout)}")
    for key in sorted(desc.attrs):
        _attr_entry_lines("attr", key, desc.attrs[key], ind, out)


def _graph_head(graph: IrGraph) -> list[str]:
    """The ``ModelDef`` lines before the graph's ops: model name, graph name, inputs,
    outputs."""
    head = [f"name: {_quote(graph.name)}"] if graph.name else []
    head.append("graph {")
    if graph.name:
        head.append(f"  name: {_quote(graph.name)}")
    head.extend(f"  input: {_quote(s)}" for s in graph.inputs)
    head.extend(f"  output: {_quote(s)}" for s in graph.outputs)
    return head


class _TextWriter:
    """Writes one graph; remembers the text of tensor descs and attrs it has seen."""

    def __init__(self) -> None:
        self.desc_texts: dict[tuple[Any, ...], str] = {}
        self.attr_texts: dict[tuple[Any, ...], str] = {}
        # Attrs that cannot be keyed by value (tensors, floats) by identity instead: a
        # graph shares one attr object among the ops that have the same constant, and it
        # keeps every attr alive while it is written, so an id is never reused meanwhile.
        self.shared_attr_texts: dict[tuple[str, int], str] = {}
        self.provenance_texts: dict[tuple[str, str], str] = {}

    def model(self, graph: IrGraph) -> str:
        out = _graph_head(graph)
        out.extend([self.op(op) for op in graph.ops])
        for key in sorted(graph.attrs):
            _attr_entry_lines("attr", key, graph.attrs[key], "  ", out)
        out.append("}")
        return "\n".join(out) + "\n"

    def op(self, op: IrOp) -> str:
        out = ["  op {"]
        # One check for all the op's names instead of one per string: they rarely need escapes.
        quote = _plain_quote if _is_plain(op.name + op.type + "".join(op.inputs)) else _quote
        if op.name:
            out.append(f"    name: {quote(op.name)}")
        if op.type:
            out.append(f"    type: {quote(op.type)}")
        out += [f"    input: {quote(s)}" for s in op.inputs]
        entry = self.attr_entry
        items = [(key, entry(key, attr)) for key, attr in op.attrs.items()]
        if op.fx_node is not None:
            items.append((PROVENANCE_FX_NODE, self.provenance_entry(PROVENANCE_FX_NODE, op.fx_node)))
        if op.source is not None:
            items.append((PROVENANCE_SOURCE, self.provenance_entry(PROVENANCE_SOURCE, op.source)))
        items.sort()  # keys are unique, so only keys are compared
        out += [text for _, text in items]
        out += [self.desc("input_desc", d) for d in op.input_desc]
        out += [self.desc("output_desc", d) for d in op.output_desc]
        out.append("  }")
        return "\n".join(out)

    def desc(self, field: str, desc: TensorDesc) -> str:
        key = desc_cache_key(field, desc)
        text = self.desc_texts.get(key) if key is not None else None
        if text is None:
            out = [f"    {field} {{"]
            _desc_lines(desc, "      ", out)
            out.append("    }")
            text = "\n".join(out)
            if key is not None:
                self.desc_texts[key] = text
        return text

    def provenance_entry(self, key: str, value: str) -> str:
        text = self.provenance_texts.get((key, value))
        if text is None:
            text = self.provenance_texts[(key, value)] = self.attr_entry(key, Attr(AttrKind.STR, value))
        return text

    def attr_entry(self, key: str, attr: Attr) -> str:
        if attr.kind in _UNCACHED_KINDS:
            text = self.shared_attr_texts.get((key, id(attr)))
            if text is None:
                text = self.shared_attr_texts[(key, id(attr))] = _attr_entry_text(key, attr)
            return text
        cache_key: tuple[Any, ...] | None = (key, attr.kind, attr.value)
        try:
            text = self.attr_texts.get((key, attr.kind, attr.value))
        except TypeError:  # unhashable value
            text, cache_key = None, None
        if text is None:
            text = _attr_entry_text(key, attr)
            if cache_key is not None:
                self.attr_texts[cache_key] = text
        return text


def _attr_entry_text(key: str, attr: Attr) -> str:
    out: list[str] = []
    _attr_entry_lines("attr", key, attr, "    ", out)
    return "\n".join(out)


def graph_to_pbtxt(graph: IrGraph) -> str:
    """``graph`` as the protobuf text of a GE ``ModelDef``."""
    return _TextWriter().model(graph)


def pbtxt_to_graph(text: str) -> IrGraph:
    """The IR graph in the protobuf text of a GE ``ModelDef``."""
    model = schema().ModelDef()
    try:
        text_format.Parse(text, model)
    except text_format.ParseError as exc:
        raise GeProtoError(f"not GE ModelDef text: {exc}") from exc
    return graph_from_model_def(model)
