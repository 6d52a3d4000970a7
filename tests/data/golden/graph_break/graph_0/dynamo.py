class GraphModule(torch.nn.Module):
    def forward(self, L_self_modules_fc1_parameters_weight_: "f32[16, 16]", L_self_modules_fc1_parameters_bias_: "f32[16]", L_x_: "f32[3, 16]"):
        l_self_modules_fc1_parameters_weight_ = L_self_modules_fc1_parameters_weight_
        l_self_modules_fc1_parameters_bias_ = L_self_modules_fc1_parameters_bias_
        l_x_ = L_x_

        # File: /tmp/fxlab-golden/examples/graph_break.py:18 in forward, code: h = torch.relu(self.fc1(x))
        linear: "f32[3, 16]" = torch._C._nn.linear(l_x_, l_self_modules_fc1_parameters_weight_, l_self_modules_fc1_parameters_bias_);  l_x_ = l_self_modules_fc1_parameters_weight_ = l_self_modules_fc1_parameters_bias_ = None
        h: "f32[3, 16]" = torch.relu(linear);  linear = None

        # File: /tmp/fxlab-golden/examples/graph_break.py:19 in forward, code: scale = h.abs().max().item()  # graph break: data-dependent Python value
        abs_1: "f32[3, 16]" = h.abs()
        max_1: "f32[]" = abs_1.max();  abs_1 = None
        return (max_1, h)
