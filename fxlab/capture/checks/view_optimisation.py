"""Whether the view optimisation is what makes a graph's Ascend IR compute other values
than the compiled run; said only where a second conversion shows it.

TorchAir converts no view node (``view``, ``reshape``, ``permute``, ``transpose``, ``t``).
With ``experimental_config.enable_view_optimize`` (on by default) it rebuilds each view a
computing node reads from the view's base, as a ``Reshape`` (or ``Reshape`` /
``Transpose``) derived from the view's strides on a contiguous copy of the base
(:mod:`fxlab.passes.optimize_views`). A chain of views through a value that is not laid
out as its strides say (a transposed result viewed as flat, say) can be rebuilt as
another view, and the graph then computes something else.

When a graph's IR disagrees with the compiled run, the checks convert the same graph
again with the optimisation off, by the same converter, and run it on the same inputs
(:func:`fxlab.capture.checks.ascend_ir.verify_ir`). Only when that IR agrees is the
optimisation named here, with the setting that avoids it. With fxlab's converters the
optimisation is an FX pass of the ``pre_ge`` stage, so the functional and ``pre_ge``
graphs, run node by node on the recorded inputs, show the first node whose value it
changed and the view it rebuilt for that node.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx as fx

from fxlab.capture.checks.runs import GraphRun
from fxlab.capture.checks.values import Comparison, clone_tree
from fxlab.capture.record_graph import LiveGraph
from fxlab.capture.records import format_args
from fxlab.passes.optimize_views import GE_OWNER_KEY
from fxlab.source_lines import node_source
from fxlab.stage_names import FUNCTIONAL, PRE_GE

SETTING = "experimental_config.enable_view_optimize"
MIRRORED = f"TorchAir's `{SETTING}`, on by default; fxlab's converters follow it, `--converter torchair` runs TorchAir's own"
FIX = (
    f"Fix: set `config.{SETTING} = False` in the CompilerConfig given to torchair.get_npu_backend (shown above to give the model's values)"
)


def view_optimisation_fault(index: int, live: LiveGraph, run: GraphRun, without: Comparison) -> str:
    """What to say of graph ``index``, whose IR disagrees with the compiled run while the
    same graph converted without the view optimisation agrees (``without``)."""
    shown = (
        f"converted again with it off (`{SETTING} = False`), the same graph's Ascend IR matches the compiled run "
        f"({without.compared} tensors, max |diff| {without.max_abs_diff:.3g})"
    )
    if live.converted_by_torchair:
        return (
            f"graph {index}: TorchAir's view optimisation, in TorchAir's own conversion, changes what this graph computes: {shown}. {FIX}"
        )
    return f"graph {index}: the view optimisation changes what this graph computes ({MIRRORED}): {shown}.{_first_changed(live, run)} {FIX}"


def _first_changed(live: LiveGraph, run: GraphRun) -> str:
    """The first node of ``pre_ge`` whose value is not its functional namesake's, with the
    rebuilt views it reads; empty when the graphs cannot be run on CPU or agree."""
    functional, pre_ge = live.modules.get(FUNCTIONAL), live.modules.get(PRE_GE)
    if functional is None or pre_ge is None:
        return ""
    before, after = _node_values(functional, run.inputs_before), _node_values(pre_ge, run.inputs_before)
    if before is None or after is None:
        return ""
    originals = {node.name: node for node in functional.graph.nodes}
    for node in pre_ge.graph.nodes:
        if node.op == "call_function" and node.name in before and node.name in after and _differs(before[node.name], after[node.name]):
            return f" It first changes {_named(node)}, {_reads(node, originals[node.name])}."
    return ""


def _node_values(gm: fx.GraphModule, inputs: list[Any]) -> dict[str, Any] | None:
    """Each node's value as it was made, when ``gm`` runs on copies of ``inputs``; None
    when it cannot run."""
    interpreter = _Snapshots(gm)
    try:
        with torch.no_grad():
            interpreter.run(*clone_tree(list(inputs)))
    except Exception:  # noqa: BLE001 - a graph that cannot run on CPU names no node
        return None
    return interpreter.values


class _Snapshots(fx.Interpreter):
    """Keeps a copy of each tensor a node makes: a view's value must not follow a later
    in-place write to its base (the ``copy_`` epilogue writes the graph's inputs)."""

    def __init__(self, gm: fx.GraphModule) -> None:
        super().__init__(gm)
        self.values: dict[str, Any] = {}

    def run_node(self, n: fx.Node) -> Any:
        value = super().run_node(n)
        if isinstance(value, torch.Tensor):
            self.values[n.name] = value.clone()
        return value


def _differs(before: Any, after: Any) -> bool:
    if not isinstance(before, torch.Tensor) or not isinstance(after, torch.Tensor):
        return False
    cmp = Comparison()
    cmp.add("value", before, after)
    return bool(cmp.mismatches)


def _reads(node: fx.Node, original: fx.Node) -> str:
    """Which views, read by ``original`` in the functional graph, the optimisation
    rebuilt for ``node``, each with what it was rebuilt as."""
    rebuilt = []
    for was, now in zip(original.all_input_nodes, node.all_input_nodes):
        if now.meta.get(GE_OWNER_KEY) == node.name and was is not now:
            rebuilt.append(f"{_call(was)}, rebuilt from its base as {_chain(now)}")
    if not rebuilt:
        return "as the view optimisation rebuilt what it reads"
    return "which reads " + "; and ".join(rebuilt)


def _chain(node: fx.Node) -> str:
    """The rebuilt view's steps back to its base: ``aten.reshape(clamp, [16])``."""
    steps: list[str] = []
    while node.meta.get(GE_OWNER_KEY) is not None and len(steps) < 8:
        steps.append(_call(node))
        if not node.all_input_nodes:
            break
        node = node.all_input_nodes[0]
    return " of ".join(steps)


def _call(node: fx.Node) -> str:
    target = str(node.target).removesuffix(".default")
    return f"{node.name} = {target}({format_args(node)})"


def _named(node: fx.Node) -> str:
    where = node_source(node)
    return f"{node.name} ({where})" if where else node.name
