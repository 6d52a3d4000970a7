"""Message classes for the dumps' text formats, built at runtime from ``.proto`` files
beside this module (with the proto parser of :mod:`fxlab.ir.ge_schema`), each in a pool
of its own: GE's ``ModelDef`` is fxlab's ``ir/ge_ir.proto``; ONNX's ``ModelProto``
(``ge_onnx.proto``) and TensorFlow's ``GraphDef`` (``tf_graph.proto``) hold only the
fields those dumps use."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pool, message_factory

from fxlab.ir.ge_schema import file_descriptor_proto, schema

HERE = Path(__file__).resolve().parent


@functools.cache
def _pool(proto_file: str) -> Any:
    file_proto = file_descriptor_proto((HERE / proto_file).read_text(encoding="utf-8"))
    file_proto.name = f"fxlab/npu_dumps/{proto_file}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_proto)
    return pool, file_proto.package


@functools.cache
def message_class(proto_file: str, name: str) -> Any:
    """The class of message ``name`` of ``proto_file`` (beside this module)."""
    pool, package = _pool(proto_file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.{name}"))


def ge_model_def() -> Any:
    return schema().ModelDef


def ge_graph_def() -> Any:
    return schema().GraphDef


def ge_attr_def() -> Any:
    return schema().AttrDef


def ge_tensor_descriptor() -> Any:
    return schema().TensorDescriptor
