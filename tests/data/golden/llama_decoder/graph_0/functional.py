class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "i64[1, 8]", arg1_1: "f32[16, 16]", arg2_1: "f32[16, 16]", arg3_1: "f32[128, 64]", arg4_1: "f32[64]", arg5_1: "f32[64, 64]", arg6_1: "f32[64, 64]", arg7_1: "f32[64, 64]", arg8_1: "f32[1, 4, 16, 16]", arg9_1: "f32[1, 4, 16, 16]", arg10_1: "f32[64, 64]", arg11_1: "f32[64]", arg12_1: "f32[128, 64]", arg13_1: "f32[128, 64]", arg14_1: "f32[64, 128]", arg15_1: "f32[64]", arg16_1: "f32[64, 64]", arg17_1: "f32[64, 64]", arg18_1: "f32[64, 64]", arg19_1: "f32[1, 4, 16, 16]", arg20_1: "f32[1, 4, 16, 16]", arg21_1: "f32[64, 64]", arg22_1: "f32[64]", arg23_1: "f32[128, 64]", arg24_1: "f32[128, 64]", arg25_1: "f32[64, 128]", arg26_1: "f32[64]", arg27_1: "f32[128, 64]"):
        # File: /tmp/fxlab-golden/examples/llama_decoder.py:101 in forward, code: cos, sin = self.cos_table[:seq], self.sin_table[:seq]
        slice_1: "f32[8, 16]" = torch.ops.aten.slice.Tensor(arg1_1, 0, 0, 8);  arg1_1 = None
        slice_2: "f32[8, 16]" = torch.ops.aten.slice.Tensor(arg2_1, 0, 0, 8);  arg2_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:102 in forward, code: h = self.embed(tokens)
        embedding: "f32[1, 8, 64]" = torch.ops.aten.embedding.default(arg3_1, arg0_1);  arg3_1 = arg0_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:21 in forward, code: variance = x.pow(2).mean(-1, keepdim=True)
        pow_1: "f32[1, 8, 64]" = torch.ops.aten.pow.Tensor_Scalar(embedding, 2)
        mean: "f32[1, 8, 1]" = torch.ops.aten.mean.dim(pow_1, [-1], True);  pow_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:22 in forward, code: return x * torch.rsqrt(variance + self.eps) * self.weight
        add: "f32[1, 8, 1]" = torch.ops.aten.add.Tensor(mean, 1e-06);  mean = None
        rsqrt: "f32[1, 8, 1]" = torch.ops.aten.rsqrt.default(add);  add = None
        mul: "f32[1, 8, 64]" = torch.ops.aten.mul.Tensor(embedding, rsqrt);  rsqrt = None
        mul_1: "f32[1, 8, 64]" = torch.ops.aten.mul.Tensor(mul, arg4_1);  mul = arg4_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:47 in forward, code: q = self.q_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)
        t: "f32[64, 64]" = torch.ops.aten.t.default(arg5_1);  arg5_1 = None
        view: "f32[8, 64]" = torch.ops.aten.view.default(mul_1, [8, 64])
        mm: "f32[8, 64]" = torch.ops.aten.mm.default(view, t);  view = t = None
        _unsafe_view: "f32[1, 8, 64]" = torch.ops.aten._unsafe_view.default(mm, [1, 8, 64]);  mm = None
        view_1: "f32[1, 8, 4, 16]" = torch.ops.aten.view.default(_unsafe_view, [1, 8, 4, 16]);  _unsafe_view = None
        transpose: "f32[1, 4, 8, 16]" = torch.ops.aten.transpose.int(view_1, 1, 2);  view_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:48 in forward, code: k = self.k_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)
        t_1: "f32[64, 64]" = torch.ops.aten.t.default(arg6_1);  arg6_1 = None
        view_2: "f32[8, 64]" = torch.ops.aten.view.default(mul_1, [8, 64])
        mm_1: "f32[8, 64]" = torch.ops.aten.mm.default(view_2, t_1);  view_2 = t_1 = None
        _unsafe_view_1: "f32[1, 8, 64]" = torch.ops.aten._unsafe_view.default(mm_1, [1, 8, 64]);  mm_1 = None
        view_3: "f32[1, 8, 4, 16]" = torch.ops.aten.view.default(_unsafe_view_1, [1, 8, 4, 16]);  _unsafe_view_1 = None
        transpose_1: "f32[1, 4, 8, 16]" = torch.ops.aten.transpose.int(view_3, 1, 2);  view_3 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:49 in forward, code: v = self.v_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)
        t_2: "f32[64, 64]" = torch.ops.aten.t.default(arg7_1);  arg7_1 = None
        view_4: "f32[8, 64]" = torch.ops.aten.view.default(mul_1, [8, 64]);  mul_1 = None
        mm_2: "f32[8, 64]" = torch.ops.aten.mm.default(view_4, t_2);  view_4 = t_2 = None
        _unsafe_view_2: "f32[1, 8, 64]" = torch.ops.aten._unsafe_view.default(mm_2, [1, 8, 64]);  mm_2 = None
        view_5: "f32[1, 8, 4, 16]" = torch.ops.aten.view.default(_unsafe_view_2, [1, 8, 4, 16]);  _unsafe_view_2 = None
        transpose_2: "f32[1, 4, 8, 16]" = torch.ops.aten.transpose.int(view_5, 1, 2);  view_5 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:31 in apply_rotary, code: return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        mul_2: "f32[1, 4, 8, 16]" = torch.ops.aten.mul.Tensor(transpose, slice_1)

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:26 in rotate_half, code: x1, x2 = x.chunk(2, dim=-1)
        split = torch.ops.aten.split.Tensor(transpose, 8, -1);  transpose = None
        getitem: "f32[1, 4, 8, 8]" = split[0]
        getitem_1: "f32[1, 4, 8, 8]" = split[1];  split = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:27 in rotate_half, code: return torch.cat((-x2, x1), dim=-1)
        neg: "f32[1, 4, 8, 8]" = torch.ops.aten.neg.default(getitem_1);  getitem_1 = None
        cat: "f32[1, 4, 8, 16]" = torch.ops.aten.cat.default([neg, getitem], -1);  neg = getitem = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:31 in apply_rotary, code: return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        mul_3: "f32[1, 4, 8, 16]" = torch.ops.aten.mul.Tensor(cat, slice_2);  cat = None
        add_1: "f32[1, 4, 8, 16]" = torch.ops.aten.add.Tensor(mul_2, mul_3);  mul_2 = mul_3 = None
        mul_4: "f32[1, 4, 8, 16]" = torch.ops.aten.mul.Tensor(transpose_1, slice_1)

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:26 in rotate_half, code: x1, x2 = x.chunk(2, dim=-1)
        split_1 = torch.ops.aten.split.Tensor(transpose_1, 8, -1);  transpose_1 = None
        getitem_2: "f32[1, 4, 8, 8]" = split_1[0]
        getitem_3: "f32[1, 4, 8, 8]" = split_1[1];  split_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:27 in rotate_half, code: return torch.cat((-x2, x1), dim=-1)
        neg_1: "f32[1, 4, 8, 8]" = torch.ops.aten.neg.default(getitem_3);  getitem_3 = None
        cat_1: "f32[1, 4, 8, 16]" = torch.ops.aten.cat.default([neg_1, getitem_2], -1);  neg_1 = getitem_2 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:31 in apply_rotary, code: return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        mul_5: "f32[1, 4, 8, 16]" = torch.ops.aten.mul.Tensor(cat_1, slice_2);  cat_1 = None
        add_2: "f32[1, 4, 8, 16]" = torch.ops.aten.add.Tensor(mul_4, mul_5);  mul_4 = mul_5 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:51 in forward, code: self.k_cache[:, :, :seq] = k  # KV cache written in place
        slice_3: "f32[1, 4, 8, 16]" = torch.ops.aten.slice.Tensor(arg8_1, 2, 0, 8)
        copy: "f32[1, 4, 8, 16]" = torch.ops.aten.copy.default(slice_3, add_2);  slice_3 = add_2 = None
        slice_scatter: "f32[1, 4, 16, 16]" = torch.ops.aten.slice_scatter.default(arg8_1, copy, 2, 0, 8);  copy = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:52 in forward, code: self.v_cache[:, :, :seq] = v
        slice_5: "f32[1, 4, 8, 16]" = torch.ops.aten.slice.Tensor(arg9_1, 2, 0, 8)
        copy_1: "f32[1, 4, 8, 16]" = torch.ops.aten.copy.default(slice_5, transpose_2);  slice_5 = transpose_2 = None
        slice_scatter_1: "f32[1, 4, 16, 16]" = torch.ops.aten.slice_scatter.default(arg9_1, copy_1, 2, 0, 8);  copy_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:54 in forward, code: scores = torch.matmul(q, keys.transpose(2, 3)) / (self.head_dim**0.5)
        expand: "f32[1, 4, 8, 16]" = torch.ops.aten.expand.default(add_1, [1, 4, 8, 16]);  add_1 = None
        view_6: "f32[4, 8, 16]" = torch.ops.aten.view.default(expand, [4, 8, 16]);  expand = None
        slice_12: "f32[1, 4, 8, 16]" = torch.ops.aten.slice.Tensor(slice_scatter, 2, 0, 8)
        transpose_6: "f32[1, 4, 16, 8]" = torch.ops.aten.transpose.int(slice_12, 2, 3);  slice_12 = None
        expand_3: "f32[1, 4, 16, 8]" = torch.ops.aten.expand.default(transpose_6, [1, 4, 16, 8]);  transpose_6 = None
        view_8: "f32[4, 16, 8]" = torch.ops.aten.view.default(expand_3, [4, 16, 8]);  expand_3 = None
        bmm: "f32[4, 8, 8]" = torch.ops.aten.bmm.default(view_6, view_8);  view_6 = view_8 = None
        view_9: "f32[1, 4, 8, 8]" = torch.ops.aten.view.default(bmm, [1, 4, 8, 8]);  bmm = None
        div: "f32[1, 4, 8, 8]" = torch.ops.aten.div.Tensor(view_9, 4.0);  view_9 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:55 in forward, code: scores = scores + torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)
        full: "f32[8, 8]" = torch.ops.aten.full.default([8, 8], -inf, device = device(type='cpu'), pin_memory = False)
        triu: "f32[8, 8]" = torch.ops.aten.triu.default(full, 1);  full = None
        add_3: "f32[1, 4, 8, 8]" = torch.ops.aten.add.Tensor(div, triu);  div = triu = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:56 in forward, code: attn = torch.softmax(scores.float(), dim=-1).type_as(q)
        _softmax: "f32[1, 4, 8, 8]" = torch.ops.aten._softmax.default(add_3, -1, False);  add_3 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:57 in forward, code: out = torch.matmul(attn, values).transpose(1, 2).reshape(batch, seq, dim)
        expand_4: "f32[1, 4, 8, 8]" = torch.ops.aten.expand.default(_softmax, [1, 4, 8, 8]);  _softmax = None
        view_10: "f32[4, 8, 8]" = torch.ops.aten.view.default(expand_4, [4, 8, 8]);  expand_4 = None
        slice_15: "f32[1, 4, 8, 16]" = torch.ops.aten.slice.Tensor(slice_scatter_1, 2, 0, 8)
        expand_7: "f32[1, 4, 8, 16]" = torch.ops.aten.expand.default(slice_15, [1, 4, 8, 16]);  slice_15 = None
        view_12: "f32[4, 8, 16]" = torch.ops.aten.view.default(expand_7, [4, 8, 16]);  expand_7 = None
        bmm_1: "f32[4, 8, 16]" = torch.ops.aten.bmm.default(view_10, view_12);  view_10 = view_12 = None
        view_13: "f32[1, 4, 8, 16]" = torch.ops.aten.view.default(bmm_1, [1, 4, 8, 16]);  bmm_1 = None
        transpose_7: "f32[1, 8, 4, 16]" = torch.ops.aten.transpose.int(view_13, 1, 2);  view_13 = None
        clone: "f32[1, 8, 4, 16]" = torch.ops.aten.clone.default(transpose_7, memory_format = torch.contiguous_format);  transpose_7 = None
        _unsafe_view_3: "f32[1, 8, 64]" = torch.ops.aten._unsafe_view.default(clone, [1, 8, 64]);  clone = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:58 in forward, code: return self.o_proj(out)
        t_3: "f32[64, 64]" = torch.ops.aten.t.default(arg10_1);  arg10_1 = None
        view_14: "f32[8, 64]" = torch.ops.aten.view.default(_unsafe_view_3, [8, 64]);  _unsafe_view_3 = None
        mm_3: "f32[8, 64]" = torch.ops.aten.mm.default(view_14, t_3);  view_14 = t_3 = None
        _unsafe_view_4: "f32[1, 8, 64]" = torch.ops.aten._unsafe_view.default(mm_3, [1, 8, 64]);  mm_3 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:81 in forward, code: x = x + self.attn(self.input_norm(x), cos, sin)
        add_4: "f32[1, 8, 64]" = torch.ops.aten.add.Tensor(embedding, _unsafe_view_4);  embedding = _unsafe_view_4 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:21 in forward, code: variance = x.pow(2).mean(-1, keepdim=True)
        pow_2: "f32[1, 8, 64]" = torch.ops.aten.pow.Tensor_Scalar(add_4, 2)
        mean_1: "f32[1, 8, 1]" = torch.ops.aten.mean.dim(pow_2, [-1], True);  pow_2 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:22 in forward, code: return x * torch.rsqrt(variance + self.eps) * self.weight
        add_5: "f32[1, 8, 1]" = torch.ops.aten.add.Tensor(mean_1, 1e-06);  mean_1 = None
        rsqrt_1: "f32[1, 8, 1]" = torch.ops.aten.rsqrt.default(add_5);  add_5 = None
        mul_6: "f32[1, 8, 64]" = torch.ops.aten.mul.Tensor(add_4, rsqrt_1);  rsqrt_1 = None
        mul_7: "f32[1, 8, 64]" = torch.ops.aten.mul.Tensor(mul_6, arg11_1);  mul_6 = arg11_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:69 in forward, code: return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))
        t_4: "f32[64, 128]" = torch.ops.aten.t.default(arg12_1);  arg12_1 = None
        view_15: "f32[8, 64]" = torch.ops.aten.view.default(mul_7, [8, 64])
        mm_4: "f32[8, 128]" = torch.ops.aten.mm.default(view_15, t_4);  view_15 = t_4 = None
        _unsafe_view_5: "f32[1, 8, 128]" = torch.ops.aten._unsafe_view.default(mm_4, [1, 8, 128]);  mm_4 = None
        silu: "f32[1, 8, 128]" = torch.ops.aten.silu.default(_unsafe_view_5);  _unsafe_view_5 = None
        t_5: "f32[64, 128]" = torch.ops.aten.t.default(arg13_1);  arg13_1 = None
        view_16: "f32[8, 64]" = torch.ops.aten.view.default(mul_7, [8, 64]);  mul_7 = None
        mm_5: "f32[8, 128]" = torch.ops.aten.mm.default(view_16, t_5);  view_16 = t_5 = None
        _unsafe_view_6: "f32[1, 8, 128]" = torch.ops.aten._unsafe_view.default(mm_5, [1, 8, 128]);  mm_5 = None
        mul_8: "f32[1, 8, 128]" = torch.ops.aten.mul.Tensor(silu, _unsafe_view_6);  silu = _unsafe_view_6 = None
        t_6: "f32[128, 64]" = torch.ops.aten.t.default(arg14_1);  arg14_1 = None
        view_17: "f32[8, 128]" = torch.ops.aten.view.default(mul_8, [8, 128]);  mul_8 = None
        mm_6: "f32[8, 64]" = torch.ops.aten.mm.default(view_17, t_6);  view_17 = t_6 = None
        _unsafe_view_7: "f32[1, 8, 64]" = torch.ops.aten._unsafe_view.default(mm_6, [1, 8, 64]);  mm_6 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:82 in forward, code: return x + self.mlp(self.post_norm(x))
        add_6: "f32[1, 8, 64]" = torch.ops.aten.add.Tensor(add_4, _unsafe_view_7);  add_4 = _unsafe_view_7 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:21 in forward, code: variance = x.pow(2).mean(-1, keepdim=True)
        pow_3: "f32[1, 8, 64]" = torch.ops.aten.pow.Tensor_Scalar(add_6, 2)
        mean_2: "f32[1, 8, 1]" = torch.ops.aten.mean.dim(pow_3, [-1], True);  pow_3 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:22 in forward, code: return x * torch.rsqrt(variance + self.eps) * self.weight
        add_7: "f32[1, 8, 1]" = torch.ops.aten.add.Tensor(mean_2, 1e-06);  mean_2 = None
        rsqrt_2: "f32[1, 8, 1]" = torch.ops.aten.rsqrt.default(add_7);  add_7 = None
        mul_9: "f32[1, 8, 64]" = torch.ops.aten.mul.Tensor(add_6, rsqrt_2);  rsqrt_2 = None
        mul_10: "f32[1, 8, 64]" = torch.ops.aten.mul.Tensor(mul_9, arg15_1);  mul_9 = arg15_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:47 in forward, code: q = self.q_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)
        t_7: "f32[64, 64]" = torch.ops.aten.t.default(arg16_1);  arg16_1 = None
        view_18: "f32[8, 64]" = torch.ops.aten.view.default(mul_10, [8, 64])
        mm_7: "f32[8, 64]" = torch.ops.aten.mm.default(view_18, t_7);  view_18 = t_7 = None
        _unsafe_view_8: "f32[1, 8, 64]" = torch.ops.aten._unsafe_view.default(mm_7, [1, 8, 64]);  mm_7 = None
        view_19: "f32[1, 8, 4, 16]" = torch.ops.aten.view.default(_unsafe_view_8, [1, 8, 4, 16]);  _unsafe_view_8 = None
        transpose_8: "f32[1, 4, 8, 16]" = torch.ops.aten.transpose.int(view_19, 1, 2);  view_19 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:48 in forward, code: k = self.k_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)
        t_8: "f32[64, 64]" = torch.ops.aten.t.default(arg17_1);  arg17_1 = None
        view_20: "f32[8, 64]" = torch.ops.aten.view.default(mul_10, [8, 64])
        mm_8: "f32[8, 64]" = torch.ops.aten.mm.default(view_20, t_8);  view_20 = t_8 = None
        _unsafe_view_9: "f32[1, 8, 64]" = torch.ops.aten._unsafe_view.default(mm_8, [1, 8, 64]);  mm_8 = None
        view_21: "f32[1, 8, 4, 16]" = torch.ops.aten.view.default(_unsafe_view_9, [1, 8, 4, 16]);  _unsafe_view_9 = None
        transpose_9: "f32[1, 4, 8, 16]" = torch.ops.aten.transpose.int(view_21, 1, 2);  view_21 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:49 in forward, code: v = self.v_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)
        t_9: "f32[64, 64]" = torch.ops.aten.t.default(arg18_1);  arg18_1 = None
        view_22: "f32[8, 64]" = torch.ops.aten.view.default(mul_10, [8, 64]);  mul_10 = None
        mm_9: "f32[8, 64]" = torch.ops.aten.mm.default(view_22, t_9);  view_22 = t_9 = None
        _unsafe_view_10: "f32[1, 8, 64]" = torch.ops.aten._unsafe_view.default(mm_9, [1, 8, 64]);  mm_9 = None
        view_23: "f32[1, 8, 4, 16]" = torch.ops.aten.view.default(_unsafe_view_10, [1, 8, 4, 16]);  _unsafe_view_10 = None
        transpose_10: "f32[1, 4, 8, 16]" = torch.ops.aten.transpose.int(view_23, 1, 2);  view_23 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:31 in apply_rotary, code: return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        mul_11: "f32[1, 4, 8, 16]" = torch.ops.aten.mul.Tensor(transpose_8, slice_1)

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:26 in rotate_half, code: x1, x2 = x.chunk(2, dim=-1)
        split_2 = torch.ops.aten.split.Tensor(transpose_8, 8, -1);  transpose_8 = None
        getitem_4: "f32[1, 4, 8, 8]" = split_2[0]
        getitem_5: "f32[1, 4, 8, 8]" = split_2[1];  split_2 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:27 in rotate_half, code: return torch.cat((-x2, x1), dim=-1)
        neg_2: "f32[1, 4, 8, 8]" = torch.ops.aten.neg.default(getitem_5);  getitem_5 = None
        cat_2: "f32[1, 4, 8, 16]" = torch.ops.aten.cat.default([neg_2, getitem_4], -1);  neg_2 = getitem_4 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:31 in apply_rotary, code: return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        mul_12: "f32[1, 4, 8, 16]" = torch.ops.aten.mul.Tensor(cat_2, slice_2);  cat_2 = None
        add_8: "f32[1, 4, 8, 16]" = torch.ops.aten.add.Tensor(mul_11, mul_12);  mul_11 = mul_12 = None
        mul_13: "f32[1, 4, 8, 16]" = torch.ops.aten.mul.Tensor(transpose_9, slice_1);  slice_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:26 in rotate_half, code: x1, x2 = x.chunk(2, dim=-1)
        split_3 = torch.ops.aten.split.Tensor(transpose_9, 8, -1);  transpose_9 = None
        getitem_6: "f32[1, 4, 8, 8]" = split_3[0]
        getitem_7: "f32[1, 4, 8, 8]" = split_3[1];  split_3 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:27 in rotate_half, code: return torch.cat((-x2, x1), dim=-1)
        neg_3: "f32[1, 4, 8, 8]" = torch.ops.aten.neg.default(getitem_7);  getitem_7 = None
        cat_3: "f32[1, 4, 8, 16]" = torch.ops.aten.cat.default([neg_3, getitem_6], -1);  neg_3 = getitem_6 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:31 in apply_rotary, code: return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        mul_14: "f32[1, 4, 8, 16]" = torch.ops.aten.mul.Tensor(cat_3, slice_2);  cat_3 = slice_2 = None
        add_9: "f32[1, 4, 8, 16]" = torch.ops.aten.add.Tensor(mul_13, mul_14);  mul_13 = mul_14 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:51 in forward, code: self.k_cache[:, :, :seq] = k  # KV cache written in place
        slice_16: "f32[1, 4, 8, 16]" = torch.ops.aten.slice.Tensor(arg19_1, 2, 0, 8)
        copy_2: "f32[1, 4, 8, 16]" = torch.ops.aten.copy.default(slice_16, add_9);  slice_16 = add_9 = None
        slice_scatter_2: "f32[1, 4, 16, 16]" = torch.ops.aten.slice_scatter.default(arg19_1, copy_2, 2, 0, 8);  copy_2 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:52 in forward, code: self.v_cache[:, :, :seq] = v
        slice_18: "f32[1, 4, 8, 16]" = torch.ops.aten.slice.Tensor(arg20_1, 2, 0, 8)
        copy_3: "f32[1, 4, 8, 16]" = torch.ops.aten.copy.default(slice_18, transpose_10);  slice_18 = transpose_10 = None
        slice_scatter_3: "f32[1, 4, 16, 16]" = torch.ops.aten.slice_scatter.default(arg20_1, copy_3, 2, 0, 8);  copy_3 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:54 in forward, code: scores = torch.matmul(q, keys.transpose(2, 3)) / (self.head_dim**0.5)
        expand_8: "f32[1, 4, 8, 16]" = torch.ops.aten.expand.default(add_8, [1, 4, 8, 16]);  add_8 = None
        view_24: "f32[4, 8, 16]" = torch.ops.aten.view.default(expand_8, [4, 8, 16]);  expand_8 = None
        slice_25: "f32[1, 4, 8, 16]" = torch.ops.aten.slice.Tensor(slice_scatter_2, 2, 0, 8)
        transpose_14: "f32[1, 4, 16, 8]" = torch.ops.aten.transpose.int(slice_25, 2, 3);  slice_25 = None
        expand_11: "f32[1, 4, 16, 8]" = torch.ops.aten.expand.default(transpose_14, [1, 4, 16, 8]);  transpose_14 = None
        view_26: "f32[4, 16, 8]" = torch.ops.aten.view.default(expand_11, [4, 16, 8]);  expand_11 = None
        bmm_2: "f32[4, 8, 8]" = torch.ops.aten.bmm.default(view_24, view_26);  view_24 = view_26 = None
        view_27: "f32[1, 4, 8, 8]" = torch.ops.aten.view.default(bmm_2, [1, 4, 8, 8]);  bmm_2 = None
        div_1: "f32[1, 4, 8, 8]" = torch.ops.aten.div.Tensor(view_27, 4.0);  view_27 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:55 in forward, code: scores = scores + torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)
        full_1: "f32[8, 8]" = torch.ops.aten.full.default([8, 8], -inf, device = device(type='cpu'), pin_memory = False)
        triu_1: "f32[8, 8]" = torch.ops.aten.triu.default(full_1, 1);  full_1 = None
        add_10: "f32[1, 4, 8, 8]" = torch.ops.aten.add.Tensor(div_1, triu_1);  div_1 = triu_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:56 in forward, code: attn = torch.softmax(scores.float(), dim=-1).type_as(q)
        _softmax_1: "f32[1, 4, 8, 8]" = torch.ops.aten._softmax.default(add_10, -1, False);  add_10 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:57 in forward, code: out = torch.matmul(attn, values).transpose(1, 2).reshape(batch, seq, dim)
        expand_12: "f32[1, 4, 8, 8]" = torch.ops.aten.expand.default(_softmax_1, [1, 4, 8, 8]);  _softmax_1 = None
        view_28: "f32[4, 8, 8]" = torch.ops.aten.view.default(expand_12, [4, 8, 8]);  expand_12 = None
        slice_28: "f32[1, 4, 8, 16]" = torch.ops.aten.slice.Tensor(slice_scatter_3, 2, 0, 8)
        expand_15: "f32[1, 4, 8, 16]" = torch.ops.aten.expand.default(slice_28, [1, 4, 8, 16]);  slice_28 = None
        view_30: "f32[4, 8, 16]" = torch.ops.aten.view.default(expand_15, [4, 8, 16]);  expand_15 = None
        bmm_3: "f32[4, 8, 16]" = torch.ops.aten.bmm.default(view_28, view_30);  view_28 = view_30 = None
        view_31: "f32[1, 4, 8, 16]" = torch.ops.aten.view.default(bmm_3, [1, 4, 8, 16]);  bmm_3 = None
        transpose_15: "f32[1, 8, 4, 16]" = torch.ops.aten.transpose.int(view_31, 1, 2);  view_31 = None
        clone_1: "f32[1, 8, 4, 16]" = torch.ops.aten.clone.default(transpose_15, memory_format = torch.contiguous_format);  transpose_15 = None
        _unsafe_view_11: "f32[1, 8, 64]" = torch.ops.aten._unsafe_view.default(clone_1, [1, 8, 64]);  clone_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:58 in forward, code: return self.o_proj(out)
        t_10: "f32[64, 64]" = torch.ops.aten.t.default(arg21_1);  arg21_1 = None
        view_32: "f32[8, 64]" = torch.ops.aten.view.default(_unsafe_view_11, [8, 64]);  _unsafe_view_11 = None
        mm_10: "f32[8, 64]" = torch.ops.aten.mm.default(view_32, t_10);  view_32 = t_10 = None
        _unsafe_view_12: "f32[1, 8, 64]" = torch.ops.aten._unsafe_view.default(mm_10, [1, 8, 64]);  mm_10 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:81 in forward, code: x = x + self.attn(self.input_norm(x), cos, sin)
        add_11: "f32[1, 8, 64]" = torch.ops.aten.add.Tensor(add_6, _unsafe_view_12);  add_6 = _unsafe_view_12 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:21 in forward, code: variance = x.pow(2).mean(-1, keepdim=True)
        pow_4: "f32[1, 8, 64]" = torch.ops.aten.pow.Tensor_Scalar(add_11, 2)
        mean_3: "f32[1, 8, 1]" = torch.ops.aten.mean.dim(pow_4, [-1], True);  pow_4 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:22 in forward, code: return x * torch.rsqrt(variance + self.eps) * self.weight
        add_12: "f32[1, 8, 1]" = torch.ops.aten.add.Tensor(mean_3, 1e-06);  mean_3 = None
        rsqrt_3: "f32[1, 8, 1]" = torch.ops.aten.rsqrt.default(add_12);  add_12 = None
        mul_15: "f32[1, 8, 64]" = torch.ops.aten.mul.Tensor(add_11, rsqrt_3);  rsqrt_3 = None
        mul_16: "f32[1, 8, 64]" = torch.ops.aten.mul.Tensor(mul_15, arg22_1);  mul_15 = arg22_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:69 in forward, code: return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))
        t_11: "f32[64, 128]" = torch.ops.aten.t.default(arg23_1);  arg23_1 = None
        view_33: "f32[8, 64]" = torch.ops.aten.view.default(mul_16, [8, 64])
        mm_11: "f32[8, 128]" = torch.ops.aten.mm.default(view_33, t_11);  view_33 = t_11 = None
        _unsafe_view_13: "f32[1, 8, 128]" = torch.ops.aten._unsafe_view.default(mm_11, [1, 8, 128]);  mm_11 = None
        silu_1: "f32[1, 8, 128]" = torch.ops.aten.silu.default(_unsafe_view_13);  _unsafe_view_13 = None
        t_12: "f32[64, 128]" = torch.ops.aten.t.default(arg24_1);  arg24_1 = None
        view_34: "f32[8, 64]" = torch.ops.aten.view.default(mul_16, [8, 64]);  mul_16 = None
        mm_12: "f32[8, 128]" = torch.ops.aten.mm.default(view_34, t_12);  view_34 = t_12 = None
        _unsafe_view_14: "f32[1, 8, 128]" = torch.ops.aten._unsafe_view.default(mm_12, [1, 8, 128]);  mm_12 = None
        mul_17: "f32[1, 8, 128]" = torch.ops.aten.mul.Tensor(silu_1, _unsafe_view_14);  silu_1 = _unsafe_view_14 = None
        t_13: "f32[128, 64]" = torch.ops.aten.t.default(arg25_1);  arg25_1 = None
        view_35: "f32[8, 128]" = torch.ops.aten.view.default(mul_17, [8, 128]);  mul_17 = None
        mm_13: "f32[8, 64]" = torch.ops.aten.mm.default(view_35, t_13);  view_35 = t_13 = None
        _unsafe_view_15: "f32[1, 8, 64]" = torch.ops.aten._unsafe_view.default(mm_13, [1, 8, 64]);  mm_13 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:82 in forward, code: return x + self.mlp(self.post_norm(x))
        add_13: "f32[1, 8, 64]" = torch.ops.aten.add.Tensor(add_11, _unsafe_view_15);  add_11 = _unsafe_view_15 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:21 in forward, code: variance = x.pow(2).mean(-1, keepdim=True)
        pow_5: "f32[1, 8, 64]" = torch.ops.aten.pow.Tensor_Scalar(add_13, 2)
        mean_4: "f32[1, 8, 1]" = torch.ops.aten.mean.dim(pow_5, [-1], True);  pow_5 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:22 in forward, code: return x * torch.rsqrt(variance + self.eps) * self.weight
        add_14: "f32[1, 8, 1]" = torch.ops.aten.add.Tensor(mean_4, 1e-06);  mean_4 = None
        rsqrt_4: "f32[1, 8, 1]" = torch.ops.aten.rsqrt.default(add_14);  add_14 = None
        mul_18: "f32[1, 8, 64]" = torch.ops.aten.mul.Tensor(add_13, rsqrt_4);  add_13 = rsqrt_4 = None
        mul_19: "f32[1, 8, 64]" = torch.ops.aten.mul.Tensor(mul_18, arg26_1);  mul_18 = arg26_1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:105 in forward, code: return self.lm_head(self.norm(h))
        t_14: "f32[64, 128]" = torch.ops.aten.t.default(arg27_1);  arg27_1 = None
        view_36: "f32[8, 64]" = torch.ops.aten.view.default(mul_19, [8, 64]);  mul_19 = None
        mm_14: "f32[8, 128]" = torch.ops.aten.mm.default(view_36, t_14);  view_36 = t_14 = None
        _unsafe_view_16: "f32[1, 8, 128]" = torch.ops.aten._unsafe_view.default(mm_14, [1, 8, 128]);  mm_14 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:51 in forward, code: self.k_cache[:, :, :seq] = k  # KV cache written in place
        copy_: "f32[1, 4, 16, 16]" = torch.ops.aten.copy_.default(arg8_1, slice_scatter);  arg8_1 = slice_scatter = copy_ = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:52 in forward, code: self.v_cache[:, :, :seq] = v
        copy__1: "f32[1, 4, 16, 16]" = torch.ops.aten.copy_.default(arg9_1, slice_scatter_1);  arg9_1 = slice_scatter_1 = copy__1 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:51 in forward, code: self.k_cache[:, :, :seq] = k  # KV cache written in place
        copy__2: "f32[1, 4, 16, 16]" = torch.ops.aten.copy_.default(arg19_1, slice_scatter_2);  arg19_1 = slice_scatter_2 = copy__2 = None

        # File: /tmp/fxlab-golden/examples/llama_decoder.py:52 in forward, code: self.v_cache[:, :, :seq] = v
        copy__3: "f32[1, 4, 16, 16]" = torch.ops.aten.copy_.default(arg20_1, slice_scatter_3);  arg20_1 = slice_scatter_3 = copy__3 = None
        return (_unsafe_view_16,)
