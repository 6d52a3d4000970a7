"""TorchAir's ``optimize_sym_pack``: a list of host-fed sizes becomes one host input.

A ``Pack`` the conversion made of sizes that are all symbolic graph inputs (``Data`` ops
of ``Sym`` inputs, fed from the host; the ``Pack`` is marked ``_inputs_all_sym``, see
:mod:`fxlab.passes.symbolic_lists`) computes nothing GE needs to compute: the host knows
the whole list before the run. TorchAir's first pass over the GE graph replaces each such
``Pack`` by a new ``Data`` (int64, shape ``[N]``, appended after the graph's inputs) that
the host fills with the list, one ``Data`` per distinct list of inputs. The symbol ``Data``
ops read by nothing else are then dropped by the dead-data pass that follows.

fxlab does the same and records on the new ``Data`` which graph inputs it is made of
(``_fxlab_sym_pack``: their indices), so the reference executor feeds it as the host would
(:func:`fxlab.ir.graph_inputs.sym_pack_value`).
"""

from __future__ import annotations

from fxlab.ir.builder import name_candidates
from fxlab.ir.graph_inputs import SYM_PACK_ATTR, graph_input_index
from fxlab.ir.model import Attr, AttrKind, DataType, IrGraph, IrOp, TensorDesc, attr_of
from fxlab.passes.infra import PassResult
from fxlab.passes.symbolic_lists import ALL_SYM_ATTR


def optimize_sym_pack(graph: IrGraph) -> PassResult[IrGraph]:
    """Apply the pass to ``graph`` in place."""
    by_name = graph.op_by_name()
    packs = [op for op in graph.ops if op.type == "Pack" and op.attr_value(ALL_SYM_ATTR, False)]
    if not packs:
        return PassResult(graph, False)
    replaced: dict[str, str] = {}  # Pack output -> new Data output
    made: dict[tuple[str, ...], IrOp] = {}
    notes = []
    for pack in packs:
        key = tuple(pack.inputs)
        data = made.get(key)
        if data is None:
            data = _host_data(graph, pack, [by_name[ref.rpartition(":")[0]] for ref in pack.inputs])
            made[key] = data
            notes.append(
                f"{pack.name}: sizes {', '.join(r.rpartition(':')[0] for r in pack.inputs)} fed from the host as one input {data.name}"
            )
        replaced[f"{pack.name}:0"] = f"{data.name}:0"
    dropped = {pack.name for pack in packs}
    graph.ops = [op for op in graph.ops if op.name not in dropped]
    for op in graph.ops:
        if any(ref in replaced for ref in op.inputs):
            op.inputs = [replaced.get(ref, ref) for ref in op.inputs]
    graph.outputs = [replaced.get(ref, ref) for ref in graph.outputs]
    return PassResult(graph, True, notes=notes)


def _host_data(graph: IrGraph, pack: IrOp, items: list[IrOp]) -> IrOp:
    """A new ``Data`` after the graph's inputs holding the values of ``items``."""
    if any(item.type != "Data" for item in items):
        raise ValueError(f"{pack.name} is marked {ALL_SYM_ATTR} but reads an op that is no graph input")
    taken = {op.name for op in graph.ops}
    name = next(candidate for candidate in name_candidates("Data") if candidate not in taken)
    index = sum(1 for op in graph.ops if op.type == "Data")
    dtype = pack.input_desc[0].dtype if pack.input_desc else DataType.DT_INT64
    inputs = tuple(graph_input_index(graph, item.attr_value("index")) for item in items)
    attrs = {"index": attr_of(index), SYM_PACK_ATTR: Attr(AttrKind.LIST_INT, inputs)}
    data = IrOp(name, "Data", [], attrs, (), (TensorDesc("y", dtype, (len(items),)),))  # made after the walk: no FX node
    graph.ops.append(data)
    graph.inputs.append(name)
    return data
