"""Scope markers point at the user's ``with`` line, not inside the scope library; a call
Dynamo traced through fxlab's npu-device mode (one naming a device: ``torch.arange(...,
device=...)``, ``x.to(...)``) points at the user's line, not inside the mode.

``air::scope_enter`` / ``air::scope_exit`` are called from ``Scope.__enter__`` /
``__exit__`` (fxlab's ``fxlab/scope.py``, or TorchAir's ``torchair/scope/``), so the last
frame of a marker node's ``stack_trace`` is library code. Every later stage copies that
trace, and graph code, the py dump, the HTML and the scope report all show its last frame.
This pass drops the library frames (and fxlab's own) from the end of each Dynamo node's
trace, before the other stages are derived, so they name the line that opened or closed
the scope, or made the call.

When Dynamo did not trace the function holding the ``with`` (a graph break inside the
block, which it cannot resume inside a context manager, makes it run that function
eagerly), it compiles ``__enter__`` / ``__exit__`` themselves, each a graph of its own, and
their markers' traces hold library frames only. The ``with`` line is then the frame that
called the compiled one, read from the Python stack while Dynamo compiles it, and is put
in front of the trace.
"""

from __future__ import annotations

import linecache
import os
import sys
import types

import torch
import torch.fx as fx

import fxlab.scope
from fxlab.source_lines import frame_headers, is_fxlab_file

# fxlab's own folder, as a frame's file names it (a cheap test before the exact one).
_FXLAB_DIR = os.path.dirname(os.path.abspath(fxlab.scope.__file__))


def _is_scope_library(path: str) -> bool:
    normalized = path.replace("\\", "/")
    return os.path.abspath(path) == os.path.abspath(fxlab.scope.__file__) or "/torchair/scope/" in normalized


def _is_not_the_users(path: str) -> bool:
    return _is_scope_library(path) or is_fxlab_file(path)


def trimmed_stack_trace(stack_trace: str) -> str:
    """``stack_trace`` without its trailing frames in a scope library or fxlab (unchanged
    when every frame is, or none is)."""
    text = stack_trace.rstrip("\n")
    headers = frame_headers(text)
    keep = len(headers)
    while keep > 1 and _is_not_the_users(headers[keep - 1].group(1)):
        keep -= 1
    if keep == len(headers):
        return stack_trace
    return text[: headers[keep].start()]


def point_scope_markers_at_user_code(gm: fx.GraphModule) -> bool:
    """Trim every node's ``stack_trace`` (:func:`trimmed_stack_trace`), after giving a
    marker whose trace is all library frames the frame that called the compiled one;
    True when any changed."""
    changed = False
    caller: str | None = None
    for node in gm.graph.nodes:
        trace = node.meta.get("stack_trace")
        if not trace or ("scope" not in trace and _FXLAB_DIR not in trace):
            continue
        if _library_frames_only(trace):
            caller = caller if caller is not None else _caller_of_compiled_frame() or ""
            trace = caller + trace
        trimmed = trimmed_stack_trace(trace)
        if trimmed != node.meta["stack_trace"]:
            node.meta["stack_trace"] = trimmed
            changed = True
    return changed


def _library_frames_only(stack_trace: str) -> bool:
    files = [header.group(1) for header in frame_headers(stack_trace)]
    return bool(files) and all(_is_scope_library(f) for f in files)


def _caller_of_compiled_frame() -> str | None:
    """The frame that called the function Dynamo is compiling now, as a traceback entry
    (``None`` outside a Dynamo compile): the first frame past Dynamo's own, going out."""
    frame: types.FrameType | None = sys._getframe(1)
    seen_dynamo = False
    while frame is not None:
        path = frame.f_code.co_filename
        if path.startswith(_DYNAMO_ROOT):
            seen_dynamo = True
        elif seen_dynamo and not path.startswith(_TORCH_ROOT):
            code = linecache.getline(path, frame.f_lineno).strip()
            return f'  File "{path}", line {frame.f_lineno}, in {frame.f_code.co_name}\n    {code}\n'
        frame = frame.f_back
    return None


_TORCH_ROOT = os.path.dirname(torch.__file__) + os.sep
_DYNAMO_ROOT = os.path.join(_TORCH_ROOT, "_dynamo") + os.sep
