"""CPU reference kernels for GE op types, one module per op family.

Importing this package registers them in :data:`fxlab.ir.kernels.registry.KERNELS`.
"""

from __future__ import annotations

from fxlab.ir.kernels import core, elementwise  # noqa: F401
from fxlab.ir.kernels import conv, matmul, norm  # noqa: F401
from fxlab.ir.kernels import shape  # noqa: F401
from fxlab.ir.kernels import creation, reduction  # noqa: F401
from fxlab.ir.kernels import backward, batch_norm_training, complex_views, fft, foreach, loss, pointwise, rng, sampling  # noqa: F401
from fxlab.ir.kernels import hcom, npu_afd, npu_attention, npu_comm, npu_kv_cache  # noqa: F401 - torch_npu operators, by family
from fxlab.ir.kernels import npu_linear_attention, npu_mla, npu_rope, npu_sparse_attention  # noqa: F401
from fxlab.ir.kernels import npu_activation, npu_block_quant, npu_cast, npu_matmul, npu_moe, npu_norm, npu_quant, npu_scatter  # noqa: F401
from fxlab.ir.kernels import inplace  # noqa: F401 - keep last: registers ExpandDims only if no family did
from fxlab.ir.kernels import fallbacks  # noqa: F401 - keep last: registers shared types only if no family did
