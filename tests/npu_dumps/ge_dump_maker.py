"""GE phase dumps made from fxlab's own Ascend IR by GE's documented naming and attribute
rules, so that the right mapping back to FX nodes and source lines is known.

From a saved trace's graph (the ``superkernel_scopes`` example's, by default), it writes
what GE would dump for it on an NPU machine, as GE writes it (protobuf's text printer):

- ``ge_proto_00000000_graph_1_PreRunBegin.txt``: TorchAir's graph as GE receives it, the
  output a converter returns (each FX node's last op) carrying
  ``_fx_tensor_name = "<fx node>-<target>.OUTPUT.0"``;
- ``..._PreRunAfterOptimizeOriginalGraph.txt``: graph fusion of each Linear's
  ``MatMulV2 -> Mul(1) -> Add(bias)`` into one ``MatMulV2`` (``_datadump_original_op_names``,
  ``_datadump_original_op_types``, ``pass_name``, output ``_datadump_origin_name``; its
  ``_fx_tensor_name`` dropped, since whether it survives fusion is not known);
- ``..._PreRunAfterOptimizeSubgraph.txt``: partition (``Data`` -> ``PlaceHolder<n>``, an
  ``End0`` before ``NetOutput``), ``trans_Cast_<n>`` before and ``trans_TransData_<n>``
  after each fused ``MatMulV2`` (empty originals, format and dtype changed against the
  origin, stream label, core limits and SuperKernel scope copied from the op they serve),
  and UB fusion marks (a shared ``fusion_scope``) on ``Mul_3`` and ``Cast_1``;
- ``..._AfterSkGraph.txt``: the UB-fused pair as one kernel ``Mul_3Cast_1`` (a
  concatenated name), and each SuperKernel scope as ``sk_<scope>_start_<a>_end_<b>``
  ops, one per run of consecutive ops of the scope on one core limit (a scope cut in
  several is renamed ``<scope>_split_<begin>_<end>``), with the members in
  ``ge_proto_<n>_graph_1_super_kernel_sub_graph<N>.txt`` carrying ``sk_parent_node_name``;
- ``dynamo_optimized_graph_1_rank_0_pid_1.py``: TorchAir's own py dump (the trace's
  ``ascend_ir.py``, which is written in TorchAir's format).

Run as ``python -m tests.npu_dumps.ge_dump_maker TRACE_DIR OUT_DIR`` to make them for the
docs.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

from google.protobuf import text_format

from fxlab.capture.serialize import load_trace
from fxlab.ir.ge_proto import model_def_message
from fxlab.ir.ge_schema import schema
from fxlab.ir.model import IrGraph

GRAPH_ID = 1
IGNORED_IN_SUPER_KERNELS = ("Const", "Data", "PlaceHolder", "End", "NetOutput")
INHERITED = ("_user_stream_label", "_op_aicore_num", "_op_vectorcore_num", "_super_kernel_scope", "_super_kernel_options")


def _ops(graph: Any) -> dict[str, Any]:
    return {op.name: op for op in graph.op}


def _set_list(message: Any, key: str, values: list[str]) -> None:
    attr = message.attr[key]
    attr.list.SetInParent()
    attr.list.s.extend(v.encode() for v in values)
    attr.list.val_type = 1  # VT_LIST_STRING


def _str(message: Any, key: str) -> str | None:
    return message.attr[key].s.decode() if key in message.attr else None


def _rewire(graph: Any, old: str, new: str) -> None:
    for op in graph.op:
        for i, value in enumerate(op.input):
            if value == old:
                op.input[i] = new


def _remove(graph: Any, names: set[str]) -> None:
    keep = [op for op in graph.op if op.name not in names]
    del graph.op[:]
    graph.op.extend(keep)


def _write(model: Any, folder: Path, index: int, phase: str) -> None:
    path = folder / f"ge_proto_{index:08d}_graph_{GRAPH_ID}_{phase}.txt"
    path.write_text(text_format.MessageToString(model), encoding="utf-8")


# -- phase 0: what TorchAir hands to GE -----------------------------------------------------
def phase_begin(ir: IrGraph, targets: dict[str, str]) -> Any:
    plain = IrGraph(name=ir.name, ops=[], inputs=list(ir.inputs), outputs=list(ir.outputs), attrs=dict(ir.attrs))
    for op in ir.ops:
        copy = type(op)(op.name, op.type, list(op.inputs), dict(op.attrs), list(op.input_desc), list(op.output_desc))
        plain.ops.append(copy)
    model = model_def_message(plain)
    model.name = model.graph[0].name = f"graph_{GRAPH_ID}"
    # TorchAir stamps the outputs its converter returns (the node's last op), not the
    # helper ops made on the way (tests/npu_dumps/test_torchair_dumps.py shows it).
    last_of_node = {op.fx_node: op.name for op in ir.ops if op.fx_node}
    for proto, op in zip(model.graph[0].op, ir.ops):
        if op.fx_node and op.type not in ("Data", "NetOutput") and last_of_node[op.fx_node] == op.name:
            for desc in proto.output_desc:
                desc.attr["_fx_tensor_name"].s = f"{op.fx_node}-{targets.get(op.fx_node, '')}.OUTPUT.0".encode()
    return model


# -- phase 1: graph fusion --------------------------------------------------------------------
def phase_graph_fusion(model: Any) -> Any:
    graph = model.graph[0]
    ops = _ops(graph)
    removed: set[str] = set()
    for matmul in [op for op in graph.op if op.type == "MatMulV2"]:
        mul = next((op for op in graph.op if op.type == "Mul" and op.input[0] == f"{matmul.name}:0"), None)
        add = mul and next((op for op in graph.op if op.type == "Add" and op.input[0] == f"{mul.name}:0"), None)
        if mul is None or add is None:
            continue
        _set_list(matmul, "_datadump_original_op_names", [matmul.name, mul.name, add.name])
        _set_list(matmul, "_datadump_original_op_types", ["MatMulV2", "Mul", "Add"])
        _set_list(matmul, "pass_name", ["MatMulBiasAddFusionPass"])
        matmul.input[2] = add.input[1]  # the bias
        desc = matmul.output_desc[0]
        desc.attr.pop("_fx_tensor_name", None)
        desc.attr["_datadump_origin_name"].s = add.name.encode()
        desc.attr["_datadump_origin_output_index"].i = 0
        _rewire(graph, f"{add.name}:0", f"{matmul.name}:0")
        removed |= {mul.name, add.name, mul.input[1].split(":")[0]}
    _remove(graph, removed)
    assert all(name in ops for name in removed)
    return model


# -- phase 2: partition, format and dtype transfers, UB fusion marks ---------------------------------
def phase_optimize_subgraph(model: Any) -> Any:
    graph = model.graph[0]
    for i, data in enumerate([op for op in graph.op if op.type == "Data"]):
        old = data.name
        data.name, data.type = f"PlaceHolder{i}", "PlaceHolder"
        _rewire(graph, f"{old}:0", f"{data.name}:0")
    net_output = next(op for op in graph.op if op.type == "NetOutput")
    end = graph.op.add(name="End0", type="End", input=list(net_output.input))
    end.output_desc.add().CopyFrom(_desc_of(graph, net_output.input[0]))
    end.output_desc[0].attr.pop("_fx_tensor_name", None)
    del net_output.input[:]
    net_output.input.append("End0:0")
    _move_before(graph, "End0", net_output.name)
    counter = 0
    for matmul in [op for op in graph.op if op.type == "MatMulV2" and "_datadump_original_op_names" in op.attr]:
        counter = _insert_cast(graph, matmul, counter)
        counter = _insert_trans_data(graph, matmul, counter)
    for name in ("Mul_3", "Cast_1"):
        _ops(graph)[name].attr["fusion_scope"].i = 1
    return model


def _desc_of(graph: Any, tensor: str) -> Any:
    name, index = tensor.rsplit(":", 1)
    return _ops(graph)[name].output_desc[int(index)]


def _move_before(graph: Any, name: str, before: str) -> None:
    ops = list(graph.op)
    moving = next(op for op in ops if op.name == name)
    ops.remove(moving)
    ops.insert(next(i for i, op in enumerate(ops) if op.name == before), moving)
    copies = [type(op)() for op in ops]
    for copy, op in zip(copies, ops):
        copy.CopyFrom(op)
    del graph.op[:]
    graph.op.extend(copies)


def _inherit(new: Any, served: Any) -> None:
    """GE copies the stream label, core limits and SuperKernel scope onto an op it inserts."""
    for key in INHERITED:
        if key in served.attr:
            new.attr[key].CopyFrom(served.attr[key])
    _set_list(new, "_datadump_original_op_names", [])


def _insert_cast(graph: Any, matmul: Any, counter: int) -> int:
    cast = graph.op.add(name=f"trans_Cast_{counter}", type="Cast", input=[matmul.input[0]])
    _inherit(cast, matmul)
    desc = cast.output_desc.add()
    desc.CopyFrom(_desc_of(graph, matmul.input[0]))
    desc.dtype = 2  # DT_FLOAT16
    desc.attr["origin_data_type"].s = b"DT_FLOAT"
    desc.attr["origin_format"].s = desc.layout.encode()
    for key in ("_fx_tensor_name",):
        if key in desc.attr:
            del desc.attr[key]
    matmul.input[0] = f"{cast.name}:0"
    _move_before(graph, cast.name, matmul.name)
    return counter + 1


def _insert_trans_data(graph: Any, matmul: Any, counter: int) -> int:
    matmul = _ops(graph)[matmul.name]
    trans = graph.op.add(name=f"trans_TransData_{counter}", type="TransData", input=[f"{matmul.name}:0"])
    _inherit(trans, matmul)
    _rewire_except(graph, f"{matmul.name}:0", f"{trans.name}:0", trans.name)
    desc = trans.output_desc.add()
    desc.CopyFrom(matmul.output_desc[0])
    for key in ("_datadump_origin_name", "_datadump_origin_output_index"):
        del desc.attr[key]
    desc.attr["origin_format"].s = desc.layout.encode()
    desc.layout = "FRACTAL_NZ"
    ops = list(graph.op)
    _move_before(graph, trans.name, ops[[op.name for op in ops].index(matmul.name) + 1].name)
    return counter + 1


def _rewire_except(graph: Any, old: str, new: str, skip: str) -> None:
    for op in graph.op:
        if op.name != skip:
            for i, value in enumerate(op.input):
                if value == old:
                    op.input[i] = new


# -- phase 3: UB-fused kernel, SuperKernels ---------------------------------------------------
def phase_super_kernels(model: Any) -> tuple[Any, list[Any]]:
    graph = model.graph[0]
    _fuse_ub(graph, ["Mul_3", "Cast_1"])
    runs = _super_kernel_runs(graph)
    subgraphs = []
    by_scope: dict[str, int] = {}
    for scope, _ in runs:
        by_scope[scope] = by_scope.get(scope, 0) + 1
    for number, (scope, members) in enumerate(runs):
        positions = [[op.name for op in graph.op].index(m) for m in members]
        name = scope if by_scope[scope] == 1 else f"{scope}_split_{positions[0] - 1}_{positions[-1] + 1}"
        subgraphs.append(_make_super_kernel(graph, name, members, number))
    return model, subgraphs


def _fuse_ub(graph: Any, names: list[str]) -> None:
    ops = _ops(graph)
    first, last = ops[names[0]], ops[names[-1]]
    fused = graph.op.add()
    fused.CopyFrom(first)
    fused.name = "".join(names)  # UB fusion names the kernel after its members, concatenated
    _set_list(fused, "_datadump_original_op_names", names)
    _set_list(fused, "_datadump_original_op_types", [ops[n].type for n in names])
    _set_list(fused, "pass_name", ["TbeEltwiseFusionPass"])
    del fused.output_desc[:]
    desc = fused.output_desc.add()
    desc.CopyFrom(last.output_desc[0])
    if "_fx_tensor_name" in desc.attr:
        del desc.attr["_fx_tensor_name"]
    desc.attr["_datadump_origin_name"].s = last.name.encode()
    _rewire(graph, f"{last.name}:0", f"{fused.name}:0")
    _move_before(graph, fused.name, first.name)
    _remove(graph, set(names))


def _super_kernel_runs(graph: Any) -> list[tuple[str, list[str]]]:
    """Runs of consecutive ops of one scope with one core limit (Consts do not count)."""
    runs: list[tuple[str, list[str]]] = []
    current: tuple[str, tuple[str | None, str | None]] | None = None
    for op in graph.op:
        if op.type in IGNORED_IN_SUPER_KERNELS:
            continue
        scope = _str(op, "_super_kernel_scope")
        key = (scope, (_str(op, "_op_aicore_num"), _str(op, "_op_vectorcore_num"))) if scope else None
        if key is None:
            current = None
            continue
        if key != current:
            runs.append((scope, []))
            current = key
        runs[-1][1].append(op.name)
    return runs


def _make_super_kernel(graph: Any, scope_name: str, members: list[str], number: int) -> Any:
    ops = _ops(graph)
    sub_name = f"super_kernel_sub_graph{number}"
    sk = graph.op.add(name=f"sk_{scope_name}_start_{members[0]}_end_{members[-1]}", type="SuperKernel")
    sk.attr["_fe_imply_type"].i = 6
    inside = set(members)
    external = [i for m in members for i in ops[m].input if i and i.split(":")[0] not in inside]
    sk.input.extend(dict.fromkeys(external))
    produced = [f"{m}:{k}" for m in members for k in range(len(ops[m].output_desc))]
    used = [t for t in produced if any(t in op.input for op in graph.op if op.name not in inside)]
    for k, tensor in enumerate(used):
        sk.output_desc.add().CopyFrom(_desc_of(graph, tensor))
        _rewire(graph, tensor, f"{sk.name}:{k}")
    sub = type(graph)(name=sub_name)
    for k in range(len(sk.input)):
        data = sub.op.add(name=f"{sub_name}_innerdata_{k}", type="Data")
        data.attr["_parent_node_index"].i = k
    for m in members:
        member = sub.op.add()
        member.CopyFrom(ops[m])
        member.attr["sk_parent_node_name"].s = sk.name.encode()
    sub.op.add(name=f"{sub_name}_inner_netoutput", type="NetOutput")
    _move_before(graph, sk.name, members[0])
    _remove(graph, inside)
    return sub


def rename_op(path: Path, old: str, new: str) -> None:
    """GE renaming op ``old`` of the dump at ``path`` to ``new`` and fusing nothing into it
    (one TorchAir op became one GE op): ``_datadump_original_op_names`` names ``old`` alone,
    and the ops that read it read ``new``."""
    model = text_format.Parse(path.read_text(encoding="utf-8"), schema().ModelDef())
    graph = model.graph[0]
    op = _ops(graph)[old]
    op.name = new
    _set_list(op, "_datadump_original_op_names", [old])
    _set_list(op, "_datadump_original_op_types", [op.type])
    for index in range(len(op.output_desc)):
        _rewire(graph, f"{old}:{index}", f"{new}:{index}")
    path.write_text(text_format.MessageToString(model), encoding="utf-8")


def make_dumps(trace_dir: Path, out: Path, graph_index: int = 0) -> list[Path]:
    """Every dump above for graph ``graph_index`` of the trace saved in ``trace_dir``."""
    trace = load_trace(trace_dir)
    graph = trace.graphs[graph_index]
    stage = graph.stages.get("pre_ge") or graph.stages["functional"]
    targets = {node.name: node.target for node in stage.nodes}
    out.mkdir(parents=True, exist_ok=True)
    model = phase_begin(graph.ir, targets)
    _write(model, out, 0, "PreRunBegin")
    model = phase_graph_fusion(model)
    _write(model, out, 1, "PreRunAfterOptimizeOriginalGraph")
    model = phase_optimize_subgraph(model)
    _write(model, out, 2, "PreRunAfterOptimizeSubgraph")
    model, subgraphs = phase_super_kernels(model)
    for number, sub in enumerate(subgraphs):
        holder = type(model)()
        holder.graph.add().CopyFrom(sub)
        _write(holder, out, 3 + number, sub.name)
    _write(model, out, 3 + len(subgraphs), "AfterSkGraph")
    shutil.copyfile(trace_dir / f"graph_{graph_index}" / "ascend_ir.py", out / f"dynamo_optimized_graph_{GRAPH_ID}_rank_0_pid_1.py")
    return sorted(out.iterdir())


if __name__ == "__main__":
    for written in make_dumps(Path(sys.argv[1]), Path(sys.argv[2])):
        print(written)
