"""How two values are compared: :class:`Comparison` (per-dtype tolerances, shape and
dtype only where values cannot agree), a model's outputs and inputs as named leaves, and
the copies every run starts from (:func:`clone_tree`).

Leaves. torch's pytree walks the containers it knows (tuples, lists, dicts, named tuples,
and every node a library registered, e.g. transformers' ``ModelOutput``). What it leaves
whole and is not a plain value -- a dataclass, or an object such as transformers'
``DynamicCache`` keeping its tensors in attributes -- is opened here: a dataclass by its
fields, any other object by its ``__dict__``, and walked again. Each leaf is named by its
path (``output[1].layers[0].keys``) so a mismatch says which one differs.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy
import torch
from torch.utils._pytree import keystr, tree_flatten_with_path, tree_leaves

from fxlab.capture.input_sets import with_dynamo_marks
from fxlab.capture.trace import CheckResult

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


# (rtol, atol) per dtype, as torch.testing.assert_close sets them.
_TOLERANCES = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex32: (1e-3, 1e-5),
    torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}


def _tolerance(dtype: torch.dtype) -> tuple[float, float]:
    return _TOLERANCES.get(dtype, (0.0, 0.0))  # assert_close compares other dtypes exactly


def _same_value(expected: Any, actual: Any) -> bool:
    """Equality of two non-tensor leaves. Arrays (``==`` gives no single truth value)
    compare element-wise; anything else that cannot be compared counts as different,
    never as a match."""
    if type(expected) is not type(actual):
        return False
    if isinstance(expected, float) and expected != expected:
        return actual != actual  # NaN where eager has NaN
    try:
        return bool(expected == actual)
    except Exception:  # noqa: BLE001 - e.g. a numpy array
        pass
    try:
        return bool(numpy.array_equal(expected, actual, equal_nan=True))
    except Exception:  # noqa: BLE001 - not array-like
        return False


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass
class Comparison:
    """Tensors compared by value, or with ``values=False`` by shape and dtype only
    (``formed`` counts those)."""

    compared: int = 0
    max_abs_diff: float = 0.0
    mismatches: list[str] = field(default_factory=list)
    values: bool = True
    formed: int = 0
    notes: list[str] = field(default_factory=list)  # differences in values no one uses

    def add_form(self, label: str, expected: torch.Tensor, actual: Any) -> None:
        """Shape and dtype only: for a value that depends on random draws."""
        if isinstance(actual, torch.Tensor):
            self.formed += 1
        self._differs_in_form(label, expected, actual)

    def _differs_in_form(self, label: str, expected: torch.Tensor, actual: Any, against: str = "") -> bool:
        """Record a mismatch when ``actual`` is no tensor, or has another shape or dtype."""
        if not isinstance(actual, torch.Tensor):
            self.mismatches.append(f"{label}: expected a tensor, got {type(actual).__name__}")
            return True
        if expected.shape != actual.shape or expected.dtype != actual.dtype:
            self.mismatches.append(f"{label}: {actual.dtype}{list(actual.shape)} vs {against}{expected.dtype}{list(expected.shape)}")
            return True
        return False

    def add(self, label: str, expected: Any, actual: Any) -> None:
        expected, actual = _local(expected), _local(actual)
        if not self.values and isinstance(expected, torch.Tensor):
            self.add_form(label, expected, actual)
            return
        if not isinstance(expected, torch.Tensor):
            if not _same_value(expected, actual):
                self.mismatches.append(f"{label}: {_short(expected)} != {_short(actual)}")
            return
        if isinstance(actual, torch.Tensor):
            self.compared += 1
        if self._differs_in_form(label, expected, actual, against="eager "):
            return
        if expected.numel() == 0:
            return
        if expected.is_floating_point() or expected.is_complex():
            diff = (expected - actual).abs().max().item()
            self.max_abs_diff = max(self.max_abs_diff, diff)
            rtol, atol = _tolerance(expected.dtype)
            if not torch.allclose(expected, actual, rtol=rtol, atol=atol, equal_nan=True):
                self.mismatches.append(f"{label}: max |diff| {diff:.3g}")
        elif not torch.equal(expected, actual):
            self.mismatches.append(f"{label}: values differ")

    def merge(self, other: Comparison) -> None:
        self.compared += other.compared
        self.formed += other.formed
        self.max_abs_diff = max(self.max_abs_diff, other.max_abs_diff)
        self.mismatches.extend(other.mismatches)
        self.notes.extend(other.notes)

    def result(self, not_run: list[str] | None = None) -> CheckResult:
        """The check's result; with ``not_run`` (what could not be compared, and why), a
        check that compared nothing and found nothing says it did not run."""
        if not_run and self.compared == 0 and not self.mismatches:
            return CheckResult(ok=True, skipped="; ".join(not_run), notes=self.notes)
        return CheckResult(
            ok=not self.mismatches,
            compared=self.compared,
            max_abs_diff=self.max_abs_diff,
            mismatches=self.mismatches[:10],
            notes=self.notes,
            not_run=list(not_run or []),
        )


def _local(value: Any) -> Any:
    """A distributed tensor (a tensor-parallel parameter) as this rank's shard: what the
    rank computed and holds."""
    to_local = getattr(value, "to_local", None)
    return to_local() if isinstance(value, torch.Tensor) and callable(to_local) else value


def compare_outputs(cmp: Comparison, eager: Any, compiled: Any) -> None:
    """Compare two model outputs leaf by leaf (see :func:`output_leaves`)."""
    expected, actual = output_leaves(eager), output_leaves(compiled)
    only_eager = [p for p in expected if p not in actual]
    only_compiled = [p for p in actual if p not in expected]
    if only_eager or only_compiled:
        cmp.mismatches.append(f"outputs differ in structure: eager has {_few(only_eager)}, compiled has {_few(only_compiled)}")
    for path, value in expected.items():
        if path in actual:
            cmp.add(path, value, actual[path])


def compare_inputs(cmp: Comparison, eager: tuple[Any, Any], compiled: tuple[Any, Any]) -> None:
    """The example inputs after the two calls (a model may write into them), leaf by leaf:
    ``input 1[0]`` is the first tensor of argument 1's list, ``input 'cache'`` a keyword."""
    (eager_args, eager_kwargs), (args, kwargs) = eager, compiled
    pairs = [(f"input {i}", e, c) for i, (e, c) in enumerate(zip(eager_args, args))]
    pairs += [(f"input {k!r}", eager_kwargs[k], kwargs[k]) for k in eager_kwargs if k in kwargs]
    for root, e, c in pairs:
        expected, actual = output_leaves(e, root), output_leaves(c, root)
        for path, value in expected.items():
            cmp.add(f"{path} after the call", value, actual.get(path))


