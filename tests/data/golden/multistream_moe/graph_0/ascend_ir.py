# -*- coding: utf-8 -*-
from torch import tensor
from torchair._ge_concrete_graph import ge_apis as ge
from torchair.ge._ge_graph import get_default_ge_graph

arg0_1_0 = ge.Data(index=0, dtype=0, shape=[4, 32], node_name="arg0_1")
arg1_1_0 = ge.Data(index=1, dtype=0, shape=[8, 32], node_name="arg1_1")
arg2_1_0 = ge.Data(index=2, dtype=0, shape=[128, 32], node_name="arg2_1")
arg3_1_0 = ge.Data(index=3, dtype=0, shape=[32, 64], node_name="arg3_1")
arg4_1_0 = ge.Data(index=4, dtype=0, shape=[4, 32, 128], node_name="arg4_1")
arg5_1_0 = ge.Data(index=5, dtype=0, shape=[4, 64, 32], node_name="arg5_1")

# File "/tmp/fxlab-golden/examples/multistream_moe.py", line 60, in forward    logits = self.router(hidden)             ^^^^^^^^^^^^^^^^^^^
## FX Code: mm: torch.float32[8, 4]cpu = torch.ops.aten.mm.default(arg1_1: torch.float32[8, 32]cpu, permute_default: torch.float32[32, 4]cpu)
Transpose_0 = ge.Transpose(arg0_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose")
MatMul_0 = ge.MatMul(arg1_1_0, Transpose_0, None, transpose_x1=False, transpose_x2=False, node_name="MatMul")

# File "/tmp/fxlab-golden/examples/multistream_moe.py", line 33, in npu_wait_tensor    return torchair.scope.npu_wait_tensor(tensor, dependency) if enabled else tensor           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: wait_tensor: torch.float32[8, 32]cpu = torch.ops.air.wait_tensor.default(arg1_1: torch.float32[8, 32]cpu, mm: torch.float32[8, 4]cpu)
Identity_0 = ge.Identity(arg1_1_0, dependencies=[MatMul_0], node_name="Identity")  # _user_stream_label="moe_shared", _user_stream_priority="0", _enable_inner_parallel=True

# File "/tmp/fxlab-golden/examples/multistream_moe.py", line 47, in forward    gate, up = self.gate_up(x).chunk(2, dim=-1)               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: t_1: torch.float32[32, 128]cpu = torch.ops.aten.t.default(arg2_1: torch.float32[128, 32]cpu)
Transpose_1_0 = ge.Transpose(arg2_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose_1")  # _user_stream_label="moe_shared", _user_stream_priority="0", _enable_inner_parallel=True
## FX Code: mm_1: torch.float32[8, 128]cpu = torch.ops.aten.mm.default(wait_tensor: torch.float32[8, 32]cpu, t_1: torch.float32[32, 128]cpu)
MatMul_1_0 = ge.MatMul(Identity_0, Transpose_1_0, None, transpose_x1=False, transpose_x2=False, node_name="MatMul_1")  # _user_stream_label="moe_shared", _user_stream_priority="0", _enable_inner_parallel=True
## FX Code: split = torch.ops.aten.split.Tensor(mm_1: torch.float32[8, 128]cpu, 64, -1)
Pack_0 = ge.Pack(ge.Const(64, dtype=9), ge.Const(-1, dtype=9), axis=0, N=2, node_name="Pack")  # _user_stream_label="moe_shared", _user_stream_priority="0", _enable_inner_parallel=True
Cast_0 = ge.Cast(Pack_0, dst_type=9, node_name="Cast")  # _user_stream_label="moe_shared", _user_stream_priority="0", _enable_inner_parallel=True
SplitV_0, SplitV_1 = ge.SplitV(MatMul_1_0, Cast_0, ge.Const(-1, dtype=3), num_split=2, node_name="SplitV")  # _user_stream_label="moe_shared", _user_stream_priority="0", _enable_inner_parallel=True

# File "/tmp/fxlab-golden/examples/multistream_moe.py", line 48, in forward    return self.down(nn.functional.silu(gate) * up)                     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: silu: torch.float32[8, 64]cpu = torch.ops.aten.silu.default(getitem: torch.float32[8, 64]cpu)
Swish_0 = ge.Swish(SplitV_0, scale=1.0, node_name="Swish")  # _user_stream_label="moe_shared", _user_stream_priority="0", _enable_inner_parallel=True
## FX Code: mul: torch.float32[8, 64]cpu = torch.ops.aten.mul.Tensor(silu: torch.float32[8, 64]cpu, getitem_1: torch.float32[8, 64]cpu)
Mul_0 = ge.Mul(Swish_0, SplitV_1, node_name="Mul")  # _user_stream_label="moe_shared", _user_stream_priority="0", _enable_inner_parallel=True
Cast_1_0 = ge.Cast(Mul_0, dst_type=0, node_name="Cast_1")  # _user_stream_label="moe_shared", _user_stream_priority="0", _enable_inner_parallel=True

# File "/tmp/fxlab-golden/examples/multistream_moe.py", line 48, in forward    return self.down(nn.functional.silu(gate) * up)           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: t_2: torch.float32[64, 32]cpu = torch.ops.aten.t.default(arg3_1: torch.float32[32, 64]cpu)
Transpose_2_0 = ge.Transpose(arg3_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose_2")  # _user_stream_label="moe_shared", _user_stream_priority="0", _enable_inner_parallel=True
## FX Code: mm_2: torch.float32[8, 32]cpu = torch.ops.aten.mm.default(mul: torch.float32[8, 64]cpu, t_2: torch.float32[64, 32]cpu)
MatMul_2_0 = ge.MatMul(Cast_1_0, Transpose_2_0, None, transpose_x1=False, transpose_x2=False, node_name="MatMul_2")  # _user_stream_label="moe_shared", _user_stream_priority="0", _enable_inner_parallel=True

# File "/tmp/fxlab-golden/examples/multistream_moe.py", line 65, in forward    weights, chosen = torch.softmax(logits, dim=-1).topk(TOP_K, dim=-1)                      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: _softmax: torch.float32[8, 4]cpu = torch.ops.aten._softmax.default(mm: torch.float32[8, 4]cpu, -1, False)
SoftmaxV2_0 = ge.SoftmaxV2(MatMul_0, axes=[-1], half_to_float=False, node_name="SoftmaxV2")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1"
## FX Code: topk = torch.ops.aten.topk.default(_softmax: torch.float32[8, 4]cpu, 2)
TopKV2_0, TopKV2_1 = ge.TopKV2(SoftmaxV2_0, ge.Const(2, dtype=9), sorted=True, dim=-1, largest=True, sort_policy=1, node_name="TopKV2")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1"
Cast_2_0 = ge.Cast(TopKV2_1, dst_type=9, node_name="Cast_2")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1"

# File "/tmp/fxlab-golden/examples/multistream_moe.py", line 66, in forward    weights = weights / weights.sum(dim=-1, keepdim=True)                        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: sum_1: torch.float32[8, 1]cpu = torch.ops.aten.sum.dim_IntList(getitem_2: torch.float32[8, 2]cpu, [-1], True)
ReduceSum_0 = ge.ReduceSum(TopKV2_0, ge.Const([-1], dtype=9), keep_dims=True, node_name="ReduceSum")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1"

# File "/tmp/fxlab-golden/examples/multistream_moe.py", line 66, in forward    weights = weights / weights.sum(dim=-1, keepdim=True)              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: div: torch.float32[8, 2]cpu = torch.ops.aten.div.Tensor(getitem_2: torch.float32[8, 2]cpu, sum_1: torch.float32[8, 1]cpu)
RealDiv_0 = ge.RealDiv(TopKV2_0, ReduceSum_0, node_name="RealDiv")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1"

# File "/tmp/fxlab-golden/examples/multistream_moe.py", line 68, in forward    dense = torch.zeros_like(logits).scatter(1, chosen, weights)            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: zeros_like: torch.float32[8, 4]cpu = torch.ops.aten.zeros_like.default(mm: torch.float32[8, 4]cpu, pin_memory=False)
ZerosLike_0 = ge.ZerosLike(MatMul_0, node_name="ZerosLike")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1"
## FX Code: scatter: torch.float32[8, 4]cpu = torch.ops.aten.scatter.src(zeros_like: torch.float32[8, 4]cpu, 1, getitem_3: torch.int64[8, 2]cpu, div: torch.float32[8, 2]cpu)
ScatterElements_0 = ge.ScatterElements(ZerosLike_0, Cast_2_0, RealDiv_0, axis=1, reduction="none", node_name="ScatterElements")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1"

# File "/tmp/fxlab-golden/examples/multistream_moe.py", line 70, in forward    gate_up = torch.einsum("th,ehi->eti", hidden, self.w_gate_up)              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: unsqueeze: torch.float32[8, 32, 1]cpu = torch.ops.aten.unsqueeze.default(wait_tensor: torch.float32[8, 32]cpu, 2)
Unsqueeze_0 = ge.Unsqueeze(Identity_0, axes=[2], node_name="Unsqueeze")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: unsqueeze_1: torch.float32[8, 32, 1, 1]cpu = torch.ops.aten.unsqueeze.default(unsqueeze: torch.float32[8, 32, 1]cpu, 3)
Unsqueeze_1_0 = ge.Unsqueeze(Unsqueeze_0, axes=[3], node_name="Unsqueeze_1")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: permute: torch.float32[1, 8, 1, 32]cpu = torch.ops.aten.permute.default(unsqueeze_1: torch.float32[8, 32, 1, 1]cpu, [2, 0, 3, 1])
Squeeze_0 = ge.Squeeze(Unsqueeze_1_0, axis=[], node_name="Squeeze")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
Unsqueeze_2_0 = ge.Unsqueeze(Squeeze_0, axes=[0, 2], node_name="Unsqueeze_2")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: unsqueeze_2: torch.float32[4, 32, 128, 1]cpu = torch.ops.aten.unsqueeze.default(arg4_1: torch.float32[4, 32, 128]cpu, 3)
Unsqueeze_3_0 = ge.Unsqueeze(arg4_1_0, axes=[3], node_name="Unsqueeze_3")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: permute_1: torch.float32[4, 1, 128, 32]cpu = torch.ops.aten.permute.default(unsqueeze_2: torch.float32[4, 32, 128, 1]cpu, [0, 3, 2, 1])
Transpose_3_0 = ge.Transpose(Unsqueeze_3_0, ge.Const([0, 3, 2, 1], dtype=9), node_name="Transpose_3")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: permute_2: torch.float32[8, 32, 1, 1]cpu = torch.ops.aten.permute.default(permute: torch.float32[1, 8, 1, 32]cpu, [1, 3, 0, 2])
Squeeze_1_0 = ge.Squeeze(Unsqueeze_2_0, axis=[], node_name="Squeeze_1")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
Unsqueeze_4_0 = ge.Unsqueeze(Squeeze_1_0, axes=[2, 3], node_name="Unsqueeze_4")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: view: torch.float32[1, 8, 32]cpu = torch.ops.aten.reshape.default(permute_2: torch.float32[8, 32, 1, 1]cpu, [1, 8, 32])
Reshape_0 = ge.Reshape(Unsqueeze_4_0, ge.Const([1, 8, 32], dtype=9), axis=0, num_axes=-1, node_name="Reshape")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: permute_3: torch.float32[32, 4, 128, 1]cpu = torch.ops.aten.permute.default(permute_1: torch.float32[4, 1, 128, 32]cpu, [3, 0, 2, 1])
Transpose_4_0 = ge.Transpose(Transpose_3_0, ge.Const([3, 0, 2, 1], dtype=9), node_name="Transpose_4")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: clone: torch.float32[32, 4, 128, 1]cpu = torch.ops.aten.clone.default(permute_3: torch.float32[32, 4, 128, 1]cpu, memory_format=torch.contiguous_format)
Identity_1_0 = ge.Identity(Transpose_4_0, node_name="Identity_1")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: _unsafe_view: torch.float32[1, 32, 512]cpu = torch.ops.aten._unsafe_view.default(clone: torch.float32[32, 4, 128, 1]cpu, [1, 32, 512])
Reshape_1_0 = ge.Reshape(Identity_1_0, ge.Const([1, 32, 512], dtype=9), axis=0, num_axes=-1, node_name="Reshape_1")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: bmm: torch.float32[1, 8, 512]cpu = torch.ops.aten.bmm.default(view: torch.float32[1, 8, 32]cpu, _unsafe_view: torch.float32[1, 32, 512]cpu)
BatchMatMul_0 = ge.BatchMatMul(Reshape_0, Reshape_1_0, adj_x1=False, adj_x2=False, node_name="BatchMatMul")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: view_1: torch.float32[8, 1, 4, 128]cpu = torch.ops.aten.reshape.default(bmm: torch.float32[1, 8, 512]cpu, [8, 1, 4, 128])
Reshape_2_0 = ge.Reshape(BatchMatMul_0, ge.Const([8, 1, 4, 128], dtype=9), axis=0, num_axes=-1, node_name="Reshape_2")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: permute_4: torch.float32[4, 8, 128, 1]cpu = torch.ops.aten.permute.default(view_1: torch.float32[8, 1, 4, 128]cpu, [2, 0, 3, 1])
Transpose_5_0 = ge.Transpose(Reshape_2_0, ge.Const([2, 0, 3, 1], dtype=9), node_name="Transpose_5")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: view_2: torch.float32[4, 8, 128]cpu = torch.ops.aten.reshape.default(permute_4: torch.float32[4, 8, 128, 1]cpu, [4, 8, 128])
Reshape_3_0 = ge.Reshape(Transpose_5_0, ge.Const([4, 8, 128], dtype=9), axis=0, num_axes=-1, node_name="Reshape_3")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"

# File "/tmp/fxlab-golden/examples/multistream_moe.py", line 71, in forward    gate, up = gate_up.chunk(2, dim=-1)               ^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: split_1 = torch.ops.aten.split.Tensor(view_2: torch.float32[4, 8, 128]cpu, 64, -1)
Pack_1_0 = ge.Pack(ge.Const(64, dtype=9), ge.Const(-1, dtype=9), axis=0, N=2, node_name="Pack_1")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
Cast_3_0 = ge.Cast(Pack_1_0, dst_type=9, node_name="Cast_3")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
SplitV_1_0, SplitV_1_1 = ge.SplitV(Reshape_3_0, Cast_3_0, ge.Const(-1, dtype=3), num_split=2, node_name="SplitV_1")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"

# File "/tmp/fxlab-golden/examples/multistream_moe.py", line 72, in forward    routed = torch.einsum("eti,eih->eth", nn.functional.silu(gate) * up, self.w_down)                                          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: silu_1: torch.float32[4, 8, 64]cpu = torch.ops.aten.silu.default(getitem_4: torch.float32[4, 8, 64]cpu)
Swish_1_0 = ge.Swish(SplitV_1_0, scale=1.0, node_name="Swish_1")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: mul_1: torch.float32[4, 8, 64]cpu = torch.ops.aten.mul.Tensor(silu_1: torch.float32[4, 8, 64]cpu, getitem_5: torch.float32[4, 8, 64]cpu)
Mul_1_0 = ge.Mul(Swish_1_0, SplitV_1_1, node_name="Mul_1")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
Cast_4_0 = ge.Cast(Mul_1_0, dst_type=0, node_name="Cast_4")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"

# File "/tmp/fxlab-golden/examples/multistream_moe.py", line 72, in forward    routed = torch.einsum("eti,eih->eth", nn.functional.silu(gate) * up, self.w_down)             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: unsqueeze_3: torch.float32[4, 8, 64, 1]cpu = torch.ops.aten.unsqueeze.default(mul_1: torch.float32[4, 8, 64]cpu, 3)
Unsqueeze_5_0 = ge.Unsqueeze(Cast_4_0, axes=[3], node_name="Unsqueeze_5")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: permute_5: torch.float32[4, 8, 1, 64]cpu = torch.ops.aten.permute.default(unsqueeze_3: torch.float32[4, 8, 64, 1]cpu, [0, 1, 3, 2])
Squeeze_2_0 = ge.Squeeze(Unsqueeze_5_0, axis=[], node_name="Squeeze_2")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
Unsqueeze_6_0 = ge.Unsqueeze(Squeeze_2_0, axes=[2], node_name="Unsqueeze_6")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: unsqueeze_4: torch.float32[4, 64, 32, 1]cpu = torch.ops.aten.unsqueeze.default(arg5_1: torch.float32[4, 64, 32]cpu, 3)
Unsqueeze_7_0 = ge.Unsqueeze(arg5_1_0, axes=[3], node_name="Unsqueeze_7")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: permute_6: torch.float32[4, 1, 32, 64]cpu = torch.ops.aten.permute.default(unsqueeze_4: torch.float32[4, 64, 32, 1]cpu, [0, 3, 2, 1])
Transpose_6_0 = ge.Transpose(Unsqueeze_7_0, ge.Const([0, 3, 2, 1], dtype=9), node_name="Transpose_6")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: permute_7: torch.float32[4, 8, 64, 1]cpu = torch.ops.aten.permute.default(permute_5: torch.float32[4, 8, 1, 64]cpu, [0, 1, 3, 2])
Squeeze_3_0 = ge.Squeeze(Unsqueeze_6_0, axis=[], node_name="Squeeze_3")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
Unsqueeze_8_0 = ge.Unsqueeze(Squeeze_3_0, axes=[3], node_name="Unsqueeze_8")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: view_3: torch.float32[4, 8, 64]cpu = torch.ops.aten.reshape.default(permute_7: torch.float32[4, 8, 64, 1]cpu, [4, 8, 64])
Reshape_4_0 = ge.Reshape(Unsqueeze_8_0, ge.Const([4, 8, 64], dtype=9), axis=0, num_axes=-1, node_name="Reshape_4")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: permute_8: torch.float32[4, 64, 32, 1]cpu = torch.ops.aten.permute.default(permute_6: torch.float32[4, 1, 32, 64]cpu, [0, 3, 2, 1])
Transpose_7_0 = ge.Transpose(Transpose_6_0, ge.Const([0, 3, 2, 1], dtype=9), node_name="Transpose_7")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: view_4: torch.float32[4, 64, 32]cpu = torch.ops.aten.reshape.default(permute_8: torch.float32[4, 64, 32, 1]cpu, [4, 64, 32])
Reshape_5_0 = ge.Reshape(Transpose_7_0, ge.Const([4, 64, 32], dtype=9), axis=0, num_axes=-1, node_name="Reshape_5")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: bmm_1: torch.float32[4, 8, 32]cpu = torch.ops.aten.bmm.default(view_3: torch.float32[4, 8, 64]cpu, view_4: torch.float32[4, 64, 32]cpu)
BatchMatMul_1_0 = ge.BatchMatMul(Reshape_4_0, Reshape_5_0, adj_x1=False, adj_x2=False, node_name="BatchMatMul_1")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: view_5: torch.float32[4, 8, 1, 32]cpu = torch.ops.aten.reshape.default(bmm_1: torch.float32[4, 8, 32]cpu, [4, 8, 1, 32])
Reshape_6_0 = ge.Reshape(BatchMatMul_1_0, ge.Const([4, 8, 1, 32], dtype=9), axis=0, num_axes=-1, node_name="Reshape_6")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: permute_9: torch.float32[4, 8, 32, 1]cpu = torch.ops.aten.permute.default(view_5: torch.float32[4, 8, 1, 32]cpu, [0, 1, 3, 2])
Squeeze_4_0 = ge.Squeeze(Reshape_6_0, axis=[], node_name="Squeeze_4")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
Unsqueeze_9_0 = ge.Unsqueeze(Squeeze_4_0, axes=[3], node_name="Unsqueeze_9")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"
## FX Code: view_6: torch.float32[4, 8, 32]cpu = torch.ops.aten.reshape.default(permute_9: torch.float32[4, 8, 32, 1]cpu, [4, 8, 32])
Reshape_7_0 = ge.Reshape(Unsqueeze_9_0, ge.Const([4, 8, 32], dtype=9), axis=0, num_axes=-1, node_name="Reshape_7")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1", _op_aicore_num="16", _op_vectorcore_num="32"

# File "/tmp/fxlab-golden/examples/multistream_moe.py", line 73, in forward    routed = (routed * dense.t().unsqueeze(-1)).sum(dim=0)                       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: unsqueeze_5: torch.float32[4, 8, 1]cpu = torch.ops.aten.unsqueeze.default(permute_default_1: torch.float32[4, 8]cpu, -1)
Transpose_8_0 = ge.Transpose(ScatterElements_0, ge.Const([1, 0], dtype=9), node_name="Transpose_8")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1"
Unsqueeze_10_0 = ge.Unsqueeze(Transpose_8_0, axes=[-1], node_name="Unsqueeze_10")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1"

# File "/tmp/fxlab-golden/examples/multistream_moe.py", line 73, in forward    routed = (routed * dense.t().unsqueeze(-1)).sum(dim=0)              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mul_2: torch.float32[4, 8, 32]cpu = torch.ops.aten.mul.Tensor(view_6: torch.float32[4, 8, 32]cpu, unsqueeze_5: torch.float32[4, 8, 1]cpu)
Mul_2_0 = ge.Mul(Reshape_7_0, Unsqueeze_10_0, node_name="Mul_2")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1"
Cast_5_0 = ge.Cast(Mul_2_0, dst_type=0, node_name="Cast_5")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1"

# File "/tmp/fxlab-golden/examples/multistream_moe.py", line 73, in forward    routed = (routed * dense.t().unsqueeze(-1)).sum(dim=0)             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: sum_2: torch.float32[8, 32]cpu = torch.ops.aten.sum.dim_IntList(mul_2: torch.float32[4, 8, 32]cpu, [0])
ReduceSum_1_0 = ge.ReduceSum(Cast_5_0, ge.Const([0], dtype=9), keep_dims=False, node_name="ReduceSum_1")  # _super_kernel_scope="moe_experts", _super_kernel_options="stream-fusion=1"

# File "/tmp/fxlab-golden/examples/multistream_moe.py", line 74, in forward    return routed + shared           ^^^^^^^^^^^^^^^
## FX Code: add: torch.float32[8, 32]cpu = torch.ops.aten.add.Tensor(sum_2: torch.float32[8, 32]cpu, mm_2: torch.float32[8, 32]cpu)
Add_0 = ge.Add(ReduceSum_1_0, MatMul_2_0, node_name="Add")

_ = ge.NetOutput([Add_0])
