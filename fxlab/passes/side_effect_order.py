"""TorchAir's ``explicit_order_for_side_effect_nodes``: ops with effects beyond their
outputs (``PrintV2``, and the attention-FFN token exchange ``AttentionToFFN`` /
``FFNToAttention``, which return nothing) keep their program order through control
edges, the last one feeds ``NetOutput`` (so GE does not prune it), and each is ordered
against the op that writes back a graph input it reads.

Runs after the output reuse (it reads which graph outputs write which inputs). Graphs
without such ops are left as they are.
"""

from __future__ import annotations

from fxlab.ir.model import IrGraph, IrOp
from fxlab.passes.infra import PassResult
from fxlab.passes.output_reuse import REUSE_INPUT_OPTION, ge_options

SIDE_EFFECT_OPS = frozenset({"PrintV2", "AttentionToFFN", "FFNToAttention"})


def _control(op: IrOp) -> str:
    return f"{op.name}:-1"


def _add_control(src: IrOp, dst: IrOp) -> None:
    if _control(src) not in dst.inputs:
        dst.inputs.append(_control(src))


def order_side_effect_ops(graph: IrGraph) -> PassResult[IrGraph]:
    """Add the control edges in place; the side-effect ops found are the changed nodes."""
    ordered = [op for op in graph.ops if op.type in SIDE_EFFECT_OPS]
    if not ordered:
        return PassResult(graph, False)
    for src, dst in zip(ordered, ordered[1:]):
        _add_control(src, dst)
    net_output = next(op for op in graph.ops if op.type == "NetOutput")
    if ordered[-1].name not in [ref.split(":")[0] for ref in net_output.inputs]:
        net_output.inputs.append(_control(ordered[-1]))
    _order_against_input_writers(graph, net_output, ordered, _output_ref_input(graph))
    return PassResult(graph, True, [op.name for op in ordered])


def _output_ref_input(graph: IrGraph) -> dict[int, int]:
    """Graph output index -> the Data index it writes back, as the output reuse recorded
    it in the GE options (``input,output`` pairs joined by ``|``)."""
    pairs = ge_options(graph).get(REUSE_INPUT_OPTION, "")
    return {int(out): int(inp) for inp, out in (pair.split(",") for pair in pairs.split("|") if pair)}


def _order_against_input_writers(graph: IrGraph, net_output: IrOp, ordered: list[IrOp], output_ref_input: dict[int, int]) -> None:
    """A side-effect op reading a graph input and the op writing that input back keep
    their program order."""
    data_of = {op.attr_value("index"): f"{op.name}:0" for op in graph.ops if op.type == "Data"}
    sources = [ref.split(":")[0] for ref in net_output.inputs if not ref.endswith(":-1")]
    written_by = {data_of[output_ref_input[i]]: name for i, name in enumerate(sources) if i in output_ref_input}
    by_name = {op.name: op for op in graph.ops}
    position = {op.name: i for i, op in enumerate(graph.ops)}

    def writers_of_inputs(op: IrOp) -> set[str]:
        users: set[str] = set()
        for ref in op.inputs:
            if ref in written_by:
                users.add(written_by[ref])
                continue
            producer = by_name.get(ref.split(":")[0])
            if op.type == "PrintV2" and producer is not None and producer.type == "StringFormat":
                users |= writers_of_inputs(producer)
        return users

    for op in ordered:
        for writer in sorted(writers_of_inputs(op)):
            src, dst = op, by_name[writer]
            if position[src.name] > position[dst.name]:
                src, dst = dst, src
            _add_control(src, dst)
