class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[3, 16]", arg1_1: "f32[4, 16]", arg2_1: "f32[4]"):
        # File: /tmp/fxlab-golden/examples/graph_break.py:20 in torch_dynamo_resume_in_forward_at_19, code: return self.fc2(h / (scale + 1.0))
        div: "f32[3, 16]" = torch.ops.aten.div.Tensor(arg0_1, 2.475034475326538);  arg0_1 = None
        t: "f32[16, 4]" = torch.ops.aten.t.default(arg1_1);  arg1_1 = None
        addmm: "f32[3, 4]" = torch.ops.aten.addmm.default(arg2_1, div, t);  arg2_1 = div = t = None
        return (addmm,)
