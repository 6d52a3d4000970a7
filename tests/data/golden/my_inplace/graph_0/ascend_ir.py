# -*- coding: utf-8 -*-
from torch import tensor
from torchair._ge_concrete_graph import ge_apis as ge
from torchair.ge._ge_graph import get_default_ge_graph

arg0_1_0 = ge.Data(index=0, dtype=0, shape=[2, 8], node_name="arg0_1")
arg1_1_0 = ge.Data(index=1, dtype=0, shape=[2, 8], node_name="arg1_1")
arg2_1_0 = ge.Data(index=2, dtype=0, shape=[4, 8], node_name="arg2_1")

# File "/tmp/fxlab-golden/examples/my_inplace.py", line 23, in forward    h = x * 2        ^^^^^
## FX Code: mul: torch.float32[2, 8]cpu = torch.ops.aten.mul.Tensor(arg0_1: torch.float32[2, 8]cpu, 2)
Mul_0 = ge.Mul(arg0_1_0, ge.Const(2, dtype=0), node_name="Mul")
Cast_0 = ge.Cast(Mul_0, dst_type=0, node_name="Cast")

# File "/tmp/fxlab-golden/examples/my_inplace.py", line 24, in forward    z = torch.ops.npu.my_inplace(h, y)  # on an intermediate        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: auto_functionalized_v2 = torch.ops.higher_order.auto_functionalized_v2(npu.my_inplace.default, y=arg1_1: torch.float32[2, 8]cpu, _x_base_index=0, _all_bases=[mul])
TensorMove_0 = ge.TensorMove(Cast_0, node_name="TensorMove")
MyInplace_0, MyInplace_1 = ge.MyInplace(TensorMove_0, arg1_1_0, node_name="MyInplace")  # _inference_rule="{\n  \"shape\": {\n    \"inputs\": [\n      null,\n      null\n    ],\n    \"outputs\": [\n      [\n        \"2\",\n        \"8\"\n      ],\n      [\n        \"2\",\n        \"8\"\n      ]\n    ]\n  },\n  \"dtype\": [\n    0,\n    0\n  ]\n}"

# File "/tmp/fxlab-golden/examples/my_inplace.py", line 25, in forward    w = torch.ops.npu.my_inplace(x, y)  # on a graph input        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: auto_functionalized_v2_1 = torch.ops.higher_order.auto_functionalized_v2(npu.my_inplace.default, y=arg1_1: torch.float32[2, 8]cpu, _x_base_index=0, _all_bases=[arg0_1])
TensorMove_1_0 = ge.TensorMove(arg0_1_0, node_name="TensorMove_1")
MyInplace_1_0, MyInplace_1_1 = ge.MyInplace(TensorMove_1_0, arg1_1_0, node_name="MyInplace_1")  # _inference_rule="{\n  \"shape\": {\n    \"inputs\": [\n      null,\n      null\n    ],\n    \"outputs\": [\n      [\n        \"2\",\n        \"8\"\n      ],\n      [\n        \"2\",\n        \"8\"\n      ]\n    ]\n  },\n  \"dtype\": [\n    0,\n    0\n  ]\n}"

# File "/tmp/fxlab-golden/examples/my_inplace.py", line 26, in forward    torch.ops.npu.my_inplace(self.state[:2], y)  # on a view of a buffer
## FX Code: auto_functionalized_v2_2 = torch.ops.higher_order.auto_functionalized_v2(npu.my_inplace.default, y=arg1_1: torch.float32[2, 8]cpu, _x_base_index=0, _x_slice_dim=0, _x_slice_start=0, _x_slice_end=2, _all_bases=[arg2_1])
TensorMove_2_0 = ge.TensorMove(arg2_1_0, node_name="TensorMove_2")
AsStrided_0 = ge.AsStrided(TensorMove_2_0, ge.Const([2, 8], dtype=9), ge.Const([8, 1], dtype=9), ge.Const(0, dtype=9), node_name="AsStrided")
MyInplace_2_0, MyInplace_2_1 = ge.MyInplace(AsStrided_0, arg1_1_0, node_name="MyInplace_2")  # _inference_rule="{\n  \"shape\": {\n    \"inputs\": [\n      null,\n      null\n    ],\n    \"outputs\": [\n      [\n        \"2\",\n        \"8\"\n      ],\n      [\n        \"2\",\n        \"8\"\n      ]\n    ]\n  },\n  \"dtype\": [\n    0,\n    0\n  ]\n}"
ViewCopy_0 = ge.ViewCopy(TensorMove_2_0, ge.Const([2, 8], dtype=9), ge.Const([8, 1], dtype=9), ge.Const(0, dtype=9), AsStrided_0, ge.Const([2, 8], dtype=9), ge.Const([8, 1], dtype=9), ge.Const(0, dtype=9), dependencies=[MyInplace_2_0], node_name="ViewCopy")

# File "/tmp/fxlab-golden/examples/my_inplace.py", line 27, in forward    return h + z + w           ^^^^^^^^^
## FX Code: add: torch.float32[2, 8]cpu = torch.ops.aten.add.Tensor(getitem_1: torch.float32[2, 8]cpu, getitem: torch.float32[2, 8]cpu)
Add_0 = ge.Add(MyInplace_0, MyInplace_1, node_name="Add")
## FX Code: add_1: torch.float32[2, 8]cpu = torch.ops.aten.add.Tensor(add: torch.float32[2, 8]cpu, getitem_2: torch.float32[2, 8]cpu)
Add_1_0 = ge.Add(Add_0, MyInplace_1_1, node_name="Add_1")

_ = ge.NetOutput([Add_1_0, MyInplace_1_0, ViewCopy_0])
