"""A model's outputs as named leaves, for comparing eager with compiled leaf by leaf.

torch's pytree walks the containers it knows (tuples, lists, dicts, named tuples, and
every node a library registered, e.g. transformers' ``ModelOutput``). What it leaves
whole and is not a plain value -- a dataclass, or an object such as transformers'
``DynamicCache`` keeping its tensors in attributes -- is opened here: a dataclass by its
fields, any other object by its ``__dict__``, and walked again. Each leaf is named by its
path (``output[1].layers[0].keys``) so a mismatch says which one differs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import torch
from torch.utils._pytree import keystr, tree_flatten_with_path, tree_leaves

# Deeper objects than this are compared whole: an object graph, not a model output.
MAX_DEPTH = 8
_PLAIN = (type(None), bool, int, float, complex, str, bytes, torch.dtype, torch.device, torch.Size)


def output_leaves(value: Any, root: str = "output") -> dict[str, Any]:
    """``{path: leaf}`` for every leaf of ``value`` in walking order."""
    return dict(_walk(value, root, 0, set()))


def _keyed_leaves(value: Any) -> list[tuple[str, Any]]:
    """pytree's leaves with their key paths; for a node registered without key names
    (``flatten_with_keys_fn``), the leaves numbered in order."""
    try:
        return [(keystr(key_path), leaf) for key_path, leaf in tree_flatten_with_path(value)[0]]
    except ValueError:
        return [(f"<leaf {i}>", leaf) for i, leaf in enumerate(tree_leaves(value))]


def _walk(value: Any, path: str, depth: int, seen: set[int]) -> Iterator[tuple[str, Any]]:
    for key, leaf in _keyed_leaves(value):
        leaf_path = path + key
        fields = _fields(leaf) if depth < MAX_DEPTH and id(leaf) not in seen else None
        if fields is None:
            yield leaf_path, _comparable(leaf)
            continue
        seen.add(id(leaf))
        if not fields:
            yield leaf_path, type(leaf).__name__  # an object with no state: compare its type
        for name, field_value in fields.items():
            yield from _walk(field_value, f"{leaf_path}.{name}", depth + 1, seen)


def _fields(leaf: Any) -> dict[str, Any] | None:
    """The named parts of a leaf pytree does not open; ``None`` for a plain leaf."""
    if isinstance(leaf, (torch.Tensor, *_PLAIN)) or callable(leaf) and not dataclasses.is_dataclass(leaf):
        return None
    if dataclasses.is_dataclass(leaf) and not isinstance(leaf, type):
        return {f.name: getattr(leaf, f.name) for f in dataclasses.fields(leaf)}
    state = getattr(leaf, "__dict__", None)
    if isinstance(state, dict):
        return {k: v for k, v in state.items() if not k.startswith("__")}
    return None


def _comparable(leaf: Any) -> Any:
    """The leaf, or its type's name where ``==`` would only ask whether two objects are
    the same one (eager's and the compiled run's never are)."""
    if isinstance(leaf, (torch.Tensor, *_PLAIN)) or type(leaf).__eq__ is not object.__eq__:
        return leaf
    return f"<{type(leaf).__qualname__}>"
