"""The CPU reference math of torch_npu's block and MX quantisation operators."""

from __future__ import annotations

import pytest
import torch

from fxlab.ir.kernels import npu_block_quant_reference as ref
from fxlab.ir.kernels.npu_reference import CPU_KERNELS


def test_dynamic_block_quant_scales_each_block():
    x = torch.zeros(2, 256)
    x[0, 5], x[1, 200] = 448.0 * 3, -2.0
    values, scale = ref.dynamic_block_quant(x, dst_type=24)
    assert scale.shape == (2, 2)
    torch.testing.assert_close(scale, torch.tensor([[3.0, 0.0], [0.0, 2.0 / 448]]))
    assert values.float()[0, 5].item() == 448.0 and values.float()[1, 200].item() == -448.0


def test_mx_quant_along_the_first_axis_and_back():
    x = torch.randn(64, 3)
    values, scales = ref.dynamic_mx_quant(x, axis=0, dst_type=24)
    assert values.shape == (64, 3) and scales.shape == (1, 3, 2)
    restored = ref.anti_mx_quant(values, scales, axis=0, dst_type=6)
    # e4m3 keeps 3 mantissa bits, and a block maximum past 448 saturates (the OCP rule)
    torch.testing.assert_close(restored, x, rtol=0.13, atol=1e-3)


def test_undocumented_layouts_say_why_they_do_not_run():
    with pytest.raises(NotImplementedError, match="scale layout is not specified"):
        CPU_KERNELS["npu_grouped_dynamic_block_quant"](torch.zeros(2, 128), torch.tensor([2]))
    with pytest.raises(NotImplementedError, match="npu_rotate_quant has no CPU reference kernel: its transform"):
        CPU_KERNELS["npu_rotate_quant"](torch.zeros(2, 128), torch.eye(128))
