"""The CPU reference math of torch_npu's quantisation operators against their formulas."""

from __future__ import annotations

import torch

from fxlab.ir.kernels import npu_mx_reference as mx
from fxlab.ir.kernels import npu_quant_reference as ref


def test_dynamic_quant_symmetric_per_token_and_per_tensor():
    x = torch.randn(3, 16)
    q, scale = ref.dynamic_quant(x)
    assert q.dtype == torch.int8 and q.abs().max() == 127
    torch.testing.assert_close(q.float() * scale.unsqueeze(-1), x, atol=scale.max().item(), rtol=0)
    _, tensor_scale = ref.dynamic_quant(x, quant_mode="pertensor")
    torch.testing.assert_close(tensor_scale, x.abs().max().reshape(1) / 127)


def test_dynamic_quant_groups_smoothing_rows_by_group_index():
    x, smooth = torch.randn(3, 4), torch.tensor([[1.0] * 4, [2.0] * 4])
    _, scale = ref.dynamic_quant(x, smooth_scales=smooth, group_index=torch.tensor([1, 3]))
    torch.testing.assert_close(scale, torch.stack([x[0].abs().max(), 2 * x[1].abs().max(), 2 * x[2].abs().max()]) / 127)


def test_int4_results_pack_eight_to_an_int32():
    values = torch.tensor([[1, -2, 3, -4, 5, -6, 7, -8]], dtype=torch.int8)
    packed = ref.pack_int4(values)
    assert packed.dtype == torch.int32 and packed.shape == (1, 1)
    assert ref.unpack_int4(packed).tolist() == values.tolist()


def test_asymmetric_quant_maps_the_row_range_onto_the_type_range():
    x = torch.tensor([[-1.0, 0.0, 3.0]])
    y, scale, offset = ref.dynamic_quant_asymmetric(x)
    torch.testing.assert_close(scale, torch.tensor([4.0 / 255]))
    assert y.tolist() == [[-128, -64, 127]] and offset.shape == (1,)


def test_quantize_div_mode_and_ascend_quant_rounding():
    x = torch.tensor([[0.5, 1.5, -2.5]])
    assert ref.quantize(x, torch.tensor([1.0]), None, 12, 0).tolist() == [[0, 2, -2]]  # half to even
    assert ref.quantize(x, torch.tensor([1.0, 1.0, 1.0]), None, 1, -1, div_mode=False).tolist() == [[1, 2, -3]]  # half away


def test_trans_quant_param_packs_scale_bits_and_offset():
    scale = torch.tensor([1.0])
    out = ref.trans_quant_param(scale, torch.tensor([-3.0]))
    bits = 0x3F800000
    assert out.item() == (bits & 0xFFFFE000) | (1 << 46) | ((-3 & 0x1FF) << 37)


def test_anti_quant_of_int4_words():
    words = ref.pack_int4(torch.tensor([[1, 2, 3, 4, 5, 6, 7, -8]], dtype=torch.int8))
    out = ref.anti_quant(words, torch.full((8,), 0.5), offset=torch.ones(8))
    torch.testing.assert_close(out, ((torch.tensor([[1.0, 2, 3, 4, 5, 6, 7, -8]]) + 1) * 0.5).half())


def test_mx_quantisation_scales_each_block_of_32():
    x = torch.zeros(1, 64)
    x[0, 0], x[0, 40] = 3.0, 0.75  # block 0: max 3 (exp 1), block 1: max 0.75 (exp -1)
    values, scales = mx.mx_quantize(x, 24)
    assert scales.tolist() == [[[127 + 1 - 8, 127 - 1 - 8]]]
    assert values.float()[0, 0].item() == 3.0 * 2**7 and values.float()[0, 40].item() == 0.75 * 2**9
    packed, fp4_scales = mx.mx_quantize(x, 296)
    # e2m1's largest exponent is 2: both blocks scale their maximum to 6.0, code 7, low nibble first
    assert fp4_scales.tolist() == [[[127 + 1 - 2, 127 - 1 - 2]]]
    assert packed.shape == (1, 32) and packed[0, 0].item() == 0x07 and packed[0, 20].item() == 0x07 and packed[0, 1].item() == 0
