class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[2, 8]", arg1_1: "f32[2, 8]", arg2_1: "f32[4, 8]"):
        # File: /tmp/fxlab-golden/examples/my_inplace.py:23 in forward, code: h = x * 2
        mul: "f32[2, 8]" = torch.ops.aten.mul.Tensor(arg0_1, 2)

        # File: /tmp/fxlab-golden/examples/my_inplace.py:24 in forward, code: z = torch.ops.npu.my_inplace(h, y)  # on an intermediate
        my_inplace: "f32[2, 8]" = torch.ops.npu.my_inplace.default(mul, arg1_1)

        # File: /tmp/fxlab-golden/examples/my_inplace.py:25 in forward, code: w = torch.ops.npu.my_inplace(x, y)  # on a graph input
        my_inplace_1: "f32[2, 8]" = torch.ops.npu.my_inplace.default(arg0_1, arg1_1);  arg0_1 = None

        # File: /tmp/fxlab-golden/examples/my_inplace.py:26 in forward, code: torch.ops.npu.my_inplace(self.state[:2], y)  # on a view of a buffer
        slice_1: "f32[2, 8]" = torch.ops.aten.slice.Tensor(arg2_1, 0, 0, 2);  arg2_1 = None
        my_inplace_2: "f32[2, 8]" = torch.ops.npu.my_inplace.default(slice_1, arg1_1);  slice_1 = arg1_1 = my_inplace_2 = None

        # File: /tmp/fxlab-golden/examples/my_inplace.py:27 in forward, code: return h + z + w
        add: "f32[2, 8]" = torch.ops.aten.add.Tensor(mul, my_inplace);  mul = my_inplace = None
        add_1: "f32[2, 8]" = torch.ops.aten.add.Tensor(add, my_inplace_1);  add = my_inplace_1 = None
        return (add_1,)
