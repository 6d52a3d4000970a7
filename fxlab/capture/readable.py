"""A stage's graph as readable Python (``print_readable``), computed once per graph state.

The capture asks for the functional stage's code twice (before and after the conversion
to Ascend IR, which only adds ``fxlab.*`` meta), and ``print_readable`` is the most
expensive part of recording a large stage. The code is kept for the few most recently
printed modules together with a fingerprint of everything ``print_readable`` reads:
each node's identity, name, op, target, args, kwargs, type, example value, stack trace
and the extra meta it prints. A later call reuses the code only if every one of those
is the very same object as before; any edit to the graph gives a new code.
"""

from __future__ import annotations

import operator
import os
from collections import OrderedDict
from typing import Any

import torch.fx as fx

from fxlab.capture.readable_fast import fast_print_readable

# Entries hold their module, so a module's id cannot be reused while it is cached; the
# capture needs at most the last four stages.
_CACHE_SIZE = 4
_ENV_FLAGS = ("FX_GRAPH_SHOW_STRIDE", "FX_GRAPH_SHOW_DEVICE", "FX_GRAPH_SHOW_META")
_cache: OrderedDict[int, tuple[fx.GraphModule, list[Any], str]] = OrderedDict()


def readable_code(gm: fx.GraphModule) -> str:
    """The graph as Python with shapes and dtypes, in the spirit of ``print_readable``."""
    fingerprint = _fingerprint(gm)
    if fingerprint is None:
        return _print_readable(gm)
    entry = _cache.get(id(gm))
    if entry is not None and entry[0] is gm and _same_objects(entry[1], fingerprint):
        _cache.move_to_end(id(gm))
        return entry[2]
    code = _print_readable(gm)
    _cache[id(gm)] = (gm, fingerprint, code)
    _cache.move_to_end(id(gm))
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return code


def clear_readable_cache() -> None:
    _cache.clear()


def _print_readable(gm: fx.GraphModule) -> str:
    code = fast_print_readable(gm)
    if code is None:
        code = torch_print_readable(gm)
    # make_fx names the class after the traced callable (``<lambda>``); say what it is.
    return code.replace("class <lambda>(", "class GraphModule(", 1)


def torch_print_readable(gm: fx.GraphModule) -> str:
    try:
        return gm.print_readable(print_output=False, include_stride=False, include_device=False, colored=False)
    except TypeError:  # older torch without these keyword arguments
        return gm.print_readable(print_output=False)


def _fingerprint(gm: fx.GraphModule) -> list[Any] | None:
    """Everything the printed code depends on, as objects compared by identity; None when
    the code should not be cached (sub-graph modules, or torch printing all meta)."""
    if os.environ.get("FX_GRAPH_SHOW_META", "0") == "1":
        return None
    if any(isinstance(child, fx.GraphModule) for child in gm.children()):
        return None
    graph = gm.graph
    flat: list[Any] = [graph, graph._codegen, type(gm), *(os.environ.get(flag) for flag in _ENV_FLAGS)]
    for node in graph.nodes:
        meta = node.meta
        flat += (
            node,
            node.name,
            node.op,
            node.target,
            node.args,
            node.kwargs,
            node.type,
            meta.get("val", meta.get("tensor_meta", meta.get("example_value"))),
            meta.get("stack_trace"),
            meta.get("custom"),
            meta.get("recompute"),
            meta.get("ac_graph_id"),
            meta.get("is_wrapped"),
        )
    return flat


def _same_objects(old: list[Any], new: list[Any]) -> bool:
    # Environment flags are strings read anew each time: compare those by value.
    head = 3 + len(_ENV_FLAGS)
    return (
        len(old) == len(new)
        and old[3:head] == new[3:head]
        and all(map(operator.is_, old[:3], new[:3]))
        and all(map(operator.is_, old[head:], new[head:]))
    )
