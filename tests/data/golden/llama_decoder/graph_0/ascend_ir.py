# -*- coding: utf-8 -*-
from torch import tensor
from torchair._ge_concrete_graph import ge_apis as ge
from torchair.ge._ge_graph import get_default_ge_graph

arg0_1_0 = ge.Data(index=0, dtype=9, shape=[1, 8], node_name="arg0_1")
arg1_1_0 = ge.Data(index=1, dtype=0, shape=[16, 16], node_name="arg1_1")
arg2_1_0 = ge.Data(index=2, dtype=0, shape=[16, 16], node_name="arg2_1")
arg3_1_0 = ge.Data(index=3, dtype=0, shape=[128, 64], node_name="arg3_1")
arg4_1_0 = ge.Data(index=4, dtype=0, shape=[64], node_name="arg4_1")
arg5_1_0 = ge.Data(index=5, dtype=0, shape=[64, 64], node_name="arg5_1")
arg6_1_0 = ge.Data(index=6, dtype=0, shape=[64, 64], node_name="arg6_1")
arg7_1_0 = ge.Data(index=7, dtype=0, shape=[64, 64], node_name="arg7_1")
arg8_1_0 = ge.Data(index=8, dtype=0, shape=[1, 4, 16, 16], node_name="arg8_1")
arg9_1_0 = ge.Data(index=9, dtype=0, shape=[1, 4, 16, 16], node_name="arg9_1")
arg10_1_0 = ge.Data(index=10, dtype=0, shape=[64, 64], node_name="arg10_1")
arg11_1_0 = ge.Data(index=11, dtype=0, shape=[64], node_name="arg11_1")
arg12_1_0 = ge.Data(index=12, dtype=0, shape=[128, 64], node_name="arg12_1")
arg13_1_0 = ge.Data(index=13, dtype=0, shape=[128, 64], node_name="arg13_1")
arg14_1_0 = ge.Data(index=14, dtype=0, shape=[64, 128], node_name="arg14_1")
arg15_1_0 = ge.Data(index=15, dtype=0, shape=[64], node_name="arg15_1")
arg16_1_0 = ge.Data(index=16, dtype=0, shape=[64, 64], node_name="arg16_1")
arg17_1_0 = ge.Data(index=17, dtype=0, shape=[64, 64], node_name="arg17_1")
arg18_1_0 = ge.Data(index=18, dtype=0, shape=[64, 64], node_name="arg18_1")
arg19_1_0 = ge.Data(index=19, dtype=0, shape=[1, 4, 16, 16], node_name="arg19_1")
arg20_1_0 = ge.Data(index=20, dtype=0, shape=[1, 4, 16, 16], node_name="arg20_1")
arg21_1_0 = ge.Data(index=21, dtype=0, shape=[64, 64], node_name="arg21_1")
arg22_1_0 = ge.Data(index=22, dtype=0, shape=[64], node_name="arg22_1")
arg23_1_0 = ge.Data(index=23, dtype=0, shape=[128, 64], node_name="arg23_1")
arg24_1_0 = ge.Data(index=24, dtype=0, shape=[128, 64], node_name="arg24_1")
arg25_1_0 = ge.Data(index=25, dtype=0, shape=[64, 128], node_name="arg25_1")
arg26_1_0 = ge.Data(index=26, dtype=0, shape=[64], node_name="arg26_1")
arg27_1_0 = ge.Data(index=27, dtype=0, shape=[128, 64], node_name="arg27_1")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 101, in forward    cos, sin = self.cos_table[:seq], self.sin_table[:seq]               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: slice_1: torch.float32[8, 16]cpu = torch.ops.aten.slice.Tensor(arg1_1: torch.float32[16, 16]cpu, 0, 0, 8)
StridedSliceV2_0 = ge.StridedSliceV2(arg1_1_0, ge.Const(0, dtype=9), ge.Const(8, dtype=9), ge.Const(0, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 101, in forward    cos, sin = self.cos_table[:seq], self.sin_table[:seq]                                     ^^^^^^^^^^^^^^^^^^^^
## FX Code: slice_2: torch.float32[8, 16]cpu = torch.ops.aten.slice.Tensor(arg2_1: torch.float32[16, 16]cpu, 0, 0, 8)
StridedSliceV2_1_0 = ge.StridedSliceV2(arg2_1_0, ge.Const(0, dtype=9), ge.Const(8, dtype=9), ge.Const(0, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2_1")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 102, in forward    h = self.embed(tokens)        ^^^^^^^^^^^^^^^^^^
## FX Code: embedding: torch.float32[1, 8, 64]cpu = torch.ops.aten.embedding.default(arg3_1: torch.float32[128, 64]cpu, arg0_1: torch.int64[1, 8]cpu)
GatherV2_0 = ge.GatherV2(arg3_1_0, arg0_1_0, ge.Const([0], dtype=9), batch_dims=0, is_preprocessed=False, negative_index_support=False, node_name="GatherV2")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 21, in forward    variance = x.pow(2).mean(-1, keepdim=True)               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: pow_1: torch.float32[1, 8, 64]cpu = torch.ops.aten.pow.Tensor_Scalar(embedding: torch.float32[1, 8, 64]cpu, 2)
Pow_0 = ge.Pow(GatherV2_0, ge.Const(2, dtype=0), node_name="Pow")
## FX Code: mean: torch.float32[1, 8, 1]cpu = torch.ops.aten.mean.dim(pow_1: torch.float32[1, 8, 64]cpu, [-1], True)
ReduceMean_0 = ge.ReduceMean(Pow_0, ge.Const([-1], dtype=9), keep_dims=True, noop_with_empty_axes=True, node_name="ReduceMean")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 22, in forward    return x * torch.rsqrt(variance + self.eps) * self.weight                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: add: torch.float32[1, 8, 1]cpu = torch.ops.aten.add.Tensor(mean: torch.float32[1, 8, 1]cpu, 1e-06)
Add_0 = ge.Add(ReduceMean_0, ge.Const(1e-06, dtype=0), node_name="Add")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 22, in forward    return x * torch.rsqrt(variance + self.eps) * self.weight               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: rsqrt: torch.float32[1, 8, 1]cpu = torch.ops.aten.rsqrt.default(add: torch.float32[1, 8, 1]cpu)
Rsqrt_0 = ge.Rsqrt(Add_0, node_name="Rsqrt")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 22, in forward    return x * torch.rsqrt(variance + self.eps) * self.weight           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mul: torch.float32[1, 8, 64]cpu = torch.ops.aten.mul.Tensor(embedding: torch.float32[1, 8, 64]cpu, rsqrt: torch.float32[1, 8, 1]cpu)
Mul_0 = ge.Mul(GatherV2_0, Rsqrt_0, node_name="Mul")
Cast_0 = ge.Cast(Mul_0, dst_type=0, node_name="Cast")
## FX Code: mul_1: torch.float32[1, 8, 64]cpu = torch.ops.aten.mul.Tensor(mul: torch.float32[1, 8, 64]cpu, arg4_1: torch.float32[64]cpu)
Mul_1_0 = ge.Mul(Cast_0, arg4_1_0, node_name="Mul_1")
Cast_1_0 = ge.Cast(Mul_1_0, dst_type=0, node_name="Cast_1")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 47, in forward    q = self.q_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mm: torch.float32[8, 64]cpu = torch.ops.aten.mm.default(reshape_default: torch.float32[8, 64]cpu, permute_default: torch.float32[64, 64]cpu)
Reshape_0 = ge.Reshape(Cast_1_0, ge.Const([8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape")
Transpose_0 = ge.Transpose(arg5_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose")
MatMul_0 = ge.MatMul(Reshape_0, Transpose_0, None, transpose_x1=False, transpose_x2=False, node_name="MatMul")
## FX Code: _unsafe_view: torch.float32[1, 8, 64]cpu = torch.ops.aten._unsafe_view.default(mm: torch.float32[8, 64]cpu, [1, 8, 64])
Reshape_1_0 = ge.Reshape(MatMul_0, ge.Const([1, 8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_1")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 48, in forward    k = self.k_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mm_1: torch.float32[8, 64]cpu = torch.ops.aten.mm.default(reshape_default_1: torch.float32[8, 64]cpu, permute_default_1: torch.float32[64, 64]cpu)
Reshape_2_0 = ge.Reshape(Cast_1_0, ge.Const([8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_2")
Transpose_1_0 = ge.Transpose(arg6_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose_1")
MatMul_1_0 = ge.MatMul(Reshape_2_0, Transpose_1_0, None, transpose_x1=False, transpose_x2=False, node_name="MatMul_1")
## FX Code: _unsafe_view_1: torch.float32[1, 8, 64]cpu = torch.ops.aten._unsafe_view.default(mm_1: torch.float32[8, 64]cpu, [1, 8, 64])
Reshape_3_0 = ge.Reshape(MatMul_1_0, ge.Const([1, 8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_3")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 49, in forward    v = self.v_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mm_2: torch.float32[8, 64]cpu = torch.ops.aten.mm.default(reshape_default_2: torch.float32[8, 64]cpu, permute_default_2: torch.float32[64, 64]cpu)
Reshape_4_0 = ge.Reshape(Cast_1_0, ge.Const([8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_4")
Transpose_2_0 = ge.Transpose(arg7_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose_2")
MatMul_2_0 = ge.MatMul(Reshape_4_0, Transpose_2_0, None, transpose_x1=False, transpose_x2=False, node_name="MatMul_2")
## FX Code: _unsafe_view_2: torch.float32[1, 8, 64]cpu = torch.ops.aten._unsafe_view.default(mm_2: torch.float32[8, 64]cpu, [1, 8, 64])
Reshape_5_0 = ge.Reshape(MatMul_2_0, ge.Const([1, 8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_5")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 31, in apply_rotary    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mul_2: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.mul.Tensor(reshape_default_4: torch.float32[1, 4, 8, 16]cpu, slice_1: torch.float32[8, 16]cpu)
Reshape_6_0 = ge.Reshape(Reshape_1_0, ge.Const([8, 4, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_6")
Transpose_3_0 = ge.Transpose(Reshape_6_0, ge.Const([1, 0, 2], dtype=9), node_name="Transpose_3")
Reshape_7_0 = ge.Reshape(Transpose_3_0, ge.Const([1, 4, 8, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_7")
Mul_2_0 = ge.Mul(Reshape_7_0, StridedSliceV2_0, node_name="Mul_2")
Cast_2_0 = ge.Cast(Mul_2_0, dst_type=0, node_name="Cast_2")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 26, in rotate_half    x1, x2 = x.chunk(2, dim=-1)             ^^^^^^^^^^^^^^^^^^
## FX Code: split = torch.ops.aten.split.Tensor(reshape_default_4: torch.float32[1, 4, 8, 16]cpu, 8, -1)
Pack_0 = ge.Pack(ge.Const(8, dtype=9), ge.Const(-1, dtype=9), axis=0, N=2, node_name="Pack")
Cast_3_0 = ge.Cast(Pack_0, dst_type=9, node_name="Cast_3")
SplitV_0, SplitV_1 = ge.SplitV(Reshape_7_0, Cast_3_0, ge.Const(-1, dtype=3), num_split=2, node_name="SplitV")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 27, in rotate_half    return torch.cat((-x2, x1), dim=-1)                      ^^^^^^^^^^^^^^^^^
## FX Code: neg: torch.float32[1, 4, 8, 8]cpu = torch.ops.aten.neg.default(getitem_1: torch.float32[1, 4, 8, 8]cpu)
Neg_0 = ge.Neg(SplitV_1, node_name="Neg")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 27, in rotate_half    return torch.cat((-x2, x1), dim=-1)           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: cat: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.cat.default([neg, getitem], -1)
ConcatV2_0 = ge.ConcatV2(Neg_0, SplitV_0, ge.Const(-1, dtype=9), N=2, node_name="ConcatV2")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 31, in apply_rotary    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin                     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mul_3: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.mul.Tensor(cat: torch.float32[1, 4, 8, 16]cpu, slice_2: torch.float32[8, 16]cpu)
Mul_3_0 = ge.Mul(ConcatV2_0, StridedSliceV2_1_0, node_name="Mul_3")
Cast_4_0 = ge.Cast(Mul_3_0, dst_type=0, node_name="Cast_4")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 31, in apply_rotary    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: add_1: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.add.Tensor(mul_2: torch.float32[1, 4, 8, 16]cpu, mul_3: torch.float32[1, 4, 8, 16]cpu)
Add_1_0 = ge.Add(Cast_2_0, Cast_4_0, node_name="Add_1")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 31, in apply_rotary    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin                                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mul_4: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.mul.Tensor(reshape_default_6: torch.float32[1, 4, 8, 16]cpu, slice_1: torch.float32[8, 16]cpu)
Reshape_8_0 = ge.Reshape(Reshape_3_0, ge.Const([8, 4, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_8")
Transpose_4_0 = ge.Transpose(Reshape_8_0, ge.Const([1, 0, 2], dtype=9), node_name="Transpose_4")
Reshape_9_0 = ge.Reshape(Transpose_4_0, ge.Const([1, 4, 8, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_9")
Mul_4_0 = ge.Mul(Reshape_9_0, StridedSliceV2_0, node_name="Mul_4")
Cast_5_0 = ge.Cast(Mul_4_0, dst_type=0, node_name="Cast_5")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 26, in rotate_half    x1, x2 = x.chunk(2, dim=-1)             ^^^^^^^^^^^^^^^^^^
## FX Code: split_1 = torch.ops.aten.split.Tensor(reshape_default_6: torch.float32[1, 4, 8, 16]cpu, 8, -1)
Pack_1_0 = ge.Pack(ge.Const(8, dtype=9), ge.Const(-1, dtype=9), axis=0, N=2, node_name="Pack_1")
Cast_6_0 = ge.Cast(Pack_1_0, dst_type=9, node_name="Cast_6")
SplitV_1_0, SplitV_1_1 = ge.SplitV(Reshape_9_0, Cast_6_0, ge.Const(-1, dtype=3), num_split=2, node_name="SplitV_1")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 27, in rotate_half    return torch.cat((-x2, x1), dim=-1)                      ^^^^^^^^^^^^^^^^^
## FX Code: neg_1: torch.float32[1, 4, 8, 8]cpu = torch.ops.aten.neg.default(getitem_3: torch.float32[1, 4, 8, 8]cpu)
Neg_1_0 = ge.Neg(SplitV_1_1, node_name="Neg_1")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 27, in rotate_half    return torch.cat((-x2, x1), dim=-1)           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: cat_1: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.cat.default([neg_1, getitem_2], -1)
ConcatV2_1_0 = ge.ConcatV2(Neg_1_0, SplitV_1_0, ge.Const(-1, dtype=9), N=2, node_name="ConcatV2_1")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 31, in apply_rotary    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin                                                     ^^^^^^^^^^^^^^^^^^^^
## FX Code: mul_5: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.mul.Tensor(cat_1: torch.float32[1, 4, 8, 16]cpu, slice_2: torch.float32[8, 16]cpu)
Mul_5_0 = ge.Mul(ConcatV2_1_0, StridedSliceV2_1_0, node_name="Mul_5")
Cast_7_0 = ge.Cast(Mul_5_0, dst_type=0, node_name="Cast_7")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 31, in apply_rotary    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin                                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: add_2: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.add.Tensor(mul_4: torch.float32[1, 4, 8, 16]cpu, mul_5: torch.float32[1, 4, 8, 16]cpu)
Add_2_0 = ge.Add(Cast_5_0, Cast_7_0, node_name="Add_2")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 51, in forward    self.k_cache[:, :, :seq] = k  # KV cache written in place
## FX Code: slice_3: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.slice.Tensor(arg8_1: torch.float32[1, 4, 16, 16]cpu, 2, 0, 8)
StridedSliceV2_2_0 = ge.StridedSliceV2(arg8_1_0, ge.Const(0, dtype=9), ge.Const(8, dtype=9), ge.Const(2, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2_2")
## FX Code: slice_scatter: torch.float32[1, 4, 16, 16]cpu = torch.ops.aten.slice_scatter.default(arg8_1: torch.float32[1, 4, 16, 16]cpu, copy: torch.float32[1, 4, 8, 16]cpu, 2, 0, 8)
StridedSliceV2_3_0 = ge.StridedSliceV2(arg8_1_0, ge.Const(0, dtype=9), ge.Const(0, dtype=9), ge.Const(2, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2_3")
StridedSliceV2_4_0 = ge.StridedSliceV2(arg8_1_0, ge.Const(8, dtype=9), ge.Const(2147483647, dtype=9), ge.Const(2, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2_4")
ConcatV2_2_0 = ge.ConcatV2(StridedSliceV2_3_0, Add_2_0, StridedSliceV2_4_0, ge.Const(2, dtype=9), N=3, node_name="ConcatV2_2")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 52, in forward    self.v_cache[:, :, :seq] = v
## FX Code: slice_5: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.slice.Tensor(arg9_1: torch.float32[1, 4, 16, 16]cpu, 2, 0, 8)
StridedSliceV2_5_0 = ge.StridedSliceV2(arg9_1_0, ge.Const(0, dtype=9), ge.Const(8, dtype=9), ge.Const(2, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2_5")
## FX Code: copy_1: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.copy.default(slice_5: torch.float32[1, 4, 8, 16]cpu, reshape_default_8: torch.float32[1, 4, 8, 16]cpu)
Reshape_10_0 = ge.Reshape(Reshape_5_0, ge.Const([8, 4, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_10")
Transpose_5_0 = ge.Transpose(Reshape_10_0, ge.Const([1, 0, 2], dtype=9), node_name="Transpose_5")
Reshape_11_0 = ge.Reshape(Transpose_5_0, ge.Const([1, 4, 8, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_11")
## FX Code: slice_scatter_1: torch.float32[1, 4, 16, 16]cpu = torch.ops.aten.slice_scatter.default(arg9_1: torch.float32[1, 4, 16, 16]cpu, copy_1: torch.float32[1, 4, 8, 16]cpu, 2, 0, 8)
StridedSliceV2_6_0 = ge.StridedSliceV2(arg9_1_0, ge.Const(0, dtype=9), ge.Const(0, dtype=9), ge.Const(2, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2_6")
StridedSliceV2_7_0 = ge.StridedSliceV2(arg9_1_0, ge.Const(8, dtype=9), ge.Const(2147483647, dtype=9), ge.Const(2, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2_7")
ConcatV2_3_0 = ge.ConcatV2(StridedSliceV2_6_0, Reshape_11_0, StridedSliceV2_7_0, ge.Const(2, dtype=9), N=3, node_name="ConcatV2_3")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 54, in forward    scores = torch.matmul(q, keys.transpose(2, 3)) / (self.head_dim**0.5)             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: slice_12: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.slice.Tensor(slice_scatter: torch.float32[1, 4, 16, 16]cpu, 2, 0, 8)
StridedSliceV2_8_0 = ge.StridedSliceV2(ConcatV2_2_0, ge.Const(0, dtype=9), ge.Const(8, dtype=9), ge.Const(2, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2_8")
## FX Code: expand_3: torch.float32[1, 4, 16, 8]cpu = torch.ops.aten.expand.default(reshape_default_10: torch.float32[1, 4, 16, 8]cpu, [1, 4, 16, 8])
Reshape_12_0 = ge.Reshape(StridedSliceV2_8_0, ge.Const([4, 8, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_12")
Transpose_6_0 = ge.Transpose(Reshape_12_0, ge.Const([0, 2, 1], dtype=9), node_name="Transpose_6")
Reshape_13_0 = ge.Reshape(Transpose_6_0, ge.Const([1, 4, 16, 8], dtype=9), axis=0, num_axes=-1, node_name="Reshape_13")
## FX Code: bmm: torch.float32[4, 8, 8]cpu = torch.ops.aten.bmm.default(reshape_default_11: torch.float32[4, 8, 16]cpu, reshape_default_12: torch.float32[4, 16, 8]cpu)
Reshape_14_0 = ge.Reshape(Add_1_0, ge.Const([4, 8, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_14")
Reshape_15_0 = ge.Reshape(Reshape_13_0, ge.Const([4, 16, 8], dtype=9), axis=0, num_axes=-1, node_name="Reshape_15")
BatchMatMul_0 = ge.BatchMatMul(Reshape_14_0, Reshape_15_0, adj_x1=False, adj_x2=False, node_name="BatchMatMul")
## FX Code: div: torch.float32[1, 4, 8, 8]cpu = torch.ops.aten.div.Tensor(reshape_default_13: torch.float32[1, 4, 8, 8]cpu, 4.0)
Reshape_16_0 = ge.Reshape(BatchMatMul_0, ge.Const([1, 4, 8, 8], dtype=9), axis=0, num_axes=-1, node_name="Reshape_16")
RealDiv_0 = ge.RealDiv(Reshape_16_0, ge.Const(4.0, dtype=0), node_name="RealDiv")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 55, in forward    scores = scores + torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)                                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: full: torch.float32[8, 8]cpu = torch.ops.aten.full.default([8, 8], -inf, device=cpu, pin_memory=False)
Fill_0 = ge.Fill(ge.Const([8, 8], dtype=9), ge.Const(float("-inf"), dtype=0), node_name="Fill")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 55, in forward    scores = scores + torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)                      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: triu: torch.float32[8, 8]cpu = torch.ops.aten.triu.default(full: torch.float32[8, 8]cpu, 1)
Triu_0 = ge.Triu(Fill_0, diagonal=1, node_name="Triu")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 55, in forward    scores = scores + torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: add_3: torch.float32[1, 4, 8, 8]cpu = torch.ops.aten.add.Tensor(div: torch.float32[1, 4, 8, 8]cpu, triu: torch.float32[8, 8]cpu)
Add_3_0 = ge.Add(RealDiv_0, Triu_0, node_name="Add_3")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 56, in forward    attn = torch.softmax(scores.float(), dim=-1).type_as(q)           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: _softmax: torch.float32[1, 4, 8, 8]cpu = torch.ops.aten._softmax.default(add_3: torch.float32[1, 4, 8, 8]cpu, -1, False)
SoftmaxV2_0 = ge.SoftmaxV2(Add_3_0, axes=[-1], half_to_float=False, node_name="SoftmaxV2")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 57, in forward    out = torch.matmul(attn, values).transpose(1, 2).reshape(batch, seq, dim)          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: slice_15: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.slice.Tensor(slice_scatter_1: torch.float32[1, 4, 16, 16]cpu, 2, 0, 8)
StridedSliceV2_9_0 = ge.StridedSliceV2(ConcatV2_3_0, ge.Const(0, dtype=9), ge.Const(8, dtype=9), ge.Const(2, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2_9")
## FX Code: bmm_1: torch.float32[4, 8, 16]cpu = torch.ops.aten.bmm.default(reshape_default_14: torch.float32[4, 8, 8]cpu, reshape_default_15: torch.float32[4, 8, 16]cpu)
Reshape_17_0 = ge.Reshape(SoftmaxV2_0, ge.Const([4, 8, 8], dtype=9), axis=0, num_axes=-1, node_name="Reshape_17")
Reshape_18_0 = ge.Reshape(StridedSliceV2_9_0, ge.Const([4, 8, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_18")
BatchMatMul_1_0 = ge.BatchMatMul(Reshape_17_0, Reshape_18_0, adj_x1=False, adj_x2=False, node_name="BatchMatMul_1")
## FX Code: clone: torch.float32[1, 8, 4, 16]cpu = torch.ops.aten.clone.default(reshape_default_16: torch.float32[1, 8, 4, 16]cpu, memory_format=torch.contiguous_format)
Transpose_7_0 = ge.Transpose(BatchMatMul_1_0, ge.Const([1, 0, 2], dtype=9), node_name="Transpose_7")
Reshape_19_0 = ge.Reshape(Transpose_7_0, ge.Const([1, 8, 4, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_19")
Identity_0 = ge.Identity(Reshape_19_0, node_name="Identity")
## FX Code: _unsafe_view_3: torch.float32[1, 8, 64]cpu = torch.ops.aten._unsafe_view.default(clone: torch.float32[1, 8, 4, 16]cpu, [1, 8, 64])
Reshape_20_0 = ge.Reshape(Identity_0, ge.Const([1, 8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_20")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 58, in forward    return self.o_proj(out)           ^^^^^^^^^^^^^^^^
## FX Code: mm_3: torch.float32[8, 64]cpu = torch.ops.aten.mm.default(reshape_default_17: torch.float32[8, 64]cpu, permute_default_8: torch.float32[64, 64]cpu)
Reshape_21_0 = ge.Reshape(Reshape_20_0, ge.Const([8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_21")
Transpose_8_0 = ge.Transpose(arg10_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose_8")
MatMul_3_0 = ge.MatMul(Reshape_21_0, Transpose_8_0, None, transpose_x1=False, transpose_x2=False, node_name="MatMul_3")
## FX Code: _unsafe_view_4: torch.float32[1, 8, 64]cpu = torch.ops.aten._unsafe_view.default(mm_3: torch.float32[8, 64]cpu, [1, 8, 64])
Reshape_22_0 = ge.Reshape(MatMul_3_0, ge.Const([1, 8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_22")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 81, in forward    x = x + self.attn(self.input_norm(x), cos, sin)        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: add_4: torch.float32[1, 8, 64]cpu = torch.ops.aten.add.Tensor(embedding: torch.float32[1, 8, 64]cpu, _unsafe_view_4: torch.float32[1, 8, 64]cpu)
Add_4_0 = ge.Add(GatherV2_0, Reshape_22_0, node_name="Add_4")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 21, in forward    variance = x.pow(2).mean(-1, keepdim=True)               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: pow_2: torch.float32[1, 8, 64]cpu = torch.ops.aten.pow.Tensor_Scalar(add_4: torch.float32[1, 8, 64]cpu, 2)
Pow_1_0 = ge.Pow(Add_4_0, ge.Const(2, dtype=0), node_name="Pow_1")
## FX Code: mean_1: torch.float32[1, 8, 1]cpu = torch.ops.aten.mean.dim(pow_2: torch.float32[1, 8, 64]cpu, [-1], True)
ReduceMean_1_0 = ge.ReduceMean(Pow_1_0, ge.Const([-1], dtype=9), keep_dims=True, noop_with_empty_axes=True, node_name="ReduceMean_1")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 22, in forward    return x * torch.rsqrt(variance + self.eps) * self.weight                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: add_5: torch.float32[1, 8, 1]cpu = torch.ops.aten.add.Tensor(mean_1: torch.float32[1, 8, 1]cpu, 1e-06)
Add_5_0 = ge.Add(ReduceMean_1_0, ge.Const(1e-06, dtype=0), node_name="Add_5")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 22, in forward    return x * torch.rsqrt(variance + self.eps) * self.weight               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: rsqrt_1: torch.float32[1, 8, 1]cpu = torch.ops.aten.rsqrt.default(add_5: torch.float32[1, 8, 1]cpu)
Rsqrt_1_0 = ge.Rsqrt(Add_5_0, node_name="Rsqrt_1")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 22, in forward    return x * torch.rsqrt(variance + self.eps) * self.weight           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mul_6: torch.float32[1, 8, 64]cpu = torch.ops.aten.mul.Tensor(add_4: torch.float32[1, 8, 64]cpu, rsqrt_1: torch.float32[1, 8, 1]cpu)
Mul_6_0 = ge.Mul(Add_4_0, Rsqrt_1_0, node_name="Mul_6")
Cast_8_0 = ge.Cast(Mul_6_0, dst_type=0, node_name="Cast_8")
## FX Code: mul_7: torch.float32[1, 8, 64]cpu = torch.ops.aten.mul.Tensor(mul_6: torch.float32[1, 8, 64]cpu, arg11_1: torch.float32[64]cpu)
Mul_7_0 = ge.Mul(Cast_8_0, arg11_1_0, node_name="Mul_7")
Cast_9_0 = ge.Cast(Mul_7_0, dst_type=0, node_name="Cast_9")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 69, in forward    return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))                                             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mm_4: torch.float32[8, 128]cpu = torch.ops.aten.mm.default(reshape_default_18: torch.float32[8, 64]cpu, permute_default_9: torch.float32[64, 128]cpu)
Reshape_23_0 = ge.Reshape(Cast_9_0, ge.Const([8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_23")
Transpose_9_0 = ge.Transpose(arg12_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose_9")
MatMul_4_0 = ge.MatMul(Reshape_23_0, Transpose_9_0, None, transpose_x1=False, transpose_x2=False, node_name="MatMul_4")
## FX Code: _unsafe_view_5: torch.float32[1, 8, 128]cpu = torch.ops.aten._unsafe_view.default(mm_4: torch.float32[8, 128]cpu, [1, 8, 128])
Reshape_24_0 = ge.Reshape(MatMul_4_0, ge.Const([1, 8, 128], dtype=9), axis=0, num_axes=-1, node_name="Reshape_24")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 69, in forward    return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))                          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: silu: torch.float32[1, 8, 128]cpu = torch.ops.aten.silu.default(_unsafe_view_5: torch.float32[1, 8, 128]cpu)
Swish_0 = ge.Swish(Reshape_24_0, scale=1.0, node_name="Swish")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 69, in forward    return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))                                                                  ^^^^^^^^^^^^^^^^
## FX Code: mm_5: torch.float32[8, 128]cpu = torch.ops.aten.mm.default(reshape_default_19: torch.float32[8, 64]cpu, permute_default_10: torch.float32[64, 128]cpu)
Reshape_25_0 = ge.Reshape(Cast_9_0, ge.Const([8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_25")
Transpose_10_0 = ge.Transpose(arg13_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose_10")
MatMul_5_0 = ge.MatMul(Reshape_25_0, Transpose_10_0, None, transpose_x1=False, transpose_x2=False, node_name="MatMul_5")
## FX Code: _unsafe_view_6: torch.float32[1, 8, 128]cpu = torch.ops.aten._unsafe_view.default(mm_5: torch.float32[8, 128]cpu, [1, 8, 128])
Reshape_26_0 = ge.Reshape(MatMul_5_0, ge.Const([1, 8, 128], dtype=9), axis=0, num_axes=-1, node_name="Reshape_26")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 69, in forward    return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))                          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mul_8: torch.float32[1, 8, 128]cpu = torch.ops.aten.mul.Tensor(silu: torch.float32[1, 8, 128]cpu, _unsafe_view_6: torch.float32[1, 8, 128]cpu)
Mul_8_0 = ge.Mul(Swish_0, Reshape_26_0, node_name="Mul_8")
Cast_10_0 = ge.Cast(Mul_8_0, dst_type=0, node_name="Cast_10")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 69, in forward    return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mm_6: torch.float32[8, 64]cpu = torch.ops.aten.mm.default(reshape_default_20: torch.float32[8, 128]cpu, permute_default_11: torch.float32[128, 64]cpu)
Reshape_27_0 = ge.Reshape(Cast_10_0, ge.Const([8, 128], dtype=9), axis=0, num_axes=-1, node_name="Reshape_27")
Transpose_11_0 = ge.Transpose(arg14_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose_11")
MatMul_6_0 = ge.MatMul(Reshape_27_0, Transpose_11_0, None, transpose_x1=False, transpose_x2=False, node_name="MatMul_6")
## FX Code: _unsafe_view_7: torch.float32[1, 8, 64]cpu = torch.ops.aten._unsafe_view.default(mm_6: torch.float32[8, 64]cpu, [1, 8, 64])
Reshape_28_0 = ge.Reshape(MatMul_6_0, ge.Const([1, 8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_28")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 82, in forward    return x + self.mlp(self.post_norm(x))           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: add_6: torch.float32[1, 8, 64]cpu = torch.ops.aten.add.Tensor(add_4: torch.float32[1, 8, 64]cpu, _unsafe_view_7: torch.float32[1, 8, 64]cpu)
Add_6_0 = ge.Add(Add_4_0, Reshape_28_0, node_name="Add_6")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 21, in forward    variance = x.pow(2).mean(-1, keepdim=True)               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: pow_3: torch.float32[1, 8, 64]cpu = torch.ops.aten.pow.Tensor_Scalar(add_6: torch.float32[1, 8, 64]cpu, 2)
Pow_2_0 = ge.Pow(Add_6_0, ge.Const(2, dtype=0), node_name="Pow_2")
## FX Code: mean_2: torch.float32[1, 8, 1]cpu = torch.ops.aten.mean.dim(pow_3: torch.float32[1, 8, 64]cpu, [-1], True)
ReduceMean_2_0 = ge.ReduceMean(Pow_2_0, ge.Const([-1], dtype=9), keep_dims=True, noop_with_empty_axes=True, node_name="ReduceMean_2")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 22, in forward    return x * torch.rsqrt(variance + self.eps) * self.weight                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: add_7: torch.float32[1, 8, 1]cpu = torch.ops.aten.add.Tensor(mean_2: torch.float32[1, 8, 1]cpu, 1e-06)
Add_7_0 = ge.Add(ReduceMean_2_0, ge.Const(1e-06, dtype=0), node_name="Add_7")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 22, in forward    return x * torch.rsqrt(variance + self.eps) * self.weight               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: rsqrt_2: torch.float32[1, 8, 1]cpu = torch.ops.aten.rsqrt.default(add_7: torch.float32[1, 8, 1]cpu)
Rsqrt_2_0 = ge.Rsqrt(Add_7_0, node_name="Rsqrt_2")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 22, in forward    return x * torch.rsqrt(variance + self.eps) * self.weight           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mul_9: torch.float32[1, 8, 64]cpu = torch.ops.aten.mul.Tensor(add_6: torch.float32[1, 8, 64]cpu, rsqrt_2: torch.float32[1, 8, 1]cpu)
Mul_9_0 = ge.Mul(Add_6_0, Rsqrt_2_0, node_name="Mul_9")
Cast_11_0 = ge.Cast(Mul_9_0, dst_type=0, node_name="Cast_11")
## FX Code: mul_10: torch.float32[1, 8, 64]cpu = torch.ops.aten.mul.Tensor(mul_9: torch.float32[1, 8, 64]cpu, arg15_1: torch.float32[64]cpu)
Mul_10_0 = ge.Mul(Cast_11_0, arg15_1_0, node_name="Mul_10")
Cast_12_0 = ge.Cast(Mul_10_0, dst_type=0, node_name="Cast_12")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 47, in forward    q = self.q_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mm_7: torch.float32[8, 64]cpu = torch.ops.aten.mm.default(reshape_default_21: torch.float32[8, 64]cpu, permute_default_12: torch.float32[64, 64]cpu)
Reshape_29_0 = ge.Reshape(Cast_12_0, ge.Const([8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_29")
Transpose_12_0 = ge.Transpose(arg16_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose_12")
MatMul_7_0 = ge.MatMul(Reshape_29_0, Transpose_12_0, None, transpose_x1=False, transpose_x2=False, node_name="MatMul_7")
## FX Code: _unsafe_view_8: torch.float32[1, 8, 64]cpu = torch.ops.aten._unsafe_view.default(mm_7: torch.float32[8, 64]cpu, [1, 8, 64])
Reshape_30_0 = ge.Reshape(MatMul_7_0, ge.Const([1, 8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_30")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 48, in forward    k = self.k_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mm_8: torch.float32[8, 64]cpu = torch.ops.aten.mm.default(reshape_default_22: torch.float32[8, 64]cpu, permute_default_13: torch.float32[64, 64]cpu)
Reshape_31_0 = ge.Reshape(Cast_12_0, ge.Const([8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_31")
Transpose_13_0 = ge.Transpose(arg17_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose_13")
MatMul_8_0 = ge.MatMul(Reshape_31_0, Transpose_13_0, None, transpose_x1=False, transpose_x2=False, node_name="MatMul_8")
## FX Code: _unsafe_view_9: torch.float32[1, 8, 64]cpu = torch.ops.aten._unsafe_view.default(mm_8: torch.float32[8, 64]cpu, [1, 8, 64])
Reshape_32_0 = ge.Reshape(MatMul_8_0, ge.Const([1, 8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_32")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 49, in forward    v = self.v_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mm_9: torch.float32[8, 64]cpu = torch.ops.aten.mm.default(reshape_default_23: torch.float32[8, 64]cpu, permute_default_14: torch.float32[64, 64]cpu)
Reshape_33_0 = ge.Reshape(Cast_12_0, ge.Const([8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_33")
Transpose_14_0 = ge.Transpose(arg18_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose_14")
MatMul_9_0 = ge.MatMul(Reshape_33_0, Transpose_14_0, None, transpose_x1=False, transpose_x2=False, node_name="MatMul_9")
## FX Code: _unsafe_view_10: torch.float32[1, 8, 64]cpu = torch.ops.aten._unsafe_view.default(mm_9: torch.float32[8, 64]cpu, [1, 8, 64])
Reshape_34_0 = ge.Reshape(MatMul_9_0, ge.Const([1, 8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_34")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 31, in apply_rotary    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mul_11: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.mul.Tensor(reshape_default_25: torch.float32[1, 4, 8, 16]cpu, slice_1: torch.float32[8, 16]cpu)
Reshape_35_0 = ge.Reshape(Reshape_30_0, ge.Const([8, 4, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_35")
Transpose_15_0 = ge.Transpose(Reshape_35_0, ge.Const([1, 0, 2], dtype=9), node_name="Transpose_15")
Reshape_36_0 = ge.Reshape(Transpose_15_0, ge.Const([1, 4, 8, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_36")
Mul_11_0 = ge.Mul(Reshape_36_0, StridedSliceV2_0, node_name="Mul_11")
Cast_13_0 = ge.Cast(Mul_11_0, dst_type=0, node_name="Cast_13")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 26, in rotate_half    x1, x2 = x.chunk(2, dim=-1)             ^^^^^^^^^^^^^^^^^^
## FX Code: split_2 = torch.ops.aten.split.Tensor(reshape_default_25: torch.float32[1, 4, 8, 16]cpu, 8, -1)
Pack_2_0 = ge.Pack(ge.Const(8, dtype=9), ge.Const(-1, dtype=9), axis=0, N=2, node_name="Pack_2")
Cast_14_0 = ge.Cast(Pack_2_0, dst_type=9, node_name="Cast_14")
SplitV_2_0, SplitV_2_1 = ge.SplitV(Reshape_36_0, Cast_14_0, ge.Const(-1, dtype=3), num_split=2, node_name="SplitV_2")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 27, in rotate_half    return torch.cat((-x2, x1), dim=-1)                      ^^^^^^^^^^^^^^^^^
## FX Code: neg_2: torch.float32[1, 4, 8, 8]cpu = torch.ops.aten.neg.default(getitem_5: torch.float32[1, 4, 8, 8]cpu)
Neg_2_0 = ge.Neg(SplitV_2_1, node_name="Neg_2")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 27, in rotate_half    return torch.cat((-x2, x1), dim=-1)           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: cat_2: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.cat.default([neg_2, getitem_4], -1)
ConcatV2_4_0 = ge.ConcatV2(Neg_2_0, SplitV_2_0, ge.Const(-1, dtype=9), N=2, node_name="ConcatV2_4")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 31, in apply_rotary    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin                     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mul_12: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.mul.Tensor(cat_2: torch.float32[1, 4, 8, 16]cpu, slice_2: torch.float32[8, 16]cpu)
Mul_12_0 = ge.Mul(ConcatV2_4_0, StridedSliceV2_1_0, node_name="Mul_12")
Cast_15_0 = ge.Cast(Mul_12_0, dst_type=0, node_name="Cast_15")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 31, in apply_rotary    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: add_8: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.add.Tensor(mul_11: torch.float32[1, 4, 8, 16]cpu, mul_12: torch.float32[1, 4, 8, 16]cpu)
Add_8_0 = ge.Add(Cast_13_0, Cast_15_0, node_name="Add_8")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 31, in apply_rotary    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin                                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mul_13: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.mul.Tensor(reshape_default_27: torch.float32[1, 4, 8, 16]cpu, slice_1: torch.float32[8, 16]cpu)
Reshape_37_0 = ge.Reshape(Reshape_32_0, ge.Const([8, 4, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_37")
Transpose_16_0 = ge.Transpose(Reshape_37_0, ge.Const([1, 0, 2], dtype=9), node_name="Transpose_16")
Reshape_38_0 = ge.Reshape(Transpose_16_0, ge.Const([1, 4, 8, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_38")
Mul_13_0 = ge.Mul(Reshape_38_0, StridedSliceV2_0, node_name="Mul_13")
Cast_16_0 = ge.Cast(Mul_13_0, dst_type=0, node_name="Cast_16")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 26, in rotate_half    x1, x2 = x.chunk(2, dim=-1)             ^^^^^^^^^^^^^^^^^^
## FX Code: split_3 = torch.ops.aten.split.Tensor(reshape_default_27: torch.float32[1, 4, 8, 16]cpu, 8, -1)
Pack_3_0 = ge.Pack(ge.Const(8, dtype=9), ge.Const(-1, dtype=9), axis=0, N=2, node_name="Pack_3")
Cast_17_0 = ge.Cast(Pack_3_0, dst_type=9, node_name="Cast_17")
SplitV_3_0, SplitV_3_1 = ge.SplitV(Reshape_38_0, Cast_17_0, ge.Const(-1, dtype=3), num_split=2, node_name="SplitV_3")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 27, in rotate_half    return torch.cat((-x2, x1), dim=-1)                      ^^^^^^^^^^^^^^^^^
## FX Code: neg_3: torch.float32[1, 4, 8, 8]cpu = torch.ops.aten.neg.default(getitem_7: torch.float32[1, 4, 8, 8]cpu)
Neg_3_0 = ge.Neg(SplitV_3_1, node_name="Neg_3")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 27, in rotate_half    return torch.cat((-x2, x1), dim=-1)           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: cat_3: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.cat.default([neg_3, getitem_6], -1)
ConcatV2_5_0 = ge.ConcatV2(Neg_3_0, SplitV_3_0, ge.Const(-1, dtype=9), N=2, node_name="ConcatV2_5")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 31, in apply_rotary    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin                                                     ^^^^^^^^^^^^^^^^^^^^
## FX Code: mul_14: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.mul.Tensor(cat_3: torch.float32[1, 4, 8, 16]cpu, slice_2: torch.float32[8, 16]cpu)
Mul_14_0 = ge.Mul(ConcatV2_5_0, StridedSliceV2_1_0, node_name="Mul_14")
Cast_18_0 = ge.Cast(Mul_14_0, dst_type=0, node_name="Cast_18")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 31, in apply_rotary    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin                                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: add_9: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.add.Tensor(mul_13: torch.float32[1, 4, 8, 16]cpu, mul_14: torch.float32[1, 4, 8, 16]cpu)
Add_9_0 = ge.Add(Cast_16_0, Cast_18_0, node_name="Add_9")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 51, in forward    self.k_cache[:, :, :seq] = k  # KV cache written in place
## FX Code: slice_16: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.slice.Tensor(arg19_1: torch.float32[1, 4, 16, 16]cpu, 2, 0, 8)
StridedSliceV2_10_0 = ge.StridedSliceV2(arg19_1_0, ge.Const(0, dtype=9), ge.Const(8, dtype=9), ge.Const(2, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2_10")
## FX Code: slice_scatter_2: torch.float32[1, 4, 16, 16]cpu = torch.ops.aten.slice_scatter.default(arg19_1: torch.float32[1, 4, 16, 16]cpu, copy_2: torch.float32[1, 4, 8, 16]cpu, 2, 0, 8)
StridedSliceV2_11_0 = ge.StridedSliceV2(arg19_1_0, ge.Const(0, dtype=9), ge.Const(0, dtype=9), ge.Const(2, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2_11")
StridedSliceV2_12_0 = ge.StridedSliceV2(arg19_1_0, ge.Const(8, dtype=9), ge.Const(2147483647, dtype=9), ge.Const(2, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2_12")
ConcatV2_6_0 = ge.ConcatV2(StridedSliceV2_11_0, Add_9_0, StridedSliceV2_12_0, ge.Const(2, dtype=9), N=3, node_name="ConcatV2_6")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 52, in forward    self.v_cache[:, :, :seq] = v
## FX Code: slice_18: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.slice.Tensor(arg20_1: torch.float32[1, 4, 16, 16]cpu, 2, 0, 8)
StridedSliceV2_13_0 = ge.StridedSliceV2(arg20_1_0, ge.Const(0, dtype=9), ge.Const(8, dtype=9), ge.Const(2, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2_13")
## FX Code: copy_3: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.copy.default(slice_18: torch.float32[1, 4, 8, 16]cpu, reshape_default_29: torch.float32[1, 4, 8, 16]cpu)
Reshape_39_0 = ge.Reshape(Reshape_34_0, ge.Const([8, 4, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_39")
Transpose_17_0 = ge.Transpose(Reshape_39_0, ge.Const([1, 0, 2], dtype=9), node_name="Transpose_17")
Reshape_40_0 = ge.Reshape(Transpose_17_0, ge.Const([1, 4, 8, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_40")
## FX Code: slice_scatter_3: torch.float32[1, 4, 16, 16]cpu = torch.ops.aten.slice_scatter.default(arg20_1: torch.float32[1, 4, 16, 16]cpu, copy_3: torch.float32[1, 4, 8, 16]cpu, 2, 0, 8)
StridedSliceV2_14_0 = ge.StridedSliceV2(arg20_1_0, ge.Const(0, dtype=9), ge.Const(0, dtype=9), ge.Const(2, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2_14")
StridedSliceV2_15_0 = ge.StridedSliceV2(arg20_1_0, ge.Const(8, dtype=9), ge.Const(2147483647, dtype=9), ge.Const(2, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2_15")
ConcatV2_7_0 = ge.ConcatV2(StridedSliceV2_14_0, Reshape_40_0, StridedSliceV2_15_0, ge.Const(2, dtype=9), N=3, node_name="ConcatV2_7")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 54, in forward    scores = torch.matmul(q, keys.transpose(2, 3)) / (self.head_dim**0.5)             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: slice_25: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.slice.Tensor(slice_scatter_2: torch.float32[1, 4, 16, 16]cpu, 2, 0, 8)
StridedSliceV2_16_0 = ge.StridedSliceV2(ConcatV2_6_0, ge.Const(0, dtype=9), ge.Const(8, dtype=9), ge.Const(2, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2_16")
## FX Code: expand_11: torch.float32[1, 4, 16, 8]cpu = torch.ops.aten.expand.default(reshape_default_31: torch.float32[1, 4, 16, 8]cpu, [1, 4, 16, 8])
Reshape_41_0 = ge.Reshape(StridedSliceV2_16_0, ge.Const([4, 8, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_41")
Transpose_18_0 = ge.Transpose(Reshape_41_0, ge.Const([0, 2, 1], dtype=9), node_name="Transpose_18")
Reshape_42_0 = ge.Reshape(Transpose_18_0, ge.Const([1, 4, 16, 8], dtype=9), axis=0, num_axes=-1, node_name="Reshape_42")
## FX Code: bmm_2: torch.float32[4, 8, 8]cpu = torch.ops.aten.bmm.default(reshape_default_32: torch.float32[4, 8, 16]cpu, reshape_default_33: torch.float32[4, 16, 8]cpu)
Reshape_43_0 = ge.Reshape(Add_8_0, ge.Const([4, 8, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_43")
Reshape_44_0 = ge.Reshape(Reshape_42_0, ge.Const([4, 16, 8], dtype=9), axis=0, num_axes=-1, node_name="Reshape_44")
BatchMatMul_2_0 = ge.BatchMatMul(Reshape_43_0, Reshape_44_0, adj_x1=False, adj_x2=False, node_name="BatchMatMul_2")
## FX Code: div_1: torch.float32[1, 4, 8, 8]cpu = torch.ops.aten.div.Tensor(reshape_default_34: torch.float32[1, 4, 8, 8]cpu, 4.0)
Reshape_45_0 = ge.Reshape(BatchMatMul_2_0, ge.Const([1, 4, 8, 8], dtype=9), axis=0, num_axes=-1, node_name="Reshape_45")
RealDiv_1_0 = ge.RealDiv(Reshape_45_0, ge.Const(4.0, dtype=0), node_name="RealDiv_1")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 55, in forward    scores = scores + torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)                                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: full_1: torch.float32[8, 8]cpu = torch.ops.aten.full.default([8, 8], -inf, device=cpu, pin_memory=False)
Fill_1_0 = ge.Fill(ge.Const([8, 8], dtype=9), ge.Const(float("-inf"), dtype=0), node_name="Fill_1")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 55, in forward    scores = scores + torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)                      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: triu_1: torch.float32[8, 8]cpu = torch.ops.aten.triu.default(full_1: torch.float32[8, 8]cpu, 1)
Triu_1_0 = ge.Triu(Fill_1_0, diagonal=1, node_name="Triu_1")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 55, in forward    scores = scores + torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: add_10: torch.float32[1, 4, 8, 8]cpu = torch.ops.aten.add.Tensor(div_1: torch.float32[1, 4, 8, 8]cpu, triu_1: torch.float32[8, 8]cpu)
Add_10_0 = ge.Add(RealDiv_1_0, Triu_1_0, node_name="Add_10")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 56, in forward    attn = torch.softmax(scores.float(), dim=-1).type_as(q)           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: _softmax_1: torch.float32[1, 4, 8, 8]cpu = torch.ops.aten._softmax.default(add_10: torch.float32[1, 4, 8, 8]cpu, -1, False)
SoftmaxV2_1_0 = ge.SoftmaxV2(Add_10_0, axes=[-1], half_to_float=False, node_name="SoftmaxV2_1")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 57, in forward    out = torch.matmul(attn, values).transpose(1, 2).reshape(batch, seq, dim)          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: slice_28: torch.float32[1, 4, 8, 16]cpu = torch.ops.aten.slice.Tensor(slice_scatter_3: torch.float32[1, 4, 16, 16]cpu, 2, 0, 8)
StridedSliceV2_17_0 = ge.StridedSliceV2(ConcatV2_7_0, ge.Const(0, dtype=9), ge.Const(8, dtype=9), ge.Const(2, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2_17")
## FX Code: bmm_3: torch.float32[4, 8, 16]cpu = torch.ops.aten.bmm.default(reshape_default_35: torch.float32[4, 8, 8]cpu, reshape_default_36: torch.float32[4, 8, 16]cpu)
Reshape_46_0 = ge.Reshape(SoftmaxV2_1_0, ge.Const([4, 8, 8], dtype=9), axis=0, num_axes=-1, node_name="Reshape_46")
Reshape_47_0 = ge.Reshape(StridedSliceV2_17_0, ge.Const([4, 8, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_47")
BatchMatMul_3_0 = ge.BatchMatMul(Reshape_46_0, Reshape_47_0, adj_x1=False, adj_x2=False, node_name="BatchMatMul_3")
## FX Code: clone_1: torch.float32[1, 8, 4, 16]cpu = torch.ops.aten.clone.default(reshape_default_37: torch.float32[1, 8, 4, 16]cpu, memory_format=torch.contiguous_format)
Transpose_19_0 = ge.Transpose(BatchMatMul_3_0, ge.Const([1, 0, 2], dtype=9), node_name="Transpose_19")
Reshape_48_0 = ge.Reshape(Transpose_19_0, ge.Const([1, 8, 4, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_48")
Identity_1_0 = ge.Identity(Reshape_48_0, node_name="Identity_1")
## FX Code: _unsafe_view_11: torch.float32[1, 8, 64]cpu = torch.ops.aten._unsafe_view.default(clone_1: torch.float32[1, 8, 4, 16]cpu, [1, 8, 64])
Reshape_49_0 = ge.Reshape(Identity_1_0, ge.Const([1, 8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_49")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 58, in forward    return self.o_proj(out)           ^^^^^^^^^^^^^^^^
## FX Code: mm_10: torch.float32[8, 64]cpu = torch.ops.aten.mm.default(reshape_default_38: torch.float32[8, 64]cpu, permute_default_20: torch.float32[64, 64]cpu)
Reshape_50_0 = ge.Reshape(Reshape_49_0, ge.Const([8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_50")
Transpose_20_0 = ge.Transpose(arg21_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose_20")
MatMul_10_0 = ge.MatMul(Reshape_50_0, Transpose_20_0, None, transpose_x1=False, transpose_x2=False, node_name="MatMul_10")
## FX Code: _unsafe_view_12: torch.float32[1, 8, 64]cpu = torch.ops.aten._unsafe_view.default(mm_10: torch.float32[8, 64]cpu, [1, 8, 64])
Reshape_51_0 = ge.Reshape(MatMul_10_0, ge.Const([1, 8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_51")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 81, in forward    x = x + self.attn(self.input_norm(x), cos, sin)        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: add_11: torch.float32[1, 8, 64]cpu = torch.ops.aten.add.Tensor(add_6: torch.float32[1, 8, 64]cpu, _unsafe_view_12: torch.float32[1, 8, 64]cpu)
Add_11_0 = ge.Add(Add_6_0, Reshape_51_0, node_name="Add_11")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 21, in forward    variance = x.pow(2).mean(-1, keepdim=True)               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: pow_4: torch.float32[1, 8, 64]cpu = torch.ops.aten.pow.Tensor_Scalar(add_11: torch.float32[1, 8, 64]cpu, 2)
Pow_3_0 = ge.Pow(Add_11_0, ge.Const(2, dtype=0), node_name="Pow_3")
## FX Code: mean_3: torch.float32[1, 8, 1]cpu = torch.ops.aten.mean.dim(pow_4: torch.float32[1, 8, 64]cpu, [-1], True)
ReduceMean_3_0 = ge.ReduceMean(Pow_3_0, ge.Const([-1], dtype=9), keep_dims=True, noop_with_empty_axes=True, node_name="ReduceMean_3")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 22, in forward    return x * torch.rsqrt(variance + self.eps) * self.weight                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: add_12: torch.float32[1, 8, 1]cpu = torch.ops.aten.add.Tensor(mean_3: torch.float32[1, 8, 1]cpu, 1e-06)
Add_12_0 = ge.Add(ReduceMean_3_0, ge.Const(1e-06, dtype=0), node_name="Add_12")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 22, in forward    return x * torch.rsqrt(variance + self.eps) * self.weight               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: rsqrt_3: torch.float32[1, 8, 1]cpu = torch.ops.aten.rsqrt.default(add_12: torch.float32[1, 8, 1]cpu)
Rsqrt_3_0 = ge.Rsqrt(Add_12_0, node_name="Rsqrt_3")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 22, in forward    return x * torch.rsqrt(variance + self.eps) * self.weight           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mul_15: torch.float32[1, 8, 64]cpu = torch.ops.aten.mul.Tensor(add_11: torch.float32[1, 8, 64]cpu, rsqrt_3: torch.float32[1, 8, 1]cpu)
Mul_15_0 = ge.Mul(Add_11_0, Rsqrt_3_0, node_name="Mul_15")
Cast_19_0 = ge.Cast(Mul_15_0, dst_type=0, node_name="Cast_19")
## FX Code: mul_16: torch.float32[1, 8, 64]cpu = torch.ops.aten.mul.Tensor(mul_15: torch.float32[1, 8, 64]cpu, arg22_1: torch.float32[64]cpu)
Mul_16_0 = ge.Mul(Cast_19_0, arg22_1_0, node_name="Mul_16")
Cast_20_0 = ge.Cast(Mul_16_0, dst_type=0, node_name="Cast_20")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 69, in forward    return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))                                             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mm_11: torch.float32[8, 128]cpu = torch.ops.aten.mm.default(reshape_default_39: torch.float32[8, 64]cpu, permute_default_21: torch.float32[64, 128]cpu)
Reshape_52_0 = ge.Reshape(Cast_20_0, ge.Const([8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_52")
Transpose_21_0 = ge.Transpose(arg23_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose_21")
MatMul_11_0 = ge.MatMul(Reshape_52_0, Transpose_21_0, None, transpose_x1=False, transpose_x2=False, node_name="MatMul_11")
## FX Code: _unsafe_view_13: torch.float32[1, 8, 128]cpu = torch.ops.aten._unsafe_view.default(mm_11: torch.float32[8, 128]cpu, [1, 8, 128])
Reshape_53_0 = ge.Reshape(MatMul_11_0, ge.Const([1, 8, 128], dtype=9), axis=0, num_axes=-1, node_name="Reshape_53")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 69, in forward    return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))                          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: silu_1: torch.float32[1, 8, 128]cpu = torch.ops.aten.silu.default(_unsafe_view_13: torch.float32[1, 8, 128]cpu)
Swish_1_0 = ge.Swish(Reshape_53_0, scale=1.0, node_name="Swish_1")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 69, in forward    return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))                                                                  ^^^^^^^^^^^^^^^^
## FX Code: mm_12: torch.float32[8, 128]cpu = torch.ops.aten.mm.default(reshape_default_40: torch.float32[8, 64]cpu, permute_default_22: torch.float32[64, 128]cpu)
Reshape_54_0 = ge.Reshape(Cast_20_0, ge.Const([8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_54")
Transpose_22_0 = ge.Transpose(arg24_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose_22")
MatMul_12_0 = ge.MatMul(Reshape_54_0, Transpose_22_0, None, transpose_x1=False, transpose_x2=False, node_name="MatMul_12")
## FX Code: _unsafe_view_14: torch.float32[1, 8, 128]cpu = torch.ops.aten._unsafe_view.default(mm_12: torch.float32[8, 128]cpu, [1, 8, 128])
Reshape_55_0 = ge.Reshape(MatMul_12_0, ge.Const([1, 8, 128], dtype=9), axis=0, num_axes=-1, node_name="Reshape_55")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 69, in forward    return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))                          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mul_17: torch.float32[1, 8, 128]cpu = torch.ops.aten.mul.Tensor(silu_1: torch.float32[1, 8, 128]cpu, _unsafe_view_14: torch.float32[1, 8, 128]cpu)
Mul_17_0 = ge.Mul(Swish_1_0, Reshape_55_0, node_name="Mul_17")
Cast_21_0 = ge.Cast(Mul_17_0, dst_type=0, node_name="Cast_21")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 69, in forward    return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mm_13: torch.float32[8, 64]cpu = torch.ops.aten.mm.default(reshape_default_41: torch.float32[8, 128]cpu, permute_default_23: torch.float32[128, 64]cpu)
Reshape_56_0 = ge.Reshape(Cast_21_0, ge.Const([8, 128], dtype=9), axis=0, num_axes=-1, node_name="Reshape_56")
Transpose_23_0 = ge.Transpose(arg25_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose_23")
MatMul_13_0 = ge.MatMul(Reshape_56_0, Transpose_23_0, None, transpose_x1=False, transpose_x2=False, node_name="MatMul_13")
## FX Code: _unsafe_view_15: torch.float32[1, 8, 64]cpu = torch.ops.aten._unsafe_view.default(mm_13: torch.float32[8, 64]cpu, [1, 8, 64])
Reshape_57_0 = ge.Reshape(MatMul_13_0, ge.Const([1, 8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_57")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 82, in forward    return x + self.mlp(self.post_norm(x))           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: add_13: torch.float32[1, 8, 64]cpu = torch.ops.aten.add.Tensor(add_11: torch.float32[1, 8, 64]cpu, _unsafe_view_15: torch.float32[1, 8, 64]cpu)
Add_13_0 = ge.Add(Add_11_0, Reshape_57_0, node_name="Add_13")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 21, in forward    variance = x.pow(2).mean(-1, keepdim=True)               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: pow_5: torch.float32[1, 8, 64]cpu = torch.ops.aten.pow.Tensor_Scalar(add_13: torch.float32[1, 8, 64]cpu, 2)
Pow_4_0 = ge.Pow(Add_13_0, ge.Const(2, dtype=0), node_name="Pow_4")
## FX Code: mean_4: torch.float32[1, 8, 1]cpu = torch.ops.aten.mean.dim(pow_5: torch.float32[1, 8, 64]cpu, [-1], True)
ReduceMean_4_0 = ge.ReduceMean(Pow_4_0, ge.Const([-1], dtype=9), keep_dims=True, noop_with_empty_axes=True, node_name="ReduceMean_4")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 22, in forward    return x * torch.rsqrt(variance + self.eps) * self.weight                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: add_14: torch.float32[1, 8, 1]cpu = torch.ops.aten.add.Tensor(mean_4: torch.float32[1, 8, 1]cpu, 1e-06)
Add_14_0 = ge.Add(ReduceMean_4_0, ge.Const(1e-06, dtype=0), node_name="Add_14")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 22, in forward    return x * torch.rsqrt(variance + self.eps) * self.weight               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: rsqrt_4: torch.float32[1, 8, 1]cpu = torch.ops.aten.rsqrt.default(add_14: torch.float32[1, 8, 1]cpu)
Rsqrt_4_0 = ge.Rsqrt(Add_14_0, node_name="Rsqrt_4")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 22, in forward    return x * torch.rsqrt(variance + self.eps) * self.weight           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mul_18: torch.float32[1, 8, 64]cpu = torch.ops.aten.mul.Tensor(add_13: torch.float32[1, 8, 64]cpu, rsqrt_4: torch.float32[1, 8, 1]cpu)
Mul_18_0 = ge.Mul(Add_13_0, Rsqrt_4_0, node_name="Mul_18")
Cast_22_0 = ge.Cast(Mul_18_0, dst_type=0, node_name="Cast_22")
## FX Code: mul_19: torch.float32[1, 8, 64]cpu = torch.ops.aten.mul.Tensor(mul_18: torch.float32[1, 8, 64]cpu, arg26_1: torch.float32[64]cpu)
Mul_19_0 = ge.Mul(Cast_22_0, arg26_1_0, node_name="Mul_19")
Cast_23_0 = ge.Cast(Mul_19_0, dst_type=0, node_name="Cast_23")

# File "/tmp/fxlab-golden/examples/llama_decoder.py", line 105, in forward    return self.lm_head(self.norm(h))           ^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mm_14: torch.float32[8, 128]cpu = torch.ops.aten.mm.default(reshape_default_42: torch.float32[8, 64]cpu, permute_default_24: torch.float32[64, 128]cpu)
Reshape_58_0 = ge.Reshape(Cast_23_0, ge.Const([8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_58")
Transpose_24_0 = ge.Transpose(arg27_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose_24")
MatMul_14_0 = ge.MatMul(Reshape_58_0, Transpose_24_0, None, transpose_x1=False, transpose_x2=False, node_name="MatMul_14")
## FX Code: _unsafe_view_16: torch.float32[1, 8, 128]cpu = torch.ops.aten._unsafe_view.default(mm_14: torch.float32[8, 128]cpu, [1, 8, 128])
Reshape_59_0 = ge.Reshape(MatMul_14_0, ge.Const([1, 8, 128], dtype=9), axis=0, num_axes=-1, node_name="Reshape_59")

_ = ge.NetOutput([Reshape_59_0, ConcatV2_2_0, ConcatV2_3_0, ConcatV2_6_0, ConcatV2_7_0])
