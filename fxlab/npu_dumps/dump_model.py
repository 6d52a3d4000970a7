"""What the dumps copied off an NPU machine say, as plain data: per graph and phase, every
op with what GE made of it (its originals, the passes that fused it, its UB fusion scope,
whether GE inserted it, its SuperKernel, stream label and core limits, format and dtype
changes against the original), and, once joined with TorchAir's graph, the TorchAir ops,
FX nodes and source lines it came from.

The ``--json`` shape (``DumpSet.to_json``) is a contract for scripts: ``graphs`` ->
``file``, ``format``, ``graph``, ``phase``, ``ops`` -> ``name``, ``type``, ``originals``,
``original_types``, ``passes``, ``fusion_scope``, ``inserted``, and where known
``fx_nodes`` and ``source`` (``file:line`` strings); further keys may be added.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Formats of the files read (``DumpGraph.format``).
GE_PROTO = "ge_proto"  # ge_proto_<index>_graph_<id>_<Phase>.txt: ModelDef text
GE_ONNX = "ge_onnx"  # ge_onnx_<index>_graph_<id>_<Phase>.pbtxt: ONNX ModelProto text
OM_JSON = "om_json"  # atc --mode=1: the ModelDef of an OM model as JSON
TORCHAIR_TXT = "torchair_txt"  # TorchAir's graph_dump type txt: GraphDef text
TORCHAIR_PBTXT = "torchair_pbtxt"  # TorchAir's graph_dump type pbtxt: TensorFlow-style GraphDef text
TORCHAIR_PY = "torchair_py"  # TorchAir's graph_dump type py: ge.* calls with # File / ## FX Code comments
TORCHAIR_FORMATS = (TORCHAIR_TXT, TORCHAIR_PBTXT, TORCHAIR_PY)


@dataclass
class OutputInfo:
    """One output desc: its format and dtype now and before GE changed them, and the
    original op output it stands for (``_datadump_origin_name`` / ``_output_index``)."""

    index: int
    dtype: str = ""
    layout: str = ""
    origin_dtype: str = ""
    origin_layout: str = ""
    origin_name: str | None = None
    origin_output_index: int | None = None
    fx_tensor_name: str | None = None  # TorchAir's "<fx node>-<target>.OUTPUT.<i>"

    def changes(self) -> list[str]:
        """``"format NCHW -> NC1HWC0"`` / ``"dtype DT_FLOAT -> DT_FLOAT16"``, where GE
        changed them."""
        found = []
        if self.origin_layout and self.layout and self.origin_layout != self.layout:
            found.append(f"output {self.index} format {self.origin_layout} -> {self.layout}")
        if self.origin_dtype and self.dtype and self.origin_dtype != self.dtype:
            found.append(f"output {self.index} dtype {self.origin_dtype} -> {self.dtype}")
        return found


@dataclass
class DumpOp:
    """One op of a GE graph as dumped, with what GE made of it.

    ``originals`` is ``_datadump_original_op_names`` where GE wrote it (a fused op: the ops
    it replaced, transitively; a renamed op: the one op it stands for), else the op itself;
    ``inserted`` is an op GE made with nothing original behind it (an empty original list,
    or an op GE names when it inserts one: ``trans_<Type>_<n>``, partition ``PlaceHolder``
    / ``End``, a SuperKernel sub-graph's inner ``Data`` / ``NetOutput``)."""

    name: str
    type: str
    inputs: list[str] = field(default_factory=list)
    originals: list[str] = field(default_factory=list)
    original_types: list[str] = field(default_factory=list)
    inserted: bool = False
    passes: list[str] = field(default_factory=list)
    fusion_scope: int | None = None
    multi_op: bool = False
    super_kernel_scope: str | None = None
    super_kernel_parent: str | None = None  # sk_parent_node_name: the SuperKernel op this op was fused into
    super_kernel_members: list[str] = field(default_factory=list)
    stream_label: str | None = None
    aicore_num: str | None = None
    vectorcore_num: str | None = None
    supports_super_kernel: int | None = None
    outputs: list[OutputInfo] = field(default_factory=list)
    # Filled by the join with TorchAir's graph (npu_dumps.join).
    torchair_ops: list[str] = field(default_factory=list)
    fx_nodes: list[str] = field(default_factory=list)
    source: list[str] = field(default_factory=list)

    @property
    def core_limit(self) -> str | None:
        """``"A|V"`` as ``limit_core_num`` set it, or None."""
        if self.aicore_num is None and self.vectorcore_num is None:
            return None
        return f"{self.aicore_num or '-'}|{self.vectorcore_num or '-'}"

    @property
    def fused(self) -> bool:
        """Several original ops became this one, or it is a SuperKernel (of one op or more)."""
        return len(self.originals) > 1 or bool(self.super_kernel_members)

    @property
    def renamed(self) -> bool:
        """One original op under another name: GE renamed it and fused nothing into it."""
        return len(self.originals) == 1 and self.originals[0] != self.name and not self.super_kernel_members

    @property
    def retyped(self) -> str | None:
        """The type of the one original op when GE gave it another (``Mul`` -> ``Muls``)."""
        if len(self.originals) == 1 and len(self.original_types) == 1 and self.original_types[0] not in ("", self.type):
            return self.original_types[0]
        return None

    def changes(self) -> list[str]:
        return [change for output in self.outputs for change in output.changes()]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "type": self.type,
            "originals": list(self.originals),
            "original_types": list(self.original_types),
            "passes": list(self.passes),
            "fusion_scope": self.fusion_scope,
            "inserted": self.inserted,
        }
        if self.super_kernel_scope is not None:
            data["super_kernel_scope"] = self.super_kernel_scope
        if self.super_kernel_parent is not None:
            data["super_kernel"] = self.super_kernel_parent
        if self.super_kernel_members:
            data["super_kernel_members"] = list(self.super_kernel_members)
        if self.stream_label is not None:
            data["stream_label"] = self.stream_label
        if self.core_limit is not None:
            data["core_limit"] = self.core_limit
        if self.changes():
            data["changes"] = self.changes()
        if self.torchair_ops:
            data["torchair_ops"] = list(self.torchair_ops)
        if self.fx_nodes:
            data["fx_nodes"] = list(self.fx_nodes)
        if self.source:
            data["source"] = list(self.source)
        return data


