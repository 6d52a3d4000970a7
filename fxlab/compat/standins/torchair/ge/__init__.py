"""Stand-in ``torchair.ge``: custom_op, attr wrappers, DataType, Tensor hints, Const/Cast/Clone."""

from __future__ import annotations

from fxlab.compat.ge_api import Cast, Clone, Const, DataType, Format, TensorSpec, custom_op
from fxlab.ir.builder import Tensor

from . import attr  # noqa: F401

__all__ = ["custom_op", "Const", "Cast", "DataType", "Format", "Tensor", "TensorSpec", "Clone", "attr"]
