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
from fxlab.passes.infra import PassError, PassFailedError, PassResult


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


# -- what the replay updates ------------------------------------------------------------------
UpdateRule = list[tuple[str, Any]]  # ("index", graph input) or ("fixed", constant), per list item


def replay_updates(gm: fx.GraphModule) -> tuple[dict[str, dict[Any, UpdateRule]], dict[str, list[Any]]]:
    """TorchAir's ``get_updated_ops_rulers_param`` on the graph it captures: for each op the
    replay updates (an ``.out`` attention op, atb's paged attention) whose lengths name
    graph inputs, how each updated parameter is rebuilt from the replay's inputs (its
    ``ops_update_rulers``), and the parameter names by op, then the argument indexes under
    ``arg_index_<op>`` (its ``updated_ops_param``)."""
    by_out = {entry.out_operator: entry for entry in workspace_ops().values()}
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    rulers: dict[str, dict[Any, UpdateRule]] = {}
    params: dict[str, list[Any]] = {}
    for node in gm.graph.nodes:
        entry = by_out.get(node.target)
        if entry is None:
            continue
        node_rulers, by_index = _update_rules(node, entry, placeholders)
        if node_rulers:
            rulers[node.name] = node_rulers
            params[node.name] = [key for key in node_rulers if key not in by_index]
            params[f"arg_index_{node.name}"] = [key for key in node_rulers if key in by_index]
    return rulers, params


def _update_rules(node: fx.Node, entry: WorkspaceOp, placeholders: list[fx.Node]) -> tuple[dict[Any, UpdateRule], set[int]]:
    """TorchAir's ``get_update_ruler``: a length list is rebuilt at replay only when an item
    of it is a graph input; an updated argument only when it is one."""
    rulers: dict[Any, UpdateRule] = {}
    for name, value in node.kwargs.items():
        if name not in entry.updated_params or not isinstance(value, (list, tuple)):
            continue
        rule = [_update_rule(node, name, item, placeholders) for item in value]
        if any(kind == "index" for kind, _ in rule):
            rulers[name] = rule
    by_index = set()
    for index, arg in enumerate(node.args):
        if index in (entry.updated_arg_indices or ()) and isinstance(arg, fx.Node) and arg in placeholders:
            rulers[index] = [("index", placeholders.index(arg))]
            by_index.add(index)
    return rulers, by_index


def _update_rule(node: fx.Node, name: str, item: Any, placeholders: list[fx.Node]) -> tuple[str, Any]:
    if item in placeholders:
        return ("index", placeholders.index(item))
    if isinstance(item, (int, float, bool)):
        return ("fixed", item)
    raise PassFailedError(
        "get_updated_ops_rulers_param",
        "torchair",
        PassError(
            f"{node.name}: the length list {name} holds {item}, neither a graph input nor a constant; TorchAir's backend "
            "raises here ('For updated param value only sym and constant is supported')"
        ),
    )


def read_outside_updates(gm: fx.GraphModule) -> set[fx.Node]:
    """The graph inputs some node reads other than as a length the replay updates: TorchAir's
    test in ``get_unupdated_sym_input_index`` (an input only an updated op reads, and only as
    an updated length, does not key the captured graphs)."""
    skipped: dict[Any, tuple[tuple[str, ...], tuple[int, ...]]] = {}
    for entry in workspace_ops().values():
        if entry.workspace_keys:
            skipped[entry.get_workspace] = (entry.updated_params, ())
        skipped[entry.out_operator] = (entry.updated_params, entry.updated_arg_indices or ())
    read = set()
    for node in gm.graph.nodes:
        if node.op != "placeholder":
            continue
        for user in node.users:
            keys, indices = skipped.get(user.target, ((), ()))
            if user.target not in skipped or node in _inputs_besides(user, keys, indices):
                read.add(node)
                break
    return read


def _inputs_besides(node: fx.Node, keys: tuple[str, ...], indices: tuple[int, ...]) -> set[fx.Node]:
    """The nodes ``node`` reads through its arguments other than ``keys`` and ``indices``."""
    args = [arg for index, arg in enumerate(node.args) if index not in indices]
    kwargs = [value for name, value in node.kwargs.items() if name not in keys]
    found: set[fx.Node] = set()
    fx.node.map_arg((args, kwargs), lambda n: found.add(n))
    return found
