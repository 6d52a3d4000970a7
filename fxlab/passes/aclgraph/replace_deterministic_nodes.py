"""npugraph_ex's ``replace_deterministic_nodes``: ``npugraph_ex.scope.deterministic(level)``
scopes become deterministic-level calls made while the ACL graph is captured.

The ``scope_enter`` becomes ``old = torch_npu.npu._get_deterministic_level()`` +
``torch_npu.npu.set_deterministic_level(level)``; its ``scope_exit`` becomes
``torch_npu.npu.set_deterministic_level(old)``. Every other node learns the level it runs
at (npugraph_ex warns at capture that a task update on replay does not re-apply it).
"""

from __future__ import annotations

import torch.fx as fx

from fxlab.npu_streams import get_deterministic_level, set_deterministic_level
from fxlab.passes.infra import PassResult
from fxlab.passes.stream_labels import is_marker, scope_keys, scope_values

LEVEL_KEY = "_op_deterministic_level"
SCOPE_LEVEL = "fxlab.deterministic_level"


def replace_deterministic_nodes(gm: fx.GraphModule, namespace: str = "npugraph_ex") -> PassResult[fx.GraphModule]:
    scopes: list[tuple[str, fx.Node | None, int | None]] = []
    notes = []
    graph = gm.graph
    for node in list(graph.nodes):
        if is_marker(node, namespace, "enter"):
            keys, values = scope_keys(node), scope_values(node)
            if LEVEL_KEY not in keys:
                scopes.append(("other", None, None))
                continue
            level = int(values[keys.index(LEVEL_KEY)])
            with graph.inserting_before(node):
                old = graph.call_function(get_deterministic_level)
                setter = graph.call_function(set_deterministic_level, args=(level,))
            node.replace_all_uses_with(setter)
            graph.erase_node(node)
            scopes.append(("deterministic", old, level))
            notes.append(f"{node.name}: deterministic level {level}")
        elif is_marker(node, namespace, "exit"):
            kind, saved, _ = scopes.pop()
            if kind != "deterministic":
                continue
            with graph.inserting_after(node):
                restore = graph.call_function(set_deterministic_level, args=(saved,))
            node.replace_all_uses_with(restore)
            graph.erase_node(node)
        else:
            levels = [level for kind, _, level in reversed(scopes) if kind == "deterministic"]
            if levels:
                node.meta[SCOPE_LEVEL] = levels[0]
    graph.lint()
    gm.recompile()
    return PassResult(gm, bool(notes), notes=notes)
