"""Turn ``Assign`` into a graph input into an extra graph output, as TorchAir does before
handing its graph to GE.

Functionalization writes a mutated graph input back with a trailing ``copy_``, which
converts to ``Assign(input, value)``. TorchAir does not keep that ``Assign``: it makes
``value`` a graph output (reusing an existing output when ``value`` already is one, or
replacing the ``Assign`` output where it is one), removes the ``Assign``, and tells GE to
write that output into the input's memory with the compile option
``ge.exec.outputReuseInputMemIndexes = "<input index>,<output index>|..."``. The other
outputs of the original graph get ``ge.exec.outputReuseMemIndexes = "<i>,<j>,..."``. An
``Assign`` into anything but a graph input stays, kept alive by a control edge into
``NetOutput``.

One value assigned into two graph inputs (``x1.add_(1); x0.copy_(x1)``): TorchAir's own
mapping (``_mapping_assign_op_to_graph_output``) finds the value already an output and
maps that output to the second input too, in a dict keyed by output, so only the last
input keeps its write and the other is never updated. fxlab keeps TorchAir's mapping in
every other case but gives each further input its own output carrying the value, so GE
writes every assigned input (one output is written into one input's memory).

GE options are not part of a GE graph; fxlab records them on the graph as string attrs
named ``_fxlab_ge_option:<option>`` so dumps show them and the reference executor
(:func:`execute_with_output_reuse`) can honour them.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Mapping, Sequence

import torch

from fxlab.ir.execute import execute
from fxlab.ir.graph_inputs import graph_input_index
from fxlab.ir.host_outputs import rebuild_fx_outputs
from fxlab.ir.model import TORCHAIR_DTYPE_NUMBER, Attr, AttrKind, IrGraph, IrOp, TensorDesc
from fxlab.passes.infra import PassResult

REUSE_INPUT_OPTION = "ge.exec.outputReuseInputMemIndexes"
REUSE_OUTPUT_OPTION = "ge.exec.outputReuseMemIndexes"
OPTION_ATTR_PREFIX = "_fxlab_ge_option:"
OUTPUT_DTYPES_ATTR = "_output_dtypes"


def _net_output(graph: IrGraph) -> IrOp:
    for op in graph.ops:
        if op.type == "NetOutput":
            return op
    raise ValueError(f"graph {graph.name} has no NetOutput op")


def _data_outputs(graph: IrGraph) -> dict[str, IrOp]:
    return {f"{op.name}:0": op for op in graph.ops if op.type == "Data"}


def _output_positions(net_output: IrOp) -> list[int]:
    """For each entry of ``net_output.inputs``, its graph output index (-1 for control edges)."""
    positions, count = [], 0
    for source in net_output.inputs:
        if source.endswith(":-1"):
            positions.append(-1)
        else:
            positions.append(count)
            count += 1
    return positions


def _map_to_output(net_output: IrOp, assign: IrOp, data: IrOp, output_dtypes: list[int], taken: dict[int, int]) -> list[int]:
    """The graph outputs that now carry the assigned value (appending one if none does).

    An output already written into another input (``taken``) is not shared: GE writes
    one output into one input's memory, so a value assigned into two inputs gets an
    output for each."""
    assign_out, value = f"{assign.name}:0", assign.data_inputs[1]
    own = taken.get  # output index -> the input it is already written into
    index_of_data = data.attr_value("index")
    positions = _output_positions(net_output)
    found = []
    for i, source in enumerate(net_output.inputs):
        if source == assign_out:
            net_output.inputs[i] = value
            found.append(positions[i])
        elif source == value and own(positions[i], index_of_data) == index_of_data:
            found.append(positions[i])
    if found:
        return found
    net_output.inputs.append(value)
    desc = assign.output_desc[0]
    index = len(net_output.input_desc)
    net_output.input_desc = (*net_output.input_desc, TensorDesc(f"input{index}", desc.dtype, tuple(data.output_desc[0].shape), desc.layout))
    output_dtypes.append(TORCHAIR_DTYPE_NUMBER[desc.dtype])
    return [index]


def _initial_output_dtypes(graph: IrGraph, net_output: IrOp) -> list[int]:
    """TorchAir's ``_output_dtypes`` graph attr (its dtype numbers, one per output)."""
    attr = graph.attrs.get(OUTPUT_DTYPES_ATTR)
    if attr is not None:
        return list(attr.value)
    return [TORCHAIR_DTYPE_NUMBER[d.dtype] for d in net_output.input_desc]


