"""fxlab's built-in Ascend IR converters, one module per op family.

Importing this package registers every converter in :data:`registry.CONVERTERS`.
"""

from __future__ import annotations

from fxlab.passes.converters import elementwise  # noqa: F401
from fxlab.passes.converters import activation, comparison, creation, elementwise_extra, reduction  # noqa: F401
from fxlab.passes.converters import conv, matmul, norm  # noqa: F401
from fxlab.passes.converters import index, join, shape, symbolic  # noqa: F401
from fxlab.passes.converters import auto, inplace  # noqa: F401
from fxlab.passes.converters import backward, batch_norm_training, complex_views, embedding, fft, foreach, loss  # noqa: F401
from fxlab.passes.converters import pointwise, rng, sampling, slice_backward  # noqa: F401
from fxlab.passes.converters import npu  # noqa: F401 - torch_npu operators, registered while defined
from fxlab.passes.converters.registry import CONVERTERS, Sample, register_converter

__all__ = ["CONVERTERS", "Sample", "register_converter"]
