class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[8, 8]", arg1_1: "f32[8]", arg2_1: "f32[2, 4, 8]", arg3_1: "f32[2, 6, 8]"):
        # File: /tmp/fxlab-golden/examples/inplace_ops.py:21 in forward, code: h = self.proj(x)
        view: "f32[8, 8]" = torch.ops.aten.view.default(arg2_1, [8, 8])
        t: "f32[8, 8]" = torch.ops.aten.t.default(arg0_1);  arg0_1 = None
        addmm: "f32[8, 8]" = torch.ops.aten.addmm.default(arg1_1, view, t);  arg1_1 = view = t = None
        view_1: "f32[2, 4, 8]" = torch.ops.aten.view.default(addmm, [2, 4, 8]);  addmm = None

        # File: /tmp/fxlab-golden/examples/inplace_ops.py:22 in forward, code: h.mul_(2)  # in place on an intermediate
        mul_: "f32[2, 4, 8]" = torch.ops.aten.mul_.Tensor(view_1, 2);  view_1 = None

        # File: /tmp/fxlab-golden/examples/inplace_ops.py:23 in forward, code: self.cache[:, :4] = h  # slice assignment into a cache buffer
        slice_1: "f32[2, 4, 8]" = torch.ops.aten.slice.Tensor(arg3_1, 1, 0, 4)
        copy_: "f32[2, 4, 8]" = torch.ops.aten.copy_.default(slice_1, mul_);  slice_1 = copy_ = None

        # File: /tmp/fxlab-golden/examples/inplace_ops.py:24 in forward, code: x.add_(1)  # in place on a graph input
        add_: "f32[2, 4, 8]" = torch.ops.aten.add_.Tensor(arg2_1, 1);  arg2_1 = add_ = None

        # File: /tmp/fxlab-golden/examples/inplace_ops.py:25 in forward, code: return h.sum(dim=-1) + self.cache.mean()
        sum_1: "f32[2, 4]" = torch.ops.aten.sum.dim_IntList(mul_, [-1]);  mul_ = None
        mean: "f32[]" = torch.ops.aten.mean.default(arg3_1);  arg3_1 = None
        add: "f32[2, 4]" = torch.ops.aten.add.Tensor(sum_1, mean);  sum_1 = mean = None
        return (add,)
