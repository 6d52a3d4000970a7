class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[8, 8]", arg1_1: "f32[8]", arg2_1: "f32[2, 4, 8]", arg3_1: "f32[2, 6, 8]"):
        # File: /tmp/fxlab-golden/examples/inplace_ops.py:21 in forward, code: h = self.proj(x)
        view: "f32[8, 8]" = torch.ops.aten.reshape.default(arg2_1, [8, 8])
        t: "f32[8, 8]" = torch.ops.aten.t.default(arg0_1);  arg0_1 = None
        addmm: "f32[8, 8]" = torch.ops.aten.addmm.default(arg1_1, view, t);  arg1_1 = view = t = None
        view_1: "f32[2, 4, 8]" = torch.ops.aten.reshape.default(addmm, [2, 4, 8]);  addmm = None

        # File: /tmp/fxlab-golden/examples/inplace_ops.py:22 in forward, code: h.mul_(2)  # in place on an intermediate
        mul: "f32[2, 4, 8]" = torch.ops.aten.mul_.Tensor(view_1, 2);  mul = None
        view_2: "f32[8, 8]" = torch.ops.aten.reshape.default(view_1, [8, 8]);  view_1 = None
        view_3: "f32[2, 4, 8]" = torch.ops.aten.reshape.default(view_2, [2, 4, 8]);  view_2 = None

        # File: /tmp/fxlab-golden/examples/inplace_ops.py:23 in forward, code: self.cache[:, :4] = h  # slice assignment into a cache buffer
        slice_1: "f32[2, 4, 8]" = torch.ops.aten.slice.Tensor(arg3_1, 1, 0, 4)
        copy: "f32[2, 4, 8]" = torch.ops.aten.copy.default(slice_1, view_3);  slice_1 = None
        slice_scatter: "f32[2, 6, 8]" = torch.ops.aten.slice_scatter.default(arg3_1, copy, 1, 0, 4);  copy = None

        # File: /tmp/fxlab-golden/examples/inplace_ops.py:24 in forward, code: x.add_(1)  # in place on a graph input
        add: "f32[2, 4, 8]" = torch.ops.aten.add_.Tensor(arg2_1, 1);  arg2_1 = add = None

        # File: /tmp/fxlab-golden/examples/inplace_ops.py:25 in forward, code: return h.sum(dim=-1) + self.cache.mean()
        sum_1: "f32[2, 4]" = torch.ops.aten.sum.dim_IntList(view_3, [-1]);  view_3 = None
        mean: "f32[]" = torch.ops.aten.mean.default(slice_scatter)
        add_1: "f32[2, 4]" = torch.ops.aten.add_.Tensor(sum_1, mean);  mean = add_1 = None

        # File: /tmp/fxlab-golden/examples/inplace_ops.py:23 in forward, code: self.cache[:, :4] = h  # slice assignment into a cache buffer
        copy__1: "f32[2, 6, 8]" = torch.ops.aten.copy_.default(arg3_1, slice_scatter);  arg3_1 = slice_scatter = copy__1 = None
        return (sum_1,)
