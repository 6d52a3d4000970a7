# -*- coding: utf-8 -*-
from torch import tensor
from torchair._ge_concrete_graph import ge_apis as ge
from torchair.ge._ge_graph import get_default_ge_graph

arg0_1_0 = ge.Data(index=0, dtype=0, shape=[8, 8], node_name="arg0_1")
arg1_1_0 = ge.Data(index=1, dtype=0, shape=[8], node_name="arg1_1")
arg2_1_0 = ge.Data(index=2, dtype=0, shape=[2, 4, 8], node_name="arg2_1")
arg3_1_0 = ge.Data(index=3, dtype=0, shape=[2, 6, 8], node_name="arg3_1")

# File "/tmp/fxlab-golden/examples/inplace_ops.py", line 21, in forward    h = self.proj(x)        ^^^^^^^^^^^^
## FX Code: addmm: torch.float32[8, 8]cpu = torch.ops.aten.addmm.default(arg1_1: torch.float32[8]cpu, reshape_default: torch.float32[8, 8]cpu, permute_default: torch.float32[8, 8]cpu)
Reshape_0 = ge.Reshape(arg2_1_0, ge.Const([8, 8], dtype=9), axis=0, num_axes=-1, node_name="Reshape")
Transpose_0 = ge.Transpose(arg0_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose")
MatMulV2_0 = ge.MatMulV2(Reshape_0, Transpose_0, None, None, transpose_x1=False, transpose_x2=False, offset_x=0, node_name="MatMulV2")
Mul_0 = ge.Mul(MatMulV2_0, ge.Const(1, dtype=0), node_name="Mul")
Add_0 = ge.Add(Mul_0, arg1_1_0, node_name="Add")

# File "/tmp/fxlab-golden/examples/inplace_ops.py", line 22, in forward    h.mul_(2)  # in place on an intermediate
## FX Code: mul: torch.float32[2, 4, 8]cpu = torch.ops.aten.mul.Tensor(reshape_default_1: torch.float32[2, 4, 8]cpu, 2)
Reshape_1_0 = ge.Reshape(Add_0, ge.Const([2, 4, 8], dtype=9), axis=0, num_axes=-1, node_name="Reshape_1")
Mul_1_0 = ge.Mul(Reshape_1_0, ge.Const(2, dtype=0), node_name="Mul_1")
Cast_0 = ge.Cast(Mul_1_0, dst_type=0, node_name="Cast")

# File "/tmp/fxlab-golden/examples/inplace_ops.py", line 23, in forward    self.cache[:, :4] = h  # slice assignment into a cache buffer
## FX Code: slice_1: torch.float32[2, 4, 8]cpu = torch.ops.aten.slice.Tensor(arg3_1: torch.float32[2, 6, 8]cpu, 1, 0, 4)
StridedSliceV2_0 = ge.StridedSliceV2(arg3_1_0, ge.Const(0, dtype=9), ge.Const(4, dtype=9), ge.Const(1, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2")
## FX Code: slice_scatter: torch.float32[2, 6, 8]cpu = torch.ops.aten.slice_scatter.default(arg3_1: torch.float32[2, 6, 8]cpu, copy: torch.float32[2, 4, 8]cpu, 1, 0, 4)
StridedSliceV2_1_0 = ge.StridedSliceV2(arg3_1_0, ge.Const(0, dtype=9), ge.Const(0, dtype=9), ge.Const(1, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2_1")
StridedSliceV2_2_0 = ge.StridedSliceV2(arg3_1_0, ge.Const(4, dtype=9), ge.Const(2147483647, dtype=9), ge.Const(1, dtype=9), ge.Const(1, dtype=9), begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, node_name="StridedSliceV2_2")
ConcatV2_0 = ge.ConcatV2(StridedSliceV2_1_0, Cast_0, StridedSliceV2_2_0, ge.Const(1, dtype=9), N=3, node_name="ConcatV2")

# File "/tmp/fxlab-golden/examples/inplace_ops.py", line 24, in forward    x.add_(1)  # in place on a graph input
## FX Code: add: torch.float32[2, 4, 8]cpu = torch.ops.aten.add.Tensor(arg2_1: torch.float32[2, 4, 8]cpu, 1)
Add_1_0 = ge.Add(arg2_1_0, ge.Const(1, dtype=0), node_name="Add_1")

# File "/tmp/fxlab-golden/examples/inplace_ops.py", line 25, in forward    return h.sum(dim=-1) + self.cache.mean()           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: sum_1: torch.float32[2, 4]cpu = torch.ops.aten.sum.dim_IntList(mul: torch.float32[2, 4, 8]cpu, [-1])
ReduceSum_0 = ge.ReduceSum(Cast_0, ge.Const([-1], dtype=9), keep_dims=False, node_name="ReduceSum")

# File "/tmp/fxlab-golden/examples/inplace_ops.py", line 25, in forward    return h.sum(dim=-1) + self.cache.mean()                           ^^^^^^^^^^^^^^^^^
## FX Code: mean: torch.float32[]cpu = torch.ops.aten.mean.default(slice_scatter: torch.float32[2, 6, 8]cpu)
ReduceMean_0 = ge.ReduceMean(ConcatV2_0, ge.Const([0, 1, 2], dtype=9), keep_dims=False, noop_with_empty_axes=True, node_name="ReduceMean")

# File "/tmp/fxlab-golden/examples/inplace_ops.py", line 25, in forward    return h.sum(dim=-1) + self.cache.mean()           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: add_1: torch.float32[2, 4]cpu = torch.ops.aten.add.Tensor(sum_1: torch.float32[2, 4]cpu, mean: torch.float32[]cpu)
Add_2_0 = ge.Add(ReduceSum_0, ReduceMean_0, node_name="Add_2")

_ = ge.NetOutput([Add_2_0, Add_1_0, ConcatV2_0])
