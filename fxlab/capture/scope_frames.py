"""Scope markers point at the user's ``with`` line, not inside the scope library.

``air::scope_enter`` / ``air::scope_exit`` are called from ``Scope.__enter__`` /
``__exit__`` (fxlab's ``fxlab/scope.py``, or TorchAir's ``torchair/scope/``), so the last
frame of a marker node's ``stack_trace`` is library code. Every later stage copies that
trace, and graph code, the py dump, the HTML and the scope report all show its last frame.
This pass drops the library frames from the end of each Dynamo node's trace, before the
other stages are derived, so they name the line that opened or closed the scope.
"""

from __future__ import annotations

import os
import re

import torch.fx as fx

_FRAME = re.compile(r'^\s*File "([^"]*)", line \d+')


def _is_scope_library(path: str) -> bool:
    import fxlab.scope

    normalized = path.replace("\\", "/")
    return os.path.abspath(path) == os.path.abspath(fxlab.scope.__file__) or "/torchair/scope/" in normalized


def trimmed_stack_trace(stack_trace: str) -> str:
    """``stack_trace`` without its trailing frames in a scope library (unchanged when
    every frame is, or none is)."""
    lines = stack_trace.rstrip("\n").split("\n")
    starts = [i for i, line in enumerate(lines) if _FRAME.match(line)]
    keep = len(starts)
    while keep > 1 and _is_scope_library(_FRAME.match(lines[starts[keep - 1]]).group(1)):  # type: ignore[union-attr]
        keep -= 1
    if keep == len(starts):
        return stack_trace
    return "\n".join(lines[: starts[keep]]) + "\n"


def point_scope_markers_at_user_code(gm: fx.GraphModule) -> bool:
    """Trim every node's ``stack_trace`` (:func:`trimmed_stack_trace`); True when any changed."""
    changed = False
    for node in gm.graph.nodes:
        trace = node.meta.get("stack_trace")
        if trace and "scope" in trace:
            trimmed = trimmed_stack_trace(trace)
            if trimmed != trace:
                node.meta["stack_trace"] = trimmed
                changed = True
    return changed
