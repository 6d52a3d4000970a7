class GraphModule(torch.nn.Module):
    def forward(self, L_h_: "f32[3, 16]", L_self_modules_fc2_parameters_weight_: "f32[4, 16]", L_self_modules_fc2_parameters_bias_: "f32[4]"):
        l_h_ = L_h_
        l_self_modules_fc2_parameters_weight_ = L_self_modules_fc2_parameters_weight_
        l_self_modules_fc2_parameters_bias_ = L_self_modules_fc2_parameters_bias_

        # File: /tmp/fxlab-golden/examples/graph_break.py:20 in torch_dynamo_resume_in_forward_at_19, code: return self.fc2(h / (scale + 1.0))
        truediv: "f32[3, 16]" = l_h_ / 2.475034475326538;  l_h_ = None
        linear: "f32[3, 4]" = torch._C._nn.linear(truediv, l_self_modules_fc2_parameters_weight_, l_self_modules_fc2_parameters_bias_);  truediv = l_self_modules_fc2_parameters_weight_ = l_self_modules_fc2_parameters_bias_ = None
        return (linear,)
