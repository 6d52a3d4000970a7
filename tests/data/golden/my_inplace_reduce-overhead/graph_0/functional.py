class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[2, 8]", arg1_1: "f32[2, 8]", arg2_1: "f32[4, 8]"):
        # File: /tmp/fxlab-golden/examples/my_inplace.py:23 in forward, code: h = x * 2
        mul: "f32[2, 8]" = torch.ops.aten.mul.Tensor(arg0_1, 2)

        # File: /tmp/fxlab-golden/examples/my_inplace.py:24 in forward, code: z = torch.ops.npu.my_inplace(h, y)  # on an intermediate
        auto_functionalized_v2 = torch.ops.higher_order.auto_functionalized_v2(torch.ops.npu.my_inplace.default, y = arg1_1, _x_base_index = 0, _all_bases = [mul]);  mul = None
        getitem: "f32[2, 8]" = auto_functionalized_v2[0]
        getitem_1: "f32[2, 8]" = auto_functionalized_v2[1];  auto_functionalized_v2 = None

        # File: /tmp/fxlab-golden/examples/my_inplace.py:25 in forward, code: w = torch.ops.npu.my_inplace(x, y)  # on a graph input
        auto_functionalized_v2_1 = torch.ops.higher_order.auto_functionalized_v2(torch.ops.npu.my_inplace.default, y = arg1_1, _x_base_index = 0, _all_bases = [arg0_1])
        getitem_2: "f32[2, 8]" = auto_functionalized_v2_1[0]
        getitem_3: "f32[2, 8]" = auto_functionalized_v2_1[1];  auto_functionalized_v2_1 = None

        # File: /tmp/fxlab-golden/examples/my_inplace.py:26 in forward, code: torch.ops.npu.my_inplace(self.state[:2], y)  # on a view of a buffer
        auto_functionalized_v2_2 = torch.ops.higher_order.auto_functionalized_v2(torch.ops.npu.my_inplace.default, y = arg1_1, _x_base_index = 0, _x_slice_dim = 0, _x_slice_start = 0, _x_slice_end = 2, _all_bases = [arg2_1]);  arg1_1 = None
        getitem_5: "f32[4, 8]" = auto_functionalized_v2_2[1];  auto_functionalized_v2_2 = None

        # File: /tmp/fxlab-golden/examples/my_inplace.py:27 in forward, code: return h + z + w
        add: "f32[2, 8]" = torch.ops.aten.add.Tensor(getitem_1, getitem);  getitem_1 = getitem = None
        add_1: "f32[2, 8]" = torch.ops.aten.add.Tensor(add, getitem_2);  add = getitem_2 = None

        # File: /tmp/fxlab-golden/examples/my_inplace.py:25 in forward, code: w = torch.ops.npu.my_inplace(x, y)  # on a graph input
        copy_: "f32[2, 8]" = torch.ops.aten.copy_.default(arg0_1, getitem_3);  arg0_1 = getitem_3 = copy_ = None

        # File: /tmp/fxlab-golden/examples/my_inplace.py:26 in forward, code: torch.ops.npu.my_inplace(self.state[:2], y)  # on a view of a buffer
        copy__1: "f32[4, 8]" = torch.ops.aten.copy_.default(arg2_1, getitem_5);  arg2_1 = getitem_5 = copy__1 = None
        return (add_1,)
