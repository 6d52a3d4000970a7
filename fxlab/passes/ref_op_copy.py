"""Drop the copies around an in-place GE op that writes a graph input, as TorchAir does
after conversion (``optimize_reference_op_redundant_copy``).

Functionalization turns an in-place operator on a graph input (a KV-cache write with
``npu_scatter_nd_update_``) into its functional twin and a write-back: ``Data`` ->
``TensorMove`` -> ref op, then ``Assign(Data, ref op output)``. Two copies GE need not
make: the ref op can write the input's memory itself. For each such ``Assign`` whose
``Data`` has no other reader, TorchAir points the ref op's ref input at the ``Data`` and
removes the ``TensorMove``; it removes the ``Assign`` too unless the ref output is a graph
output or the ``Assign`` is its only reader. Runs after dead ``Data`` removal and before
the output reuse pass, in TorchAir's order.
"""

from __future__ import annotations

from fxlab.ir.model import IrGraph, IrOp
from fxlab.passes.infra import PassResult

# TorchAir's table (``_get_output_to_input_ref_idx``): ref output index -> the input it writes.
REF_OUTPUT_INPUTS: dict[str, dict[int, int]] = {
    **{t: {0: 0} for t in ("Scatter", "QuantUpdateScatter", "ScatterNdUpdate", "FfnWorkerScheduler", "AttentionWorkerScheduler")},
    "ScatterPaKvCache": {0: 1, 1: 4},
    "MlaPrologV3": {2: 9, 3: 10},
    "KvRmsNormRopeCache": {0: 5, 1: 6},
    "GatherSelectionKvCache": {0: 0, 1: 1, 2: 2, 3: 3},
    "RecurrentGatedDeltaRule": {1: 4},
    "QkvRmsNormRopeCache": {0: 6, 1: 7, 2: 8},
}


def _ref_outputs(graph: IrGraph) -> dict[str, tuple[IrOp, int]]:
    """Each ref output (``op:index``) -> its op and the input index it writes. ``ScatterList``
    writes every input into the output of the same index."""
    refs = {}
    for op in graph.ops:
        table = {i: i for i in range(len(op.output_desc))} if op.type == "ScatterList" else REF_OUTPUT_INPUTS.get(op.type, {})
        for out, inp in table.items():
            refs[f"{op.name}:{out}"] = (op, inp)
    return refs


def _reader_counts(graph: IrGraph) -> dict[str, int]:
    """How many data inputs of non-``Data`` ops read each output (``Cmo`` prefetches do not count)."""
    counts: dict[str, int] = {}
    for op in graph.ops:
        if op.type in ("Data", "Cmo"):
            continue
        for ref in op.inputs:
            counts[ref] = counts.get(ref, 0) + 1
    return counts


def remove_ref_op_copies(graph: IrGraph) -> PassResult[IrGraph]:
    """Apply the pass to ``graph`` in place; see the module docstring. Its result names
    the ref ops that now write the graph input themselves."""
    by_name = graph.op_by_name()
    refs = _ref_outputs(graph)
    readers = _reader_counts(graph)
    net_output = next((op for op in graph.ops if op.type == "NetOutput"), None)
    outputs = set(net_output.inputs) if net_output is not None else set()
    removed: list[str] = []  # TensorMove and Assign ops
    repointed: list[str] = []
    for assign in [op for op in graph.ops if op.type == "Assign"]:
        target, value = assign.inputs[0], assign.inputs[1]
        data = by_name.get(target.rpartition(":")[0])
        if data is None or data.type != "Data" or value not in refs:
            continue
        ref_op, ref_input = refs[value]
        move = by_name.get(ref_op.inputs[ref_input].rpartition(":")[0])
        if move is None or move.type != "TensorMove" or move.inputs[0] != target or readers.get(target, 0) != 2:
            continue
        ref_op.inputs[ref_input] = target
        repointed.append(ref_op.name)
        removed.append(move.name)
        if value not in outputs and readers.get(value, 0) != 1:
            removed.append(assign.name)
    gone = set(removed)
    graph.ops = [op for op in graph.ops if op.name not in gone]
    return PassResult(graph, bool(repointed), repointed)
