"""A model's state outside its parameters and buffers, kept and put back around a check's runs.

A model may hold what a call changes in plain attributes: a KV cache object
(transformers' ``StaticCache`` assigned as ``self.cache``, whose layers create their key
and value tensors on first use and write into them), a step counter, a plain tensor. The
eager check runs eager and compiled from one starting state; parameters and buffers are
put back between the runs by name, and this module does the same for those attributes:
each is deep-copied once, and put back in place where it can be (the same list, dict,
object and tensor, filled from the copy), so that what Dynamo guards on keeps its
identity. A value that cannot be copied is left as it is.
"""

from __future__ import annotations

import copy
from typing import Any

import torch

# What ``nn.Module`` keeps in its own ``__dict__`` under these names is torch's bookkeeping
# (hooks, the training flag is a plain bool the model does not change in a call).
_TORCH_ATTRIBUTES = frozenset({"training"})


class PlainState:
    """The plain attributes of every submodule of ``model``, as they are now."""

    def __init__(self, model: Any) -> None:
        self._saved: list[tuple[dict[str, Any], str, Any]] = []
        if not isinstance(model, torch.nn.Module):
            return
        # The model's modules, parameters and buffers stay themselves in a copy that names them.
        keep: dict[int, Any] = {id(m): m for m in model.modules()}
        keep.update({id(t): t for t in (*model.parameters(), *model.buffers())})
        for module in model.modules():
            for name, value in vars(module).items():
                if name.startswith("_") or name in _TORCH_ATTRIBUTES or isinstance(value, torch.nn.Module) or callable(value):
                    continue
                saved = _copied(value, keep)
                if saved is not _UNCOPIED:
                    self._saved.append((vars(module), name, saved))

    def put_back(self) -> None:
        """Every attribute as it was when this state was taken."""
        with torch.no_grad():
            for attributes, name, saved in self._saved:
                value = copy.deepcopy(saved)
                if not _fill(attributes.get(name), value):
                    attributes[name] = value


_UNCOPIED = object()


def _copied(value: Any, keep: dict[int, Any]) -> Any:
    if isinstance(value, (str, bytes, int, float, bool, type(None))):
        return value
    try:
        return copy.deepcopy(value, dict(keep))
    except Exception:  # noqa: BLE001 - a value Python cannot copy (a lock, a handle) is left as it is
        return _UNCOPIED


def _fill(current: Any, value: Any) -> bool:
    """Make ``current`` hold ``value`` in place; False when it cannot (another type,
    shape or length: the caller puts ``value`` in its place)."""
    if current is value:
        return True
    if isinstance(current, torch.Tensor) and isinstance(value, torch.Tensor):
        if current.shape != value.shape or current.dtype != value.dtype or current.is_inference():
            return False
        current.copy_(value)
        return True
    if type(current) is not type(value):
        return False
    if isinstance(current, list) and len(current) == len(value):
        for index, item in enumerate(value):
            if not _fill(current[index], item):
                current[index] = item
        return True
    if isinstance(current, dict):
        for key in [k for k in current if k not in value]:
            del current[key]
        for key, item in value.items():
            if key not in current or not _fill(current[key], item):
                current[key] = item
        return True
    if hasattr(current, "__dict__") and not isinstance(current, (torch.nn.Module, type)):
        _fill(vars(current), vars(value))
        return True
    return False
