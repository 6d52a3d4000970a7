class GraphModule(torch.nn.Module):
    def forward(self, L_self_modules_proj_parameters_weight_: "f32[8, 8]", L_self_modules_proj_parameters_bias_: "f32[8]", L_x_: "f32[2, 4, 8]", L_self_buffers_cache_: "f32[2, 6, 8]"):
        l_self_modules_proj_parameters_weight_ = L_self_modules_proj_parameters_weight_
        l_self_modules_proj_parameters_bias_ = L_self_modules_proj_parameters_bias_
        l_x_ = L_x_
        l_self_buffers_cache_ = L_self_buffers_cache_

        # File: /tmp/fxlab-golden/examples/inplace_ops.py:21 in forward, code: h = self.proj(x)
        h: "f32[2, 4, 8]" = torch._C._nn.linear(l_x_, l_self_modules_proj_parameters_weight_, l_self_modules_proj_parameters_bias_);  l_self_modules_proj_parameters_weight_ = l_self_modules_proj_parameters_bias_ = None

        # File: /tmp/fxlab-golden/examples/inplace_ops.py:22 in forward, code: h.mul_(2)  # in place on an intermediate
        mul_: "f32[2, 4, 8]" = h.mul_(2);  mul_ = None

        # File: /tmp/fxlab-golden/examples/inplace_ops.py:23 in forward, code: self.cache[:, :4] = h  # slice assignment into a cache buffer
        l_self_buffers_cache_[(slice(None, None, None), slice(None, 4, None))] = h;  setitem = l_self_buffers_cache_;  setitem = None

        # File: /tmp/fxlab-golden/examples/inplace_ops.py:24 in forward, code: x.add_(1)  # in place on a graph input
        add_: "f32[2, 4, 8]" = l_x_.add_(1);  l_x_ = add_ = None

        # File: /tmp/fxlab-golden/examples/inplace_ops.py:25 in forward, code: return h.sum(dim=-1) + self.cache.mean()
        sum_1: "f32[2, 4]" = h.sum(dim = -1);  h = None
        mean: "f32[]" = l_self_buffers_cache_.mean();  l_self_buffers_cache_ = None
        add: "f32[2, 4]" = sum_1 + mean;  sum_1 = mean = None
        return (add,)
