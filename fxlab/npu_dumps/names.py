"""The names GE and TorchAir give files and ops, read back.

- GE's phase dumps: ``ge_proto_<index>_graph_<id>_<Phase>.txt`` and
  ``ge_onnx_<index>_graph_<id>_<Phase>.pbtxt`` (older CANN: ``ge_proto_<index>_<Phase>.txt``
  without the graph id; single-op graphs put ``aclop_`` before ``graph_``). The index
  counts dumps per format, in the order GE wrote them.
- TorchAir's graph dumps: ``dynamo_original_graph_<n>_rank_<r>_pid_<p>[_ts_<t>].<type>``
  and ``dynamo_optimized_graph_<n>...`` (txt, pbtxt, py).
- Ops GE inserts: ``trans_<Type>_<n>`` (format and dtype transfers), ``PlaceHolder<n>`` /
  ``End<n>`` (graph partition), ``super_kernel_sub_graph<N>_innerdata_<i>`` and
  ``..._inner_netoutput`` (a SuperKernel's sub-graph).
- SuperKernels: ``sk_<scope>_start_<first op>_end_<last op>``; a scope GE split is
  renamed ``<scope>_split_<begin>_<end>`` (topological ids).
- TorchAir's output descs: ``_fx_tensor_name = "<fx node>-<target>.OUTPUT.<i>"``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from fxlab.npu_dumps.dump_model import GE_ONNX, GE_PROTO, TORCHAIR_PBTXT, TORCHAIR_PY, TORCHAIR_TXT

_GE_DUMP = re.compile(r"^ge_(?P<kind>proto|onnx)_(?P<index>\d+)_(?:(?:aclop_)?graph_(?P<graph>\d+)_)?(?P<phase>.+)\.(?P<ext>txt|pbtxt)$")
_TORCHAIR_DUMP = re.compile(
    r"^dynamo_(?P<stage>original|optimized)_graph_(?P<n>\d+)(?:_rank_\d+)?(?:_pid_\d+)?(?:_ts_\d+)?\.(?P<ext>txt|pbtxt|py)$"
)
_TORCHAIR_EXT = {"txt": TORCHAIR_TXT, "pbtxt": TORCHAIR_PBTXT, "py": TORCHAIR_PY}
_FX_TENSOR = re.compile(r"^(?P<node>[^-]+)-(?P<target>.*)\.OUTPUT\.(?P<path>[\w.]+)$")

PARTITION_TYPES = ("PlaceHolder", "End")
SUPER_KERNEL_TYPE = "SuperKernel"
SUB_GRAPH_PHASE = re.compile(r"^super_kernel_sub_graph\d+$")


@dataclass(frozen=True)
class DumpName:
    """What a dump's file name says."""

    format: str
    index: int | None
    graph_id: int | None
    phase: str


def dump_name(path: Path) -> DumpName | None:
    """The format, index, graph id and phase a file's name gives, or None for a name
    that is neither GE's nor TorchAir's."""
    match = _GE_DUMP.match(path.name)
    if match is not None:
        graph = match.group("graph")
        return DumpName(
            GE_PROTO if match.group("kind") == "proto" else GE_ONNX,
            int(match.group("index")),
            int(graph) if graph is not None else None,
            match.group("phase"),
        )
    match = _TORCHAIR_DUMP.match(path.name)
    if match is not None:
        stage = f"dynamo_{match.group('stage')}"
        return DumpName(_TORCHAIR_EXT[match.group("ext")], int(match.group("n")), int(match.group("n")), stage)
    return None


def inserted_by_name(name: str, op_type: str) -> bool:
    """Whether ``name`` is one GE gives an op it inserts (see the module docstring)."""
    if name.startswith("trans_") and re.match(r"^trans_[A-Za-z0-9]+_\d+$", name):
        return True
    if op_type in PARTITION_TYPES and re.match(rf"^{op_type}\d+$", name):
        return True
    return bool(re.match(r"^super_kernel_sub_graph\d+_(innerdata_\d+|inner_netoutput)$", name))


def fx_node_of_tensor_name(value: str) -> str | None:
    """The FX node of TorchAir's ``_fx_tensor_name`` (``add-aten.add.Tensor.OUTPUT.0`` ->
    ``add``), or None for another text."""
    match = _FX_TENSOR.match(value)
    return match.group("node") if match is not None else None
