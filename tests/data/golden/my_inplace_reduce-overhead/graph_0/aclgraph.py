class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[2, 8]", arg1_1: "f32[2, 8]", arg2_1: "f32[4, 8]"):
        # File: /tmp/fxlab-golden/examples/my_inplace.py:23 in forward, code: h = x * 2
        mul: "f32[2, 8]" = torch.ops.aten.mul.Tensor(arg0_1, 2)

        # File: /tmp/fxlab-golden/examples/my_inplace.py:24 in forward, code: z = torch.ops.npu.my_inplace(h, y)  # on an intermediate
        my_inplace_default_2: "f32[2, 8]" = torch.ops.npu.my_inplace.default(mul, arg1_1)

        # File: /tmp/fxlab-golden/examples/my_inplace.py:25 in forward, code: w = torch.ops.npu.my_inplace(x, y)  # on a graph input
        my_inplace_default_1: "f32[2, 8]" = torch.ops.npu.my_inplace.default(arg0_1, arg1_1)

        # File: /tmp/fxlab-golden/examples/my_inplace.py:26 in forward, code: torch.ops.npu.my_inplace(self.state[:2], y)  # on a view of a buffer
        slice_tensor: "f32[2, 8]" = torch.ops.aten.slice.Tensor(arg2_1, 0, 0, 2)
        my_inplace_default: "f32[2, 8]" = torch.ops.npu.my_inplace.default(slice_tensor, arg1_1);  slice_tensor = arg1_1 = my_inplace_default = None

        # File: /tmp/fxlab-golden/examples/my_inplace.py:27 in forward, code: return h + z + w
        add: "f32[2, 8]" = torch.ops.aten.add_.Tensor(mul, my_inplace_default_2);  my_inplace_default_2 = add = None
        add_1: "f32[2, 8]" = torch.ops.aten.add_.Tensor(mul, my_inplace_default_1);  my_inplace_default_1 = add_1 = None

        # File: /tmp/fxlab-golden/examples/my_inplace.py:25 in forward, code: w = torch.ops.npu.my_inplace(x, y)  # on a graph input
        copy_: "f32[2, 8]" = torch.ops.aten.copy_.default(arg0_1, arg0_1);  arg0_1 = copy_ = None

        # File: /tmp/fxlab-golden/examples/my_inplace.py:26 in forward, code: torch.ops.npu.my_inplace(self.state[:2], y)  # on a view of a buffer
        copy__1: "f32[4, 8]" = torch.ops.aten.copy_.default(arg2_1, arg2_1);  arg2_1 = copy__1 = None
        return (mul,)
