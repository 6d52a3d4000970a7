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
from fxlab.passes.converters import collectives  # noqa: F401 - collectives; npu_define operators registered while defined
from fxlab.passes.converters import air_ops  # noqa: F401 - TorchAir's air:: operators, converted while defined

# torch_npu operators by family, registered with npu while the operators are defined
from fxlab.passes.converters import npu_afd, npu_attention, npu_flash_attention, npu_kv_cache, npu_linear_attention  # noqa: F401
from fxlab.passes.converters import npu_comm_matmul, npu_mla, npu_moe_comm, npu_rope, npu_sparse_attention  # noqa: F401
from fxlab.passes.converters import npu_activation, npu_block_quant, npu_cast, npu_grouped_matmul, npu_matmul  # noqa: F401
from fxlab.passes.converters import npu_moe, npu_norm, npu_quant, npu_scatter  # noqa: F401
from fxlab.passes.converters.registry import CONVERTERS, Sample, register_converter

__all__ = ["CONVERTERS", "Sample", "register_converter"]
