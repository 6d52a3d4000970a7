"""The schema of GE's ``ModelDef`` protobuf: fxlab's own ``ge_ir.proto``, wire-compatible
with GE's ``ge.proto``, parsed by a small parser for the subset of proto3 it uses. Its
message classes are built at runtime from that file, in a private descriptor pool, so no
protoc-generated code is needed and TorchAir's own generated module can be loaded beside
it without a name clash.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PROTO_PATH = Path(__file__).with_name("ge_ir.proto")


class GeProtoError(ValueError):
    """A ModelDef that cannot be read into the IR model (bad bytes, unknown types), or a
    schema that cannot be parsed."""


_SCALAR_TYPES = {
    "double": 1,
    "float": 2,
    "int64": 3,
    "uint64": 4,
    "int32": 5,
    "fixed64": 6,
    "fixed32": 7,
    "bool": 8,
    "string": 9,
    "bytes": 12,
    "uint32": 13,
    "sfixed32": 15,
    "sfixed64": 16,
    "sint32": 17,
    "sint64": 18,
}
_TYPE_MESSAGE, _TYPE_ENUM = 11, 14
_LABEL_OPTIONAL, _LABEL_REPEATED = 1, 3
_TOKEN = re.compile(r'\s+|//[^\n]*|/\*.*?\*/|(?P<tok>"[^"]*"|[A-Za-z_][\w.]*|-?\d+|[{}<>;=,])', re.S)


def _tokenize(text: str) -> list[str]:
    tokens, pos = [], 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise GeProtoError(f"ge_ir.proto: unexpected text at offset {pos}: {text[pos : pos + 20]!r}")
        if match.group("tok"):
            tokens.append(match.group("tok"))
        pos = match.end()
    return tokens


class _ProtoParser:
    """Parses ``ge_ir.proto`` into a ``FileDescriptorProto``. Type names are resolved
    after parsing, innermost scope first, as protoc does."""

    def __init__(self, text: str) -> None:
        self.tokens = _tokenize(text)
        self.pos = 0
        self.file = descriptor_pb2.FileDescriptorProto(name="fxlab/ir/ge_ir.proto")
        self.unresolved: list[tuple[Any, str, str]] = []  # (field, type name, scope)
        self.known: dict[str, int] = {}  # full name -> _TYPE_MESSAGE / _TYPE_ENUM

    def next(self, expected: str | None = None) -> str:
        token = self.tokens[self.pos]
        if expected is not None and token != expected:
            raise GeProtoError(f"ge_ir.proto: expected {expected!r}, found {token!r} (token {self.pos})")
        self.pos += 1
        return token

    def parse(self) -> Any:
        while self.pos < len(self.tokens):
            word = self.next()
            if word == "syntax":
                self.next("=")
                self.file.syntax = self.next().strip('"')
                self.next(";")
            elif word == "package":
                self.file.package = self.next()
                self.next(";")
            elif word == "message":
                self._message(self.file.message_type.add(), "." + self.file.package)
            elif word == "enum":
                self._enum(self.file.enum_type.add(), "." + self.file.package)
            else:
                raise GeProtoError(f"ge_ir.proto: unexpected {word!r} at top level")
        self._resolve()
        return self.file

    def _message(self, msg: Any, scope: str) -> None:
        msg.name = self.next()
        full = f"{scope}.{msg.name}"
        self.known[full] = _TYPE_MESSAGE
        self.next("{")
        while (word := self.next()) != "}":
            if word == "message":
                self._message(msg.nested_type.add(), full)
            elif word == "enum":
                self._enum(msg.enum_type.add(), full)
            elif word == "oneof":
                self._oneof(msg, full)
            elif word == "map":
                self._map_field(msg, full)
            else:
                self._field(msg, full, word)

    def _enum(self, enum: Any, scope: str) -> None:
        enum.name = self.next()
        self.known[f"{scope}.{enum.name}"] = _TYPE_ENUM
        self.next("{")
        while (name := self.next()) != "}":
            self.next("=")
            enum.value.add(name=name, number=int(self.next()))
            self.next(";")

    def _field(self, msg: Any, scope: str, first: str, oneof_index: int | None = None) -> Any:
        label = _LABEL_OPTIONAL
        if first == "repeated":
            label, first = _LABEL_REPEATED, self.next()
        name = self.next()
        self.next("=")
        field = msg.field.add(name=name, number=int(self.next()), label=label)
        self.next(";")
        if oneof_index is not None:
            field.oneof_index = oneof_index
        self._set_type(field, first, scope)
        return field

    def _oneof(self, msg: Any, scope: str) -> None:
        index = len(msg.oneof_decl)
        msg.oneof_decl.add(name=self.next())
        self.next("{")
        while (word := self.next()) != "}":
            self._field(msg, scope, word, oneof_index=index)

    def _map_field(self, msg: Any, scope: str) -> None:
        self.next("<")
        key_type = self.next()
        self.next(",")
        value_type = self.next()
        self.next(">")
        name = self.next()
        self.next("=")
        number = int(self.next())
        self.next(";")
        entry = msg.nested_type.add(name="".join(p.capitalize() for p in name.split("_")) + "Entry")
        entry.options.map_entry = True
        entry_scope = f"{scope}.{entry.name}"
        self.known[entry_scope] = _TYPE_MESSAGE
        self._set_type(entry.field.add(name="key", number=1, label=_LABEL_OPTIONAL), key_type, entry_scope)
        self._set_type(entry.field.add(name="value", number=2, label=_LABEL_OPTIONAL), value_type, entry_scope)
        field = msg.field.add(name=name, number=number, label=_LABEL_REPEATED)
        field.type, field.type_name = _TYPE_MESSAGE, entry_scope

    def _set_type(self, field: Any, type_name: str, scope: str) -> None:
        if type_name in _SCALAR_TYPES:
            field.type = _SCALAR_TYPES[type_name]
        else:
            self.unresolved.append((field, type_name, scope))

    def _resolve(self) -> None:
        for field, name, scope in self.unresolved:
            candidates = [f"{scope[:i]}.{name}" for i in _scope_cuts(scope)]
            full = next((c for c in candidates if c in self.known), None)
            if full is None:
                raise GeProtoError(f"ge_ir.proto: unknown type {name!r} in {scope}")
            field.type, field.type_name = self.known[full], full


def _scope_cuts(scope: str) -> list[int]:
    """End offsets of ``scope`` and each enclosing scope, innermost first."""
    cuts = [len(scope)]
    cuts += [i for i in range(len(scope) - 1, 0, -1) if scope[i] == "."]
    return cuts


@dataclass(frozen=True)
class GeSchema:
    """The message classes of ``ge_ir.proto`` (package ``ge.proto``)."""

    file: Any
    ModelDef: Any
    GraphDef: Any
    OpDef: Any
    AttrDef: Any
    TensorDescriptor: Any
    ShapeDef: Any
    TensorDef: Any
    NamedAttrs: Any


@functools.cache
def schema() -> GeSchema:
    """Parse ``ge_ir.proto`` once and build its message classes."""
    file_proto = _ProtoParser(PROTO_PATH.read_text(encoding="utf-8")).parse()
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_proto)
    names = ("ModelDef", "GraphDef", "OpDef", "AttrDef", "TensorDescriptor", "ShapeDef", "TensorDef", "NamedAttrs")
    classes = {n: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"ge.proto.{n}")) for n in names}
    return GeSchema(file=file_proto, **classes)


def file_descriptor_proto(text: str) -> Any:
    """The ``FileDescriptorProto`` of proto text in ``ge_ir.proto``'s dialect."""
    return _ProtoParser(text).parse()
