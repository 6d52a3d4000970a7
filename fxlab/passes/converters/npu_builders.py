"""Small builders the torch_npu converters share: the forms TorchAir's op wrappers give
the GE ops they make.

TorchAir generates one Python wrapper per GE op. Older wrappers write every attr and a
placeholder for every absent optional input (some inputs, added to a prototype later, are
left out when absent); newer ones (``ge_op``) leave out every absent optional input and
every attr at its prototype default. :func:`compact_op` makes an op the newer way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fxlab.ir import ge
from fxlab.ir.model import DataType


def compact_op(
    op_type: str,
    inputs: Mapping[str, ge.Tensor | Sequence[ge.Tensor] | None],
    attrs: Mapping[str, Any],
    defaults: Mapping[str, Any],
    outputs: Sequence[str] | int = ("y",),
    **kwargs: Any,
) -> list[ge.Tensor]:
    """``op_type`` as TorchAir's ``ge_op`` wrappers make it: absent inputs left out, a
    list input spread as ``name0, name1, ...``, attrs equal to ``defaults`` left out."""
    named: dict[str, Any] = {}
    for name, value in inputs.items():
        if isinstance(value, (list, tuple)):
            named.update({f"{name}{i}": t for i, t in enumerate(value)})
        elif value is not None:
            named[name] = value
    written = {k: v for k, v in attrs.items() if k not in defaults or not _same(v, defaults[k])}
    return ge.op(op_type, named, written, outputs=outputs, **kwargs)


def _same(value: Any, default: Any) -> bool:
    if isinstance(default, float) or isinstance(value, float):
        return float(value) == float(default)
    if isinstance(default, (list, tuple)):
        return list(value) == list(default)
    return bool(value == default) and type(value) is type(default)


def int64_input(value: Any) -> ge.Tensor | None:
    """A length list or tensor as TorchAir's ``dtype_promote(..., DT_INT64)`` gives it: a
    list becomes an int64 ``Const``, a tensor of another type a ``Cast``."""
    if value is None:
        return None
    if isinstance(value, ge.Tensor):
        return ge.cast_to(value, DataType.DT_INT64)
    return ge.const([int(v) for v in value], DataType.DT_INT64)


def tensor_move(x: ge.Tensor) -> ge.Tensor:
    """A copy of ``x`` into new memory: TorchAir's guard before an op that writes its input."""
    return ge.op1("TensorMove", {"x": x})
