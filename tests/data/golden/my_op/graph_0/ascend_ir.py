# -*- coding: utf-8 -*-
from torch import tensor
from torchair._ge_concrete_graph import ge_apis as ge
from torchair.ge._ge_graph import get_default_ge_graph

arg0_1_0 = ge.Data(index=0, dtype=0, shape=[2, 8], node_name="arg0_1")
arg1_1_0 = ge.Data(index=1, dtype=0, shape=[2, 8], node_name="arg1_1")
arg2_1_0 = ge.Data(index=2, dtype=0, shape=[2, 8], node_name="arg2_1")
arg3_1_0 = ge.Data(index=3, dtype=0, shape=[2, 8], node_name="arg3_1")

# File "/tmp/fxlab-golden/examples/my_op.py", line 17, in forward    with_y = torch.ops.npu.my_op(x, y, [z0, z1], 0.5, 2)             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: my_op: torch.float32[2, 8]cpu = torch.ops.npu.my_op.default(arg0_1: torch.float32[2, 8]cpu, arg1_1: torch.float32[2, 8]cpu, [arg2_1, arg3_1], 0.5, 2)
MyOp_0 = ge.MyOp(arg0_1_0, arg1_1_0, arg2_1_0, arg3_1_0, attr1=0.5, attr2=2, node_name="MyOp")  # _inference_rule="{\n  \"shape\": {\n    \"inputs\": [\n      null,\n      null,\n      null,\n      null\n    ],\n    \"outputs\": [\n      [\n        \"2\",\n        \"8\"\n      ]\n    ]\n  },\n  \"dtype\": [\n    0\n  ]\n}"

# File "/tmp/fxlab-golden/examples/my_op.py", line 18, in forward    without_y = torch.ops.npu.my_op(x, None, [z0], 1.5, 1)                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: my_op_1: torch.float32[2, 8]cpu = torch.ops.npu.my_op.default(arg0_1: torch.float32[2, 8]cpu, None, [arg2_1], 1.5, 1)
MyOp_1_0 = ge.MyOp(arg0_1_0, None, arg2_1_0, attr1=1.5, attr2=1, node_name="MyOp_1")  # _inference_rule="{\n  \"shape\": {\n    \"inputs\": [\n      null,\n      null,\n      null\n    ],\n    \"outputs\": [\n      [\n        \"2\",\n        \"8\"\n      ]\n    ]\n  },\n  \"dtype\": [\n    0\n  ]\n}"

# File "/tmp/fxlab-golden/examples/my_op.py", line 19, in forward    return with_y + without_y           ^^^^^^^^^^^^^^^^^^
## FX Code: add: torch.float32[2, 8]cpu = torch.ops.aten.add.Tensor(my_op: torch.float32[2, 8]cpu, my_op_1: torch.float32[2, 8]cpu)
Add_0 = ge.Add(MyOp_0, MyOp_1_0, node_name="Add")

_ = ge.NetOutput([Add_0])
