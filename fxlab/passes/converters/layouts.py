"""TorchAir's layout hints on GE ops: ``input_layout_info`` / ``output_layout_info``,
one (tensor index, layout) pair per tagged input or output, appended in call order as
its ``specific_op_input_layout`` / ``specific_op_output_layout`` do. GE reads them to
know a 4-D tensor is NCHW (or NCDHW) rather than plain ND."""

from __future__ import annotations

from collections.abc import Sequence

from fxlab.ir import ge
from fxlab.ir.model import Attr, AttrKind


def _append(t: ge.Tensor, key: str, indices: int | Sequence[int], layout: str) -> ge.Tensor:
    indices = [indices] if isinstance(indices, int) else list(indices)
    existing = t.op.attrs.get(key)
    pairs = tuple(existing.value) if existing is not None else ()
    t.op.set_attrs({key: Attr(AttrKind.LIST_INDEXED_STR, pairs + tuple((i, layout) for i in indices))})
    return t


def input_layout(t: ge.Tensor, indices: int | Sequence[int], layout: str = "ND") -> ge.Tensor:
    """Tag inputs ``indices`` of ``t``'s op with ``layout``."""
    return _append(t, "input_layout_info", indices, layout)


def output_layout(t: ge.Tensor, indices: int | Sequence[int], layout: str = "ND") -> ge.Tensor:
    """Tag outputs ``indices`` of ``t``'s op with ``layout``."""
    return _append(t, "output_layout_info", indices, layout)