def _few(paths: list[str]) -> str:
    if not paths:
        return "nothing more"
    return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def clone_tree(value: Any) -> Any:
    """A copy of a value with every tensor in it cloned (what a run may write into).
    Tensors that share memory (views of one buffer, one tensor passed twice) share it in
    the copy too, as they are views of one cloned buffer: a run writing into one sees it
    in the others, as the run on the originals does, and Dynamo sees the same aliasing."""
    leaves = [leaf for leaf in tree_leaves(value) if isinstance(leaf, torch.Tensor)]
    keys = [_storage_key(leaf) for leaf in leaves]
    counts = collections.Counter(key for key in keys if key is not None)
    shared = {key for key, n in counts.items() if n > 1}
    return _cloned(value, shared, {})


def _cloned(value: Any, shared: set[Any], buffers: dict[Any, Any]) -> Any:
    if isinstance(value, torch.Tensor):
        key = _storage_key(value) if shared else None
        if key not in shared:
            return _clone_tensor(value)
        if key not in buffers:
            buffers[key] = value.untyped_storage().clone()
        view = torch.empty(0, dtype=value.dtype, device=value.device).set_(
            buffers[key], value.storage_offset(), value.shape, value.stride()
        )
        return with_dynamo_marks(view, value)
    if isinstance(value, (list, tuple)):
        return type(value)(_cloned(v, shared, buffers) for v in value)
    if isinstance(value, dict):
        return {k: _cloned(v, shared, buffers) for k, v in value.items()}
    return value


def _storage_key(t: torch.Tensor) -> Any:
    """Which memory a plain dense tensor views (None for anything else: fake, meta,
    sparse, a subclass, an empty storage)."""
    if type(t) not in (torch.Tensor, torch.nn.Parameter) or t.layout != torch.strided or t.device.type == "meta":
        return None
    try:
        storage = t.untyped_storage()
    except (RuntimeError, NotImplementedError):
        return None
    return (storage.data_ptr(), t.device) if storage.nbytes() else None


def _clone_tensor(t: torch.Tensor) -> torch.Tensor:
    """A copy that keeps the user's Dynamo marks (``mark_dynamic``, ``mark_static`` ...:
    attributes ``_dynamo_*`` on the tensor), so the compiled run sees what the user set."""
    return with_dynamo_marks(t.detach().clone(), t)
