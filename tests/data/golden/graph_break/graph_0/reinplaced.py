class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[16, 16]", arg1_1: "f32[16]", arg2_1: "f32[3, 16]"):
        # File: /tmp/fxlab-golden/examples/graph_break.py:18 in forward, code: h = torch.relu(self.fc1(x))
        t: "f32[16, 16]" = torch.ops.aten.t.default(arg0_1);  arg0_1 = None
        addmm: "f32[3, 16]" = torch.ops.aten.addmm.default(arg1_1, arg2_1, t);  arg1_1 = arg2_1 = t = None
        relu: "f32[3, 16]" = torch.ops.aten.relu.default(addmm);  addmm = None

        # File: /tmp/fxlab-golden/examples/graph_break.py:19 in forward, code: scale = h.abs().max().item()  # graph break: data-dependent Python value
        abs_1: "f32[3, 16]" = torch.ops.aten.abs.default(relu)
        max_1: "f32[]" = torch.ops.aten.max.default(abs_1);  abs_1 = None
        return (max_1, relu)
