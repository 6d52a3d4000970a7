"""The registry of torch_npu operators' eager CPU kernels, which every family fills."""

from __future__ import annotations

import pytest
import torch

from fxlab.ir import kernels  # noqa: F401 - every family registers its kernels
from fxlab.ir.kernels import npu_reference as ref


def test_families_register_their_kernels_once_each_overload_by_its_own_key():
    from fxlab.ir.kernels import npu_grouped_matmul_reference, npu_norm_reference, npu_rope_reference

    assert ref.CPU_KERNELS["npu_rms_norm"] is npu_norm_reference.rms_norm
    assert ref.CPU_KERNELS["npu_rotary_mul"] is npu_rope_reference.rotary_mul
    gmm = npu_grouped_matmul_reference.grouped_matmul
    assert ref.CPU_KERNELS["npu_grouped_matmul"] is gmm and ref.CPU_KERNELS["npu_grouped_matmul.List"] is gmm
    with pytest.raises(ValueError, match="two CPU kernels registered for npu::npu_rms_norm"):
        ref.cpu_kernel("npu_rms_norm")(lambda *args: None)
    assert "npu_format_cast.Tensor" in ref.META_KERNELS


def test_an_operator_without_a_kernel_says_why():
    kernel = ref.CPU_KERNELS["npu_fused_causal_conv1d"]
    with pytest.raises(NotImplementedError, match="npu_fused_causal_conv1d has no CPU reference kernel: its tensor layouts"):
        kernel(torch.zeros(1))


def test_scalar_types_are_torchs_numbers():
    assert ref.SCALAR_TYPES == {1: torch.int8, 3: torch.int32, 5: torch.float16, 6: torch.float32, 15: torch.bfloat16}
