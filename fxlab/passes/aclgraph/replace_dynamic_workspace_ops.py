"""TorchAir's ``replace_dynamic_workspace_ops``: attention operators whose workspace size
depends on the sequence lengths get a workspace of the largest size and ``out=`` buffers
made before them, so a captured ACL graph can be replayed with other lengths.

``npu_fused_infer_attention_score`` (and its ``_v2``) becomes
``_npu_fused_infer_attention_score[_v2]_get_max_workspace(...)`` + one ``torch.empty``
per output + the operator's ``.out`` overload taking ``workspace=`` and ``out=``. The
lengths the replay updates (``actual_seq_lengths`` ...) are listed for the capture code.
These are torch_npu operators: the pass acts only where they are defined (a torch_npu
copy's schemas, or torch_npu itself), as TorchAir's table is built when it is imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx

from fxlab.passes.aclgraph.sym_shapes import SymShapeBuilder, symbol_inputs
from fxlab.passes.infra import PassResult


@dataclass(frozen=True)
class WorkspaceOp:
    get_workspace: Any
    out_operator: Any
    workspace_keys: tuple[str, ...]
    output_keys: tuple[str, ...]
    updated_params: tuple[str, ...]
    updated_arg_indices: tuple[int, ...] | None = None


_ATTENTION = (
    ("npu_fused_infer_attention_score", ("actual_seq_lengths", "actual_seq_lengths_kv", "actual_shared_prefix_len")),
    ("npu_fused_infer_attention_score_v2", ("actual_seq_qlen", "actual_seq_kvlen")),
)
# atb's paged attention: replayed with new context lengths (argument 7; 4 and 6), no out= rewrite.
_PAGED = (("_npu_paged_attention", {"context_lens": 7}), ("_npu_paged_attention_splitfuse", {"context_lens": 4, "seq_len": 6}))


def workspace_ops() -> dict[Any, WorkspaceOp]:
    """TorchAir's table, for the operators defined in this process."""
    table: dict[Any, WorkspaceOp] = {}
    npu = torch.ops.npu
    for name, params in _ATTENTION:
        if hasattr(npu, name):
            op = getattr(npu, name)
            workspace = getattr(npu, f"_{name}_get_max_workspace").default
            table[op.default] = WorkspaceOp(workspace, op.out, ("workspace",), ("attention_out", "softmax_lse"), params)
    atb = getattr(torch.ops, "atb", None)
    for name, positions in _PAGED:
        op = getattr(atb, name, None) if atb is not None and hasattr(atb, name) else None
        if op is not None and _positions_match(op.default, positions):
            table[op.default] = WorkspaceOp(None, op.default, (), (), (), tuple(positions.values()))
    return table


def _positions_match(op: Any, positions: dict[str, int]) -> bool:
    names = [a.name for a in op._schema.arguments]
    return all(name in names and names.index(name) == index for name, index in positions.items())


def replace_dynamic_workspace_ops(gm: fx.GraphModule, shapes: SymShapeBuilder | None = None) -> PassResult[fx.GraphModule]:
    table = workspace_ops()
    if not table:
        return PassResult(gm, False)
    shapes = shapes or SymShapeBuilder(gm, symbol_inputs(gm))
    replaced = []
    for node in list(gm.graph.nodes):
        entry = table.get(node.target)
        if entry is None or not entry.output_keys or "val" not in node.meta:
            continue
        with gm.graph.inserting_before(node):
            kwargs = dict(node.kwargs)
            _add_workspace(gm, node, entry, kwargs)
            _add_outputs(gm, node, entry, kwargs, shapes)
            run = gm.graph.call_function(entry.out_operator, args=node.args, kwargs=kwargs)
        node.replace_all_uses_with(run)
        replaced.append(node)
    for node in replaced:
        gm.graph.erase_node(node)
    gm.graph.lint()
    return PassResult(gm, bool(replaced), notes=[f"{n.name}: workspace and outputs made before it" for n in replaced])


def _add_workspace(gm: fx.GraphModule, node: fx.Node, entry: WorkspaceOp, kwargs: dict[str, Any]) -> None:
    if not entry.workspace_keys:
        return
    workspace = gm.graph.call_function(entry.get_workspace, args=node.args, kwargs=node.kwargs)
    values = workspace if isinstance(workspace, (tuple, list)) else (workspace,)
    if len(values) != len(entry.workspace_keys):
        raise RuntimeError(f"{node.name}: {len(values)} workspace value(s) for {len(entry.workspace_keys)} workspace key(s)")
    kwargs.update(zip(entry.workspace_keys, values))


def _add_outputs(gm: fx.GraphModule, node: fx.Node, entry: WorkspaceOp, kwargs: dict[str, Any], shapes: SymShapeBuilder) -> None:
    results = node.meta["val"] if isinstance(node.meta["val"], (tuple, list)) else (node.meta["val"],)
    if len(results) != len(entry.output_keys):
        raise RuntimeError(f"{node.name}: {len(results)} output(s) for {len(entry.output_keys)} output key(s)")
    outputs = [
        gm.graph.call_function(torch.empty, args=(shapes.shape(r.shape),), kwargs={"dtype": r.dtype, "device": r.device}) for r in results
    ]
    kwargs["out"] = outputs[0] if len(outputs) == 1 else outputs