@dataclass
class DumpGraph:
    """One graph of one dump file: the root graph or a subgraph (``parent`` names the
    graph holding it), at one phase of GE's compilation."""

    file: str
    format: str
    graph_id: int | None
    phase: str
    name: str
    index: int | None = None  # the dump's own counter (GE counts per format): orders phases
    ops: list[DumpOp] = field(default_factory=list)
    parent: str | None = None

    @property
    def key(self) -> str:
        """What joins the phases of one graph: GE's graph id, else the graph's name."""
        return f"graph {self.graph_id}" if self.graph_id is not None else self.name

    def op(self, name: str) -> DumpOp | None:
        return next((op for op in self.ops if op.name == name), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "format": self.format,
            "graph": self.graph_id if self.graph_id is not None else self.name,
            "name": self.name,
            "phase": self.phase,
            "parent": self.parent,
            "ops": [op.to_json() for op in self.ops],
        }


@dataclass
class PassCount:
    """One pass in ``fusion_result.json``: how often it matched and took effect."""

    name: str
    kind: str  # graph_fusion | ub_fusion
    match_times: int
    effect_times: int

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "match_times": self.match_times, "effect_times": self.effect_times}


@dataclass
class FusionResult:
    """``fusion_result.json`` of one session and graph (counts, without op names)."""

    file: str
    session: str
    graph_id: int | None
    passes: list[PassCount] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "session": self.session, "graph": self.graph_id, "passes": [p.to_json() for p in self.passes]}


@dataclass
class TorchAirOp:
    """One op of TorchAir's own graph (a dump, or the saved trace's Ascend IR): the FX
    node(s) and source line(s) it came from."""

    name: str
    type: str
    fx_nodes: list[str] = field(default_factory=list)
    source: list[str] = field(default_factory=list)


@dataclass
class TorchAirGraph:
    """TorchAir's graph before GE: from its graph dump or a saved fxlab trace."""

    file: str
    format: str
    name: str
    ops: dict[str, TorchAirOp] = field(default_factory=dict)


@dataclass
class DumpSet:
    """Everything read from the paths given: GE's graphs in file order, TorchAir's
    graphs, the fusion counts, and notes about what was read or could not be joined."""

    graphs: list[DumpGraph] = field(default_factory=list)
    torchair: list[TorchAirGraph] = field(default_factory=list)
    fusion_results: list[FusionResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """Everything but the phase steps (``npu_dumps.phases.dump_set_json`` adds them)."""
        return {
            "graphs": [graph.to_json() for graph in self.graphs],
            "fusion_results": [result.to_json() for result in self.fusion_results],
            "torchair_graphs": [{"file": g.file, "format": g.format, "name": g.name, "ops": len(g.ops)} for g in self.torchair],
            "notes": list(self.notes),
        }
