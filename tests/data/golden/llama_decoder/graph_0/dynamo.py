class GraphModule(torch.nn.Module):
    def forward(self, L_tokens_: "i64[1, 8]", L_self_buffers_cos_table_: "f32[16, 16]", L_self_buffers_sin_table_: "f32[16, 16]", L_self_modules_embed_parameters_weight_: "f32[128, 64]", L_self_modules_layers_modules_0_modules_input_norm_parameters_weight_: "f32[64]", L_self_modules_layers_modules_0_modules_attn_modules_q_proj_parameters_weight_: "f32[64, 64]", L_self_modules_layers_modules_0_modules_attn_modules_k_proj_parameters_weight_: "f32[64, 64]", L_self_modules_layers_modules_0_modules_attn_modules_v_proj_parameters_weight_: "f32[64, 64]", L_self_modules_layers_modules_0_modules_attn_buffers_k_cache_: "f32[1, 4, 16, 16]", L_self_modules_layers_modules_0_modules_attn_buffers_v_cache_: "f32[1, 4, 16, 16]", L_self_modules_layers_modules_0_modules_attn_modules_o_proj_parameters_weight_: "f32[64, 64]", L_self_modules_layers_modules_0_modules_post_norm_parameters_weight_: "f32[64]", L_self_modules_layers_modules_0_modules_mlp_modules_gate_proj_parameters_weight_: "f32[128, 64]", L_self_modules_layers_modules_0_modules_mlp_modules_up_proj_parameters_weight_: "f32[128, 64]", L_self_modules_layers_modules_0_modules_mlp_modules_down_proj_parameters_weight_: "f32[64, 128]", L_self_modules_layers_modules_1_modules_input_norm_parameters_weight_: "f32[64]", L_self_modules_layers_modules_1_modules_attn_modules_q_proj_parameters_weight_: "f32[64, 64]", L_self_modules_layers_modules_1_modules_attn_modules_k_proj_parameters_weight_: "f32[64, 64]", L_self_modules_layers_modules_1_modules_attn_modules_v_proj_parameters_weight_: "f32[64, 64]", L_self_modules_layers_modules_1_modules_attn_buffers_k_cache_: "f32[1, 4, 16, 16]", L_self_modules_layers_modules_1_modules_attn_buffers_v_cache_: "f32[1, 4, 16, 16]", L_self_modules_layers_modules_1_modules_attn_modules_o_proj_parameters_weight_: "f32[64, 64]", L_self_modules_layers_modules_1_modules_post_norm_parameters_weight_: "f32[64]", L_self_modules_layers_modules_1_modules_mlp_modules_gate_proj_parameters_weight_: "f32[128, 64]", L_self_modules_layers_modules_1_modules_mlp_modules_up_proj_parameters_weight_: "f32[128, 64]", L_self_modules_layers_modules_1_modules_mlp_modules_down_proj_parameters_weight_: "f32[64, 128]", L_self_modules_norm_parameters_weight_: "f32[64]", L_self_modules_lm_head_parameters_weight_: "f32[128, 64]"):
        l_tokens_ = L_tokens_
        l_self_buffers_cos_table_ = L_self_buffers_cos_table_
        l_self_buffers_sin_table_ = L_self_buffers_sin_table_
        l_self_modules_embed_parameters_weight_ = L_self_modules_embed_parameters_weight_
        l_self_modules_layers_modules_0_modules_input_norm_parameters_weight_ = L_self_modules_layers_modules_0_modules_input_norm_parameters_weight_
        l_self_modules_layers_modules_0_modules_attn_modules_q_proj_parameters_weight_ = L_self_modules_layers_modules_0_modules_attn_modules_q_proj_parameters_weight_
        l_self_modules_layers_modules_0_modules_attn_modules_k_proj_parameters_weight_ = L_self_modules_layers_modules_0_modules_attn_modules_k_proj_parameters_weight_
        l_self_modules_layers_modules_0_modules_attn_modules_v_proj_parameters_weight_ = L_self_modules_layers_modules_0_modules_attn_modules_v_proj_parameters_weight_
        l_self_modules_layers_modules_0_modules_attn_buffers_k_cache_ = L_self_modules_layers_modules_0_modules_attn_buffers_k_cache_
        l_self_modules_layers_modules_0_modules_attn_buffers_v_cache_ = L_self_modules_layers_modules_0_modules_attn_buffers_v_cache_
        l_self_modules_layers_modules_0_modules_attn_modules_o_proj_parameters_weight_ = L_self_modules_layers_modules_0_modules_attn_modules_o_proj_parameters_weight_
        l_self_modules_layers_modules_0_modules_post_norm_parameters_weight_ = L_self_modules_layers_modules_0_modules_post_norm_parameters_weight_
        l_self_modules_layers_modules_0_modules_mlp_modules_gate_proj_parameters_weight_ = L_self_modules_layers_modules_0_modules_mlp_modules_gate_proj_parameters_weight_
        l_self_modules_layers_modules_0_modules_mlp_modules_up_proj_parameters_weight_ = L_self_modules_layers_modules_0_modules_mlp_modules_up_proj_parameters_weight_
        l_self_modules_layers_modules_0_modules_mlp_modules_down_proj_parameters_weight_ = L_self_modules_layers_modules_0_modules_mlp_modules_down_proj_parameters_weight_
        l_self_modules_layers_modules_1_modules_input_norm_parameters_weight_ = L_self_modules_layers_modules_1_modules_input_norm_parameters_weight_
        l_self_modules_layers_modules_1_modules_attn_modules_q_proj_parameters_weight_ = L_self_modules_layers_modules_1_modules_attn_modules_q_proj_parameters_weight_
        l_self_modules_layers_modules_1_modules_attn_modules_k_proj_parameters_weight_ = L_self_modules_layers_modules_1_modules_attn_modules_k_proj_parameters_weight_
        l_self_modules_layers_modules_1_modules_attn_modules_v_proj_parameters_weight_ = L_self_modules_layers_modules_1_modules_attn_modules_v_proj_parameters_weight_
        l_self_modules_layers_modules_1_modules_attn_buffers_k_cache_ = L_self_modules_layers_modules_1_modules_attn_buffers_k_cache_
        l_self_modules_layers_modules_1_modules_attn_buffers_v_cache_ = L_self_modules_layers_modules_1_modules_attn_buffers_v_cache_
        l_self_modules_layers_modules_1_modules_attn_modules_o_proj_parameters_weight_ = L_self_modules_layers_modules_1_modules_attn_modules_o_proj_parameters_weight_
        l_self_modules_layers_modules_1_modules_post_norm_parameters_weight_ = L_self_modules_layers_modules_1_modules_post_norm_parameters_weight_
        l_self_modules_layers_modules_1_modules_mlp_modules_gate_proj_parameters_weight_ = L_self_modules_layers_modules_1_modules_mlp_modules_gate_proj_parameters_weight_
        l_self_modules_layers_modules_1_modules_mlp_modules_up_proj_parameters_weight_ = L_self_modules_layers_modules_1_modules_mlp_modules_up_proj_parameters_weight_
        l_self_modules_layers_modules_1_modules_mlp_modules_down_proj_parameters_weight_ = L_self_modules_layers_modules_1_modules_mlp_modules_down_proj_parameters_weight_
        l_self_modules_norm_parameters_weight_ = L_self_modules_norm_parameters_weight_
        l_self_modules_lm_head_parameters_weight_ = L_self_modules_lm_head_parameters_weight_

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:101 in forward, code: cos, sin = self.cos_table[:seq], self.sin_table[:seq]
        cos: "f32[8, 16]" = l_self_buffers_cos_table_[slice(None, 8, None)];  l_self_buffers_cos_table_ = None
        sin: "f32[8, 16]" = l_self_buffers_sin_table_[slice(None, 8, None)];  l_self_buffers_sin_table_ = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:102 in forward, code: h = self.embed(tokens)
        h: "f32[1, 8, 64]" = torch.nn.functional.embedding(l_tokens_, l_self_modules_embed_parameters_weight_, None, None, 2.0, False, False);  l_tokens_ = l_self_modules_embed_parameters_weight_ = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:21 in forward, code: variance = x.pow(2).mean(-1, keepdim=True)
        pow_1: "f32[1, 8, 64]" = h.pow(2)
        variance: "f32[1, 8, 1]" = pow_1.mean(-1, keepdim = True);  pow_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:22 in forward, code: return x * torch.rsqrt(variance + self.eps) * self.weight
        add: "f32[1, 8, 1]" = variance + 1e-06;  variance = None
        rsqrt: "f32[1, 8, 1]" = torch.rsqrt(add);  add = None
        mul: "f32[1, 8, 64]" = h * rsqrt;  rsqrt = None
        mul_1: "f32[1, 8, 64]" = mul * l_self_modules_layers_modules_0_modules_input_norm_parameters_weight_;  mul = l_self_modules_layers_modules_0_modules_input_norm_parameters_weight_ = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:47 in forward, code: q = self.q_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)
        linear: "f32[1, 8, 64]" = torch._C._nn.linear(mul_1, l_self_modules_layers_modules_0_modules_attn_modules_q_proj_parameters_weight_, None);  l_self_modules_layers_modules_0_modules_attn_modules_q_proj_parameters_weight_ = None
        view: "f32[1, 8, 4, 16]" = linear.view(1, 8, 4, 16);  linear = None
        q: "f32[1, 4, 8, 16]" = view.transpose(1, 2);  view = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:48 in forward, code: k = self.k_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)
        linear_1: "f32[1, 8, 64]" = torch._C._nn.linear(mul_1, l_self_modules_layers_modules_0_modules_attn_modules_k_proj_parameters_weight_, None);  l_self_modules_layers_modules_0_modules_attn_modules_k_proj_parameters_weight_ = None
        view_1: "f32[1, 8, 4, 16]" = linear_1.view(1, 8, 4, 16);  linear_1 = None
        k: "f32[1, 4, 8, 16]" = view_1.transpose(1, 2);  view_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:49 in forward, code: v = self.v_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)
        linear_2: "f32[1, 8, 64]" = torch._C._nn.linear(mul_1, l_self_modules_layers_modules_0_modules_attn_modules_v_proj_parameters_weight_, None);  mul_1 = l_self_modules_layers_modules_0_modules_attn_modules_v_proj_parameters_weight_ = None
        view_2: "f32[1, 8, 4, 16]" = linear_2.view(1, 8, 4, 16);  linear_2 = None
        v: "f32[1, 4, 8, 16]" = view_2.transpose(1, 2);  view_2 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:31 in apply_rotary, code: return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        mul_2: "f32[1, 4, 8, 16]" = q * cos

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:26 in rotate_half, code: x1, x2 = x.chunk(2, dim=-1)
        chunk = q.chunk(2, dim = -1);  q = None
        x1: "f32[1, 4, 8, 8]" = chunk[0]
        x2: "f32[1, 4, 8, 8]" = chunk[1];  chunk = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:27 in rotate_half, code: return torch.cat((-x2, x1), dim=-1)
        neg: "f32[1, 4, 8, 8]" = -x2;  x2 = None
        cat: "f32[1, 4, 8, 16]" = torch.cat((neg, x1), dim = -1);  neg = x1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:31 in apply_rotary, code: return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        mul_3: "f32[1, 4, 8, 16]" = cat * sin;  cat = None
        q_1: "f32[1, 4, 8, 16]" = mul_2 + mul_3;  mul_2 = mul_3 = None
        mul_4: "f32[1, 4, 8, 16]" = k * cos

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:26 in rotate_half, code: x1, x2 = x.chunk(2, dim=-1)
        chunk_1 = k.chunk(2, dim = -1);  k = None
        x1_1: "f32[1, 4, 8, 8]" = chunk_1[0]
        x2_1: "f32[1, 4, 8, 8]" = chunk_1[1];  chunk_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:27 in rotate_half, code: return torch.cat((-x2, x1), dim=-1)
        neg_1: "f32[1, 4, 8, 8]" = -x2_1;  x2_1 = None
        cat_1: "f32[1, 4, 8, 16]" = torch.cat((neg_1, x1_1), dim = -1);  neg_1 = x1_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:31 in apply_rotary, code: return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        mul_5: "f32[1, 4, 8, 16]" = cat_1 * sin;  cat_1 = None
        k_1: "f32[1, 4, 8, 16]" = mul_4 + mul_5;  mul_4 = mul_5 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:51 in forward, code: self.k_cache[:, :, :seq] = k  # KV cache written in place
        l_self_modules_layers_modules_0_modules_attn_buffers_k_cache_[(slice(None, None, None), slice(None, None, None), slice(None, 8, None))] = k_1;  setitem = l_self_modules_layers_modules_0_modules_attn_buffers_k_cache_;  k_1 = setitem = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:52 in forward, code: self.v_cache[:, :, :seq] = v
        l_self_modules_layers_modules_0_modules_attn_buffers_v_cache_[(slice(None, None, None), slice(None, None, None), slice(None, 8, None))] = v;  setitem_1 = l_self_modules_layers_modules_0_modules_attn_buffers_v_cache_;  v = setitem_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:53 in forward, code: keys, values = self.k_cache[:, :, :seq], self.v_cache[:, :, :seq]
        keys: "f32[1, 4, 8, 16]" = l_self_modules_layers_modules_0_modules_attn_buffers_k_cache_[(slice(None, None, None), slice(None, None, None), slice(None, 8, None))];  l_self_modules_layers_modules_0_modules_attn_buffers_k_cache_ = None
        values: "f32[1, 4, 8, 16]" = l_self_modules_layers_modules_0_modules_attn_buffers_v_cache_[(slice(None, None, None), slice(None, None, None), slice(None, 8, None))];  l_self_modules_layers_modules_0_modules_attn_buffers_v_cache_ = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:54 in forward, code: scores = torch.matmul(q, keys.transpose(2, 3)) / (self.head_dim**0.5)
        transpose_3: "f32[1, 4, 16, 8]" = keys.transpose(2, 3);  keys = None
        matmul: "f32[1, 4, 8, 8]" = torch.matmul(q_1, transpose_3);  transpose_3 = None
        scores: "f32[1, 4, 8, 8]" = matmul / 4.0;  matmul = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:55 in forward, code: scores = scores + torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)
        full: "f32[8, 8]" = torch.full((8, 8), -inf)
        triu: "f32[8, 8]" = torch.triu(full, diagonal = 1);  full = None
        scores_1: "f32[1, 4, 8, 8]" = scores + triu;  scores = triu = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:56 in forward, code: attn = torch.softmax(scores.float(), dim=-1).type_as(q)
        float_1: "f32[1, 4, 8, 8]" = scores_1.float();  scores_1 = None
        softmax: "f32[1, 4, 8, 8]" = torch.softmax(float_1, dim = -1);  float_1 = None
        attn: "f32[1, 4, 8, 8]" = softmax.type_as(q_1);  softmax = q_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:57 in forward, code: out = torch.matmul(attn, values).transpose(1, 2).reshape(batch, seq, dim)
        matmul_1: "f32[1, 4, 8, 16]" = torch.matmul(attn, values);  attn = values = None
        transpose_4: "f32[1, 8, 4, 16]" = matmul_1.transpose(1, 2);  matmul_1 = None
        out: "f32[1, 8, 64]" = transpose_4.reshape(1, 8, 64);  transpose_4 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:58 in forward, code: return self.o_proj(out)
        linear_3: "f32[1, 8, 64]" = torch._C._nn.linear(out, l_self_modules_layers_modules_0_modules_attn_modules_o_proj_parameters_weight_, None);  out = l_self_modules_layers_modules_0_modules_attn_modules_o_proj_parameters_weight_ = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:81 in forward, code: x = x + self.attn(self.input_norm(x), cos, sin)
        x: "f32[1, 8, 64]" = h + linear_3;  h = linear_3 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:21 in forward, code: variance = x.pow(2).mean(-1, keepdim=True)
        pow_2: "f32[1, 8, 64]" = x.pow(2)
        variance_1: "f32[1, 8, 1]" = pow_2.mean(-1, keepdim = True);  pow_2 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:22 in forward, code: return x * torch.rsqrt(variance + self.eps) * self.weight
        add_5: "f32[1, 8, 1]" = variance_1 + 1e-06;  variance_1 = None
        rsqrt_1: "f32[1, 8, 1]" = torch.rsqrt(add_5);  add_5 = None
        mul_6: "f32[1, 8, 64]" = x * rsqrt_1;  rsqrt_1 = None
        mul_7: "f32[1, 8, 64]" = mul_6 * l_self_modules_layers_modules_0_modules_post_norm_parameters_weight_;  mul_6 = l_self_modules_layers_modules_0_modules_post_norm_parameters_weight_ = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:69 in forward, code: return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))
        linear_4: "f32[1, 8, 128]" = torch._C._nn.linear(mul_7, l_self_modules_layers_modules_0_modules_mlp_modules_gate_proj_parameters_weight_, None);  l_self_modules_layers_modules_0_modules_mlp_modules_gate_proj_parameters_weight_ = None
        silu: "f32[1, 8, 128]" = torch.nn.functional.silu(linear_4);  linear_4 = None
        linear_5: "f32[1, 8, 128]" = torch._C._nn.linear(mul_7, l_self_modules_layers_modules_0_modules_mlp_modules_up_proj_parameters_weight_, None);  mul_7 = l_self_modules_layers_modules_0_modules_mlp_modules_up_proj_parameters_weight_ = None
        mul_8: "f32[1, 8, 128]" = silu * linear_5;  silu = linear_5 = None
        linear_6: "f32[1, 8, 64]" = torch._C._nn.linear(mul_8, l_self_modules_layers_modules_0_modules_mlp_modules_down_proj_parameters_weight_, None);  mul_8 = l_self_modules_layers_modules_0_modules_mlp_modules_down_proj_parameters_weight_ = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:82 in forward, code: return x + self.mlp(self.post_norm(x))
        h_1: "f32[1, 8, 64]" = x + linear_6;  x = linear_6 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:21 in forward, code: variance = x.pow(2).mean(-1, keepdim=True)
        pow_3: "f32[1, 8, 64]" = h_1.pow(2)
        variance_2: "f32[1, 8, 1]" = pow_3.mean(-1, keepdim = True);  pow_3 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:22 in forward, code: return x * torch.rsqrt(variance + self.eps) * self.weight
        add_7: "f32[1, 8, 1]" = variance_2 + 1e-06;  variance_2 = None
        rsqrt_2: "f32[1, 8, 1]" = torch.rsqrt(add_7);  add_7 = None
        mul_9: "f32[1, 8, 64]" = h_1 * rsqrt_2;  rsqrt_2 = None
        mul_10: "f32[1, 8, 64]" = mul_9 * l_self_modules_layers_modules_1_modules_input_norm_parameters_weight_;  mul_9 = l_self_modules_layers_modules_1_modules_input_norm_parameters_weight_ = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:47 in forward, code: q = self.q_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)
        linear_7: "f32[1, 8, 64]" = torch._C._nn.linear(mul_10, l_self_modules_layers_modules_1_modules_attn_modules_q_proj_parameters_weight_, None);  l_self_modules_layers_modules_1_modules_attn_modules_q_proj_parameters_weight_ = None
        view_3: "f32[1, 8, 4, 16]" = linear_7.view(1, 8, 4, 16);  linear_7 = None
        q_2: "f32[1, 4, 8, 16]" = view_3.transpose(1, 2);  view_3 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:48 in forward, code: k = self.k_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)
        linear_8: "f32[1, 8, 64]" = torch._C._nn.linear(mul_10, l_self_modules_layers_modules_1_modules_attn_modules_k_proj_parameters_weight_, None);  l_self_modules_layers_modules_1_modules_attn_modules_k_proj_parameters_weight_ = None
        view_4: "f32[1, 8, 4, 16]" = linear_8.view(1, 8, 4, 16);  linear_8 = None
        k_2: "f32[1, 4, 8, 16]" = view_4.transpose(1, 2);  view_4 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:49 in forward, code: v = self.v_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)
        linear_9: "f32[1, 8, 64]" = torch._C._nn.linear(mul_10, l_self_modules_layers_modules_1_modules_attn_modules_v_proj_parameters_weight_, None);  mul_10 = l_self_modules_layers_modules_1_modules_attn_modules_v_proj_parameters_weight_ = None
        view_5: "f32[1, 8, 4, 16]" = linear_9.view(1, 8, 4, 16);  linear_9 = None
        v_1: "f32[1, 4, 8, 16]" = view_5.transpose(1, 2);  view_5 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:31 in apply_rotary, code: return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        mul_11: "f32[1, 4, 8, 16]" = q_2 * cos

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:26 in rotate_half, code: x1, x2 = x.chunk(2, dim=-1)
        chunk_2 = q_2.chunk(2, dim = -1);  q_2 = None
        x1_2: "f32[1, 4, 8, 8]" = chunk_2[0]
        x2_2: "f32[1, 4, 8, 8]" = chunk_2[1];  chunk_2 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:27 in rotate_half, code: return torch.cat((-x2, x1), dim=-1)
        neg_2: "f32[1, 4, 8, 8]" = -x2_2;  x2_2 = None
        cat_2: "f32[1, 4, 8, 16]" = torch.cat((neg_2, x1_2), dim = -1);  neg_2 = x1_2 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:31 in apply_rotary, code: return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        mul_12: "f32[1, 4, 8, 16]" = cat_2 * sin;  cat_2 = None
        q_3: "f32[1, 4, 8, 16]" = mul_11 + mul_12;  mul_11 = mul_12 = None
        mul_13: "f32[1, 4, 8, 16]" = k_2 * cos;  cos = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:26 in rotate_half, code: x1, x2 = x.chunk(2, dim=-1)
        chunk_3 = k_2.chunk(2, dim = -1);  k_2 = None
        x1_3: "f32[1, 4, 8, 8]" = chunk_3[0]
        x2_3: "f32[1, 4, 8, 8]" = chunk_3[1];  chunk_3 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:27 in rotate_half, code: return torch.cat((-x2, x1), dim=-1)
        neg_3: "f32[1, 4, 8, 8]" = -x2_3;  x2_3 = None
        cat_3: "f32[1, 4, 8, 16]" = torch.cat((neg_3, x1_3), dim = -1);  neg_3 = x1_3 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:31 in apply_rotary, code: return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        mul_14: "f32[1, 4, 8, 16]" = cat_3 * sin;  cat_3 = sin = None
        k_3: "f32[1, 4, 8, 16]" = mul_13 + mul_14;  mul_13 = mul_14 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:51 in forward, code: self.k_cache[:, :, :seq] = k  # KV cache written in place
        l_self_modules_layers_modules_1_modules_attn_buffers_k_cache_[(slice(None, None, None), slice(None, None, None), slice(None, 8, None))] = k_3;  setitem_2 = l_self_modules_layers_modules_1_modules_attn_buffers_k_cache_;  k_3 = setitem_2 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:52 in forward, code: self.v_cache[:, :, :seq] = v
        l_self_modules_layers_modules_1_modules_attn_buffers_v_cache_[(slice(None, None, None), slice(None, None, None), slice(None, 8, None))] = v_1;  setitem_3 = l_self_modules_layers_modules_1_modules_attn_buffers_v_cache_;  v_1 = setitem_3 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:53 in forward, code: keys, values = self.k_cache[:, :, :seq], self.v_cache[:, :, :seq]
        keys_1: "f32[1, 4, 8, 16]" = l_self_modules_layers_modules_1_modules_attn_buffers_k_cache_[(slice(None, None, None), slice(None, None, None), slice(None, 8, None))];  l_self_modules_layers_modules_1_modules_attn_buffers_k_cache_ = None
        values_1: "f32[1, 4, 8, 16]" = l_self_modules_layers_modules_1_modules_attn_buffers_v_cache_[(slice(None, None, None), slice(None, None, None), slice(None, 8, None))];  l_self_modules_layers_modules_1_modules_attn_buffers_v_cache_ = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:54 in forward, code: scores = torch.matmul(q, keys.transpose(2, 3)) / (self.head_dim**0.5)
        transpose_8: "f32[1, 4, 16, 8]" = keys_1.transpose(2, 3);  keys_1 = None
        matmul_2: "f32[1, 4, 8, 8]" = torch.matmul(q_3, transpose_8);  transpose_8 = None
        scores_2: "f32[1, 4, 8, 8]" = matmul_2 / 4.0;  matmul_2 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:55 in forward, code: scores = scores + torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)
        full_1: "f32[8, 8]" = torch.full((8, 8), -inf)
        triu_1: "f32[8, 8]" = torch.triu(full_1, diagonal = 1);  full_1 = None
        scores_3: "f32[1, 4, 8, 8]" = scores_2 + triu_1;  scores_2 = triu_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:56 in forward, code: attn = torch.softmax(scores.float(), dim=-1).type_as(q)
        float_2: "f32[1, 4, 8, 8]" = scores_3.float();  scores_3 = None
        softmax_1: "f32[1, 4, 8, 8]" = torch.softmax(float_2, dim = -1);  float_2 = None
        attn_1: "f32[1, 4, 8, 8]" = softmax_1.type_as(q_3);  softmax_1 = q_3 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:57 in forward, code: out = torch.matmul(attn, values).transpose(1, 2).reshape(batch, seq, dim)
        matmul_3: "f32[1, 4, 8, 16]" = torch.matmul(attn_1, values_1);  attn_1 = values_1 = None
        transpose_9: "f32[1, 8, 4, 16]" = matmul_3.transpose(1, 2);  matmul_3 = None
        out_1: "f32[1, 8, 64]" = transpose_9.reshape(1, 8, 64);  transpose_9 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:58 in forward, code: return self.o_proj(out)
        linear_10: "f32[1, 8, 64]" = torch._C._nn.linear(out_1, l_self_modules_layers_modules_1_modules_attn_modules_o_proj_parameters_weight_, None);  out_1 = l_self_modules_layers_modules_1_modules_attn_modules_o_proj_parameters_weight_ = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:81 in forward, code: x = x + self.attn(self.input_norm(x), cos, sin)
        x_1: "f32[1, 8, 64]" = h_1 + linear_10;  h_1 = linear_10 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:21 in forward, code: variance = x.pow(2).mean(-1, keepdim=True)
        pow_4: "f32[1, 8, 64]" = x_1.pow(2)
        variance_3: "f32[1, 8, 1]" = pow_4.mean(-1, keepdim = True);  pow_4 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:22 in forward, code: return x * torch.rsqrt(variance + self.eps) * self.weight
        add_12: "f32[1, 8, 1]" = variance_3 + 1e-06;  variance_3 = None
        rsqrt_3: "f32[1, 8, 1]" = torch.rsqrt(add_12);  add_12 = None
        mul_15: "f32[1, 8, 64]" = x_1 * rsqrt_3;  rsqrt_3 = None
        mul_16: "f32[1, 8, 64]" = mul_15 * l_self_modules_layers_modules_1_modules_post_norm_parameters_weight_;  mul_15 = l_self_modules_layers_modules_1_modules_post_norm_parameters_weight_ = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:69 in forward, code: return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))
        linear_11: "f32[1, 8, 128]" = torch._C._nn.linear(mul_16, l_self_modules_layers_modules_1_modules_mlp_modules_gate_proj_parameters_weight_, None);  l_self_modules_layers_modules_1_modules_mlp_modules_gate_proj_parameters_weight_ = None
        silu_1: "f32[1, 8, 128]" = torch.nn.functional.silu(linear_11);  linear_11 = None
        linear_12: "f32[1, 8, 128]" = torch._C._nn.linear(mul_16, l_self_modules_layers_modules_1_modules_mlp_modules_up_proj_parameters_weight_, None);  mul_16 = l_self_modules_layers_modules_1_modules_mlp_modules_up_proj_parameters_weight_ = None
        mul_17: "f32[1, 8, 128]" = silu_1 * linear_12;  silu_1 = linear_12 = None
        linear_13: "f32[1, 8, 64]" = torch._C._nn.linear(mul_17, l_self_modules_layers_modules_1_modules_mlp_modules_down_proj_parameters_weight_, None);  mul_17 = l_self_modules_layers_modules_1_modules_mlp_modules_down_proj_parameters_weight_ = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:82 in forward, code: return x + self.mlp(self.post_norm(x))
        h_2: "f32[1, 8, 64]" = x_1 + linear_13;  x_1 = linear_13 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:21 in forward, code: variance = x.pow(2).mean(-1, keepdim=True)
        pow_5: "f32[1, 8, 64]" = h_2.pow(2)
        variance_4: "f32[1, 8, 1]" = pow_5.mean(-1, keepdim = True);  pow_5 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:22 in forward, code: return x * torch.rsqrt(variance + self.eps) * self.weight
        add_14: "f32[1, 8, 1]" = variance_4 + 1e-06;  variance_4 = None
        rsqrt_4: "f32[1, 8, 1]" = torch.rsqrt(add_14);  add_14 = None
        mul_18: "f32[1, 8, 64]" = h_2 * rsqrt_4;  h_2 = rsqrt_4 = None
        mul_19: "f32[1, 8, 64]" = mul_18 * l_self_modules_norm_parameters_weight_;  mul_18 = l_self_modules_norm_parameters_weight_ = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:105 in forward, code: return self.lm_head(self.norm(h))
        linear_14: "f32[1, 8, 128]" = torch._C._nn.linear(mul_19, l_self_modules_lm_head_parameters_weight_, None);  mul_19 = l_self_modules_lm_head_parameters_weight_ = None
        return (linear_14,)