def map_assign_to_graph_output(graph: IrGraph) -> PassResult[IrGraph]:
    """Apply the rewrite to ``graph`` in place; see the module docstring. The GE options
    go on the graph (:func:`ge_options` reads them back); the result's notes name a value
    written into several inputs."""
    net_output = _net_output(graph)
    original_outputs = len(net_output.input_desc)
    output_dtypes = _initial_output_dtypes(graph, net_output)
    data_ops = _data_outputs(graph)
    output_ref_input: dict[int, int] = {}  # graph output index -> the Data index it writes
    removed: set[str] = set()
    kept = False
    for op in [op for op in graph.ops if op.type == "Assign"]:
        ref = op.data_inputs[0]
        if ref in data_ops:
            data = data_ops[ref]
            for index in _map_to_output(net_output, op, data, output_dtypes, output_ref_input):
                output_ref_input[index] = data.attr_value("index")
            removed.add(op.name)
        else:
            net_output.inputs.append(f"{op.name}:-1")
            kept = True
    notes = _shared_value_notes(graph, output_ref_input)
    graph.ops = [op for op in graph.ops if op.name not in removed]
    graph.outputs = list(net_output.data_inputs)
    graph.attrs[OUTPUT_DTYPES_ATTR] = Attr(AttrKind.LIST_INT, tuple(output_dtypes))
    for key, value in reuse_options(output_ref_input, original_outputs).items():
        graph.attrs[OPTION_ATTR_PREFIX + key] = Attr(AttrKind.STR, value)
    changed = bool(removed or kept)
    return PassResult(graph, changed, [net_output.name] if changed else [], notes)


def ge_options(graph: IrGraph) -> dict[str, str]:
    """The GE options recorded on ``graph`` (by this pass, or read from TorchAir's)."""
    return {key[len(OPTION_ATTR_PREFIX) :]: str(attr.value) for key, attr in graph.attrs.items() if key.startswith(OPTION_ATTR_PREFIX)}


def _shared_value_notes(graph: IrGraph, output_ref_input: dict[int, int]) -> list[str]:
    """One sentence per value written into several graph inputs (see the module doc)."""
    sources = _net_output(graph).data_inputs
    inputs_of: dict[str, list[int]] = {}
    for out, inp in sorted(output_ref_input.items()):
        inputs_of.setdefault(sources[out], []).append(inp)
    return [
        f"{value} is written into graph inputs {', '.join(map(str, inputs))}: one graph output each "
        f"(TorchAir's own mapping would write only input {inputs[-1]})"
        for value, inputs in inputs_of.items()
        if len(inputs) > 1
    ]


def reuse_options(output_ref_input: dict[int, int], original_outputs: int) -> dict[str, str]:
    """TorchAir's memory-reuse compile options for a graph with ``original_outputs``
    outputs before the rewrite."""
    options: dict[str, str] = {}
    others = [i for i in range(original_outputs) if i not in output_ref_input]
    if others:
        options[REUSE_OUTPUT_OPTION] = ",".join(str(i) for i in others)
    if output_ref_input:
        options[REUSE_INPUT_OPTION] = "|".join(f"{inp},{out}" for out, inp in output_ref_input.items())
    return options


def parse_reuse_input_option(value: str) -> dict[int, int]:
    """``"<input>,<output>|..."`` -> {output index: input index}."""
    pairs = (item.split(",") for item in value.split("|") if item)
    return {int(out): int(inp) for inp, out in pairs}


def execute_with_output_reuse(
    graph: IrGraph, inputs: Sequence[torch.Tensor], values: dict[str, Any] | None = None, kernels_by_op: Mapping[str, Any] | None = None
) -> list[torch.Tensor]:
    """Run ``graph`` like GE with its reuse option: each output mapped to an input is
    written into that input's memory and *is* that input afterwards. ``values`` and
    ``kernels_by_op`` as for :func:`fxlab.ir.execute.execute`."""
    outputs = execute(graph, inputs, values, kernels_by_op)
    attr = graph.attrs.get(OPTION_ATTR_PREFIX + REUSE_INPUT_OPTION)
    if attr is None:
        return outputs
    mapping = parse_reuse_input_option(attr.value)
    # Every output holds its value as of the end of the run: one that is an input's own
    # memory (a Data passed straight to NetOutput) is read before any input is written.
    # That holds for every output, not only the written ones: an input returned as it is
    # (``v.copy_(x); x.add_(1); return v``) keeps the value it had before the write.
    input_memory = {t.untyped_storage().data_ptr() for t in inputs}
    outputs = [o.clone() if isinstance(o, torch.Tensor) and o.untyped_storage().data_ptr() in input_memory else o for o in outputs]
    for out, data_index in mapping.items():
        target = inputs[graph_input_index(graph, data_index)]  # the option names Data indices
        with torch.no_grad():
            target.copy_(outputs[out])
        outputs[out] = target
    return outputs


def execute_fx_outputs(
    graph: IrGraph, inputs: Sequence[torch.Tensor], values: dict[str, Any] | None = None, kernels_by_op: Mapping[str, Any] | None = None
) -> list[Any]:
    """The FX graph's outputs as TorchAir returns them from a run of ``graph``: the GE
    run (:func:`execute_with_output_reuse`), then the outputs TorchAir makes on the host
    (views of inputs, sizes, plain values; see :mod:`fxlab.ir.host_outputs`). Without a
    record of host outputs, every ``NetOutput`` value, the reuse outputs included.
    ``values`` (for :func:`fxlab.ir.host_outputs.converted_values`) and ``kernels_by_op``
    as for :func:`fxlab.ir.execute.execute`."""
    return rebuild_fx_outputs(graph, inputs, execute_with_output_reuse(graph, inputs, values, kernels_by_op))
