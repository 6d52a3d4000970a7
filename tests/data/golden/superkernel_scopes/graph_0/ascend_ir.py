# -*- coding: utf-8 -*-
from torch import tensor
from torchair._ge_concrete_graph import ge_apis as ge
from torchair.ge._ge_graph import get_default_ge_graph

arg0_1_0 = ge.Data(index=0, dtype=0, shape=[32, 16], node_name="arg0_1")
arg1_1_0 = ge.Data(index=1, dtype=0, shape=[32], node_name="arg1_1")
arg2_1_0 = ge.Data(index=2, dtype=0, shape=[4, 16], node_name="arg2_1")
arg3_1_0 = ge.Data(index=3, dtype=0, shape=[16, 32], node_name="arg3_1")
arg4_1_0 = ge.Data(index=4, dtype=0, shape=[16], node_name="arg4_1")
arg5_1_0 = ge.Data(index=5, dtype=0, shape=[4, 16], node_name="arg5_1")
arg6_1_0 = ge.Data(index=6, dtype=0, shape=[16], node_name="arg6_1")

# File "/tmp/fxlab-golden/examples/superkernel_scopes.py", line 28, in forward    h = self.up(x)        ^^^^^^^^^^
## FX Code: addmm: torch.float32[4, 32]cpu = torch.ops.aten.addmm.default(arg1_1: torch.float32[32]cpu, arg2_1: torch.float32[4, 16]cpu, permute_default: torch.float32[16, 32]cpu)
Transpose_0 = ge.Transpose(arg0_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose")  # _super_kernel_scope="mlp", _super_kernel_options="stream-fusion=1:feed-sync-all=1"
MatMulV2_0 = ge.MatMulV2(arg2_1_0, Transpose_0, None, None, transpose_x1=False, transpose_x2=False, offset_x=0, node_name="MatMulV2")  # _super_kernel_scope="mlp", _super_kernel_options="stream-fusion=1:feed-sync-all=1"
Mul_0 = ge.Mul(MatMulV2_0, ge.Const(1, dtype=0), node_name="Mul")  # _super_kernel_scope="mlp", _super_kernel_options="stream-fusion=1:feed-sync-all=1"
Add_0 = ge.Add(Mul_0, arg1_1_0, node_name="Add")  # _super_kernel_scope="mlp", _super_kernel_options="stream-fusion=1:feed-sync-all=1"

# File "/tmp/fxlab-golden/examples/superkernel_scopes.py", line 31, in forward    h = torch.nn.functional.silu(h)        ^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: silu: torch.float32[4, 32]cpu = torch.ops.aten.silu.default(addmm: torch.float32[4, 32]cpu)
Swish_0 = ge.Swish(Add_0, scale=1.0, node_name="Swish")  # _super_kernel_scope="mlp", _super_kernel_options="stream-fusion=1:feed-sync-all=1", _op_aicore_num="8", _op_vectorcore_num="16"

# File "/tmp/fxlab-golden/examples/superkernel_scopes.py", line 34, in forward    h = h * 0.5        ^^^^^^^
## FX Code: mul: torch.float32[4, 32]cpu = torch.ops.aten.mul.Tensor(silu: torch.float32[4, 32]cpu, 0.5)
Mul_1_0 = ge.Mul(Swish_0, ge.Const(0.5, dtype=0), node_name="Mul_1")
Cast_0 = ge.Cast(Mul_1_0, dst_type=0, node_name="Cast")

# File "/tmp/fxlab-golden/examples/superkernel_scopes.py", line 35, in forward    h = self.down(h)        ^^^^^^^^^^^^
## FX Code: addmm_1: torch.float32[4, 16]cpu = torch.ops.aten.addmm.default(arg4_1: torch.float32[16]cpu, mul: torch.float32[4, 32]cpu, permute_default_1: torch.float32[32, 16]cpu)
Transpose_1_0 = ge.Transpose(arg3_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose_1")  # _super_kernel_scope="mlp", _super_kernel_options="stream-fusion=1:feed-sync-all=1"
MatMulV2_1_0 = ge.MatMulV2(Cast_0, Transpose_1_0, None, None, transpose_x1=False, transpose_x2=False, offset_x=0, node_name="MatMulV2_1")  # _super_kernel_scope="mlp", _super_kernel_options="stream-fusion=1:feed-sync-all=1"
Mul_2_0 = ge.Mul(MatMulV2_1_0, ge.Const(1, dtype=0), node_name="Mul_2")  # _super_kernel_scope="mlp", _super_kernel_options="stream-fusion=1:feed-sync-all=1"
Add_1_0 = ge.Add(Mul_2_0, arg4_1_0, node_name="Add_1")  # _super_kernel_scope="mlp", _super_kernel_options="stream-fusion=1:feed-sync-all=1"

# File "/tmp/fxlab-golden/examples/superkernel_scopes.py", line 37, in forward    y = h + residual        ^^^^^^^^^^^^
## FX Code: add: torch.float32[4, 16]cpu = torch.ops.aten.add.Tensor(addmm_1: torch.float32[4, 16]cpu, arg5_1: torch.float32[4, 16]cpu)
Add_2_0 = ge.Add(Add_1_0, arg5_1_0, node_name="Add_2")

# File "/tmp/fxlab-golden/examples/superkernel_scopes.py", line 39, in forward    y = y * self.scale        ^^^^^^^^^^^^^^
## FX Code: mul_1: torch.float32[4, 16]cpu = torch.ops.aten.mul.Tensor(add: torch.float32[4, 16]cpu, arg6_1: torch.float32[16]cpu)
Mul_3_0 = ge.Mul(Add_2_0, arg6_1_0, node_name="Mul_3")  # _super_kernel_scope="norm", _super_kernel_options="debug-aic-num=12:debug-aiv-num=24"
Cast_1_0 = ge.Cast(Mul_3_0, dst_type=0, node_name="Cast_1")  # _super_kernel_scope="norm", _super_kernel_options="debug-aic-num=12:debug-aiv-num=24"

# File "/tmp/fxlab-golden/examples/superkernel_scopes.py", line 40, in forward    y = y + 1.0        ^^^^^^^
## FX Code: add_1: torch.float32[4, 16]cpu = torch.ops.aten.add.Tensor(mul_1: torch.float32[4, 16]cpu, 1.0)
Add_3_0 = ge.Add(Cast_1_0, ge.Const(1.0, dtype=0), node_name="Add_3")  # _super_kernel_scope="norm", _super_kernel_options="debug-aic-num=12:debug-aiv-num=24"

_ = ge.NetOutput([Add_3_0])
