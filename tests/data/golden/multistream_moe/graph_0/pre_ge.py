class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[4, 32]", arg1_1: "f32[8, 32]", arg2_1: "f32[128, 32]", arg3_1: "f32[32, 64]", arg4_1: "f32[4, 32, 128]", arg5_1: "f32[4, 64, 32]"):
        # File: /tmp/fxlab-golden/examples/multistream_moe.py:60 in forward, code: logits = self.router(hidden)
        permute_default: "f32[32, 4]" = torch.ops.aten.permute.default(arg0_1, [1, 0]);  arg0_1 = None
        mm: "f32[8, 4]" = torch.ops.aten.mm.default(arg1_1, permute_default);  permute_default = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:61 in forward, code: with npu_stream_switch("moe_shared", 0, enabled=MULTISTREAM):
        scope_enter = torch.ops.air.scope_enter.default(['_user_stream_label', '_user_stream_priority', '_enable_inner_parallel'], ['moe_shared', '0', 'True']);  scope_enter = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:33 in npu_wait_tensor, code: return torchair.scope.npu_wait_tensor(tensor, dependency) if enabled else tensor
        wait_tensor: "f32[8, 32]" = torch.ops.air.wait_tensor.default(arg1_1, mm);  arg1_1 = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:47 in forward, code: gate, up = self.gate_up(x).chunk(2, dim=-1)
        t_1: "f32[32, 128]" = torch.ops.aten.t.default(arg2_1);  arg2_1 = None
        mm_1: "f32[8, 128]" = torch.ops.aten.mm.default(wait_tensor, t_1);  t_1 = None
        split = torch.ops.aten.split.Tensor(mm_1, 64, -1);  mm_1 = None
        getitem: "f32[8, 64]" = split[0]
        getitem_1: "f32[8, 64]" = split[1];  split = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:48 in forward, code: return self.down(nn.functional.silu(gate) * up)
        silu: "f32[8, 64]" = torch.ops.aten.silu.default(getitem);  getitem = None
        mul: "f32[8, 64]" = torch.ops.aten.mul.Tensor(silu, getitem_1);  silu = getitem_1 = None
        t_2: "f32[64, 32]" = torch.ops.aten.t.default(arg3_1);  arg3_1 = None
        mm_2: "f32[8, 32]" = torch.ops.aten.mm.default(mul, t_2);  mul = t_2 = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:61 in forward, code: with npu_stream_switch("moe_shared", 0, enabled=MULTISTREAM):
        scope_exit = torch.ops.air.scope_exit.default();  scope_exit = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:64 in forward, code: with super_kernel("moe_experts", "stream-fusion=1", enabled=MULTISTREAM):
        scope_enter_1 = torch.ops.air.scope_enter.default(['_super_kernel_scope', '_super_kernel_options'], ['moe_experts', 'stream-fusion=1']);  scope_enter_1 = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:65 in forward, code: weights, chosen = torch.softmax(logits, dim=-1).topk(TOP_K, dim=-1)
        _softmax: "f32[8, 4]" = torch.ops.aten._softmax.default(mm, -1, False)
        topk = torch.ops.aten.topk.default(_softmax, 2);  _softmax = None
        getitem_2: "f32[8, 2]" = topk[0]
        getitem_3: "i64[8, 2]" = topk[1];  topk = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:66 in forward, code: weights = weights / weights.sum(dim=-1, keepdim=True)
        sum_1: "f32[8, 1]" = torch.ops.aten.sum.dim_IntList(getitem_2, [-1], True)
        div: "f32[8, 2]" = torch.ops.aten.div.Tensor(getitem_2, sum_1);  getitem_2 = sum_1 = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:68 in forward, code: dense = torch.zeros_like(logits).scatter(1, chosen, weights)
        zeros_like: "f32[8, 4]" = torch.ops.aten.zeros_like.default(mm, pin_memory = False);  mm = None
        scatter: "f32[8, 4]" = torch.ops.aten.scatter.src(zeros_like, 1, getitem_3, div);  zeros_like = getitem_3 = div = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:69 in forward, code: with torchair.scope.limit_core_num(16, 32):
        scope_enter_2 = torch.ops.air.scope_enter.default(['_op_aicore_num', '_op_vectorcore_num'], ['16', '32']);  scope_enter_2 = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:70 in forward, code: gate_up = torch.einsum("th,ehi->eti", hidden, self.w_gate_up)
        unsqueeze: "f32[8, 32, 1]" = torch.ops.aten.unsqueeze.default(wait_tensor, 2);  wait_tensor = None
        unsqueeze_1: "f32[8, 32, 1, 1]" = torch.ops.aten.unsqueeze.default(unsqueeze, 3);  unsqueeze = None
        permute: "f32[1, 8, 1, 32]" = torch.ops.aten.permute.default(unsqueeze_1, [2, 0, 3, 1]);  unsqueeze_1 = None
        unsqueeze_2: "f32[4, 32, 128, 1]" = torch.ops.aten.unsqueeze.default(arg4_1, 3);  arg4_1 = None
        permute_1: "f32[4, 1, 128, 32]" = torch.ops.aten.permute.default(unsqueeze_2, [0, 3, 2, 1]);  unsqueeze_2 = None
        permute_2: "f32[8, 32, 1, 1]" = torch.ops.aten.permute.default(permute, [1, 3, 0, 2]);  permute = None
        view: "f32[1, 8, 32]" = torch.ops.aten.reshape.default(permute_2, [1, 8, 32]);  permute_2 = None
        permute_3: "f32[32, 4, 128, 1]" = torch.ops.aten.permute.default(permute_1, [3, 0, 2, 1]);  permute_1 = None
        clone: "f32[32, 4, 128, 1]" = torch.ops.aten.clone.default(permute_3, memory_format = torch.contiguous_format);  permute_3 = None
        _unsafe_view: "f32[1, 32, 512]" = torch.ops.aten._unsafe_view.default(clone, [1, 32, 512]);  clone = None
        bmm: "f32[1, 8, 512]" = torch.ops.aten.bmm.default(view, _unsafe_view);  view = _unsafe_view = None
        view_1: "f32[8, 1, 4, 128]" = torch.ops.aten.reshape.default(bmm, [8, 1, 4, 128]);  bmm = None
        permute_4: "f32[4, 8, 128, 1]" = torch.ops.aten.permute.default(view_1, [2, 0, 3, 1]);  view_1 = None
        view_2: "f32[4, 8, 128]" = torch.ops.aten.reshape.default(permute_4, [4, 8, 128]);  permute_4 = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:71 in forward, code: gate, up = gate_up.chunk(2, dim=-1)
        split_1 = torch.ops.aten.split.Tensor(view_2, 64, -1);  view_2 = None
        getitem_4: "f32[4, 8, 64]" = split_1[0]
        getitem_5: "f32[4, 8, 64]" = split_1[1];  split_1 = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:72 in forward, code: routed = torch.einsum("eti,eih->eth", nn.functional.silu(gate) * up, self.w_down)
        silu_1: "f32[4, 8, 64]" = torch.ops.aten.silu.default(getitem_4);  getitem_4 = None
        mul_1: "f32[4, 8, 64]" = torch.ops.aten.mul.Tensor(silu_1, getitem_5);  silu_1 = getitem_5 = None
        unsqueeze_3: "f32[4, 8, 64, 1]" = torch.ops.aten.unsqueeze.default(mul_1, 3);  mul_1 = None
        permute_5: "f32[4, 8, 1, 64]" = torch.ops.aten.permute.default(unsqueeze_3, [0, 1, 3, 2]);  unsqueeze_3 = None
        unsqueeze_4: "f32[4, 64, 32, 1]" = torch.ops.aten.unsqueeze.default(arg5_1, 3);  arg5_1 = None
        permute_6: "f32[4, 1, 32, 64]" = torch.ops.aten.permute.default(unsqueeze_4, [0, 3, 2, 1]);  unsqueeze_4 = None
        permute_7: "f32[4, 8, 64, 1]" = torch.ops.aten.permute.default(permute_5, [0, 1, 3, 2]);  permute_5 = None
        view_3: "f32[4, 8, 64]" = torch.ops.aten.reshape.default(permute_7, [4, 8, 64]);  permute_7 = None
        permute_8: "f32[4, 64, 32, 1]" = torch.ops.aten.permute.default(permute_6, [0, 3, 2, 1]);  permute_6 = None
        view_4: "f32[4, 64, 32]" = torch.ops.aten.reshape.default(permute_8, [4, 64, 32]);  permute_8 = None
        bmm_1: "f32[4, 8, 32]" = torch.ops.aten.bmm.default(view_3, view_4);  view_3 = view_4 = None
        view_5: "f32[4, 8, 1, 32]" = torch.ops.aten.reshape.default(bmm_1, [4, 8, 1, 32]);  bmm_1 = None
        permute_9: "f32[4, 8, 32, 1]" = torch.ops.aten.permute.default(view_5, [0, 1, 3, 2]);  view_5 = None
        view_6: "f32[4, 8, 32]" = torch.ops.aten.reshape.default(permute_9, [4, 8, 32]);  permute_9 = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:69 in forward, code: with torchair.scope.limit_core_num(16, 32):
        scope_exit_1 = torch.ops.air.scope_exit.default();  scope_exit_1 = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:73 in forward, code: routed = (routed * dense.t().unsqueeze(-1)).sum(dim=0)
        permute_default_1: "f32[4, 8]" = torch.ops.aten.permute.default(scatter, [1, 0]);  scatter = None
        unsqueeze_5: "f32[4, 8, 1]" = torch.ops.aten.unsqueeze.default(permute_default_1, -1);  permute_default_1 = None
        mul_2: "f32[4, 8, 32]" = torch.ops.aten.mul.Tensor(view_6, unsqueeze_5);  view_6 = unsqueeze_5 = None
        sum_2: "f32[8, 32]" = torch.ops.aten.sum.dim_IntList(mul_2, [0]);  mul_2 = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:64 in forward, code: with super_kernel("moe_experts", "stream-fusion=1", enabled=MULTISTREAM):
        scope_exit_2 = torch.ops.air.scope_exit.default();  scope_exit_2 = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:74 in forward, code: return routed + shared
        add: "f32[8, 32]" = torch.ops.aten.add.Tensor(sum_2, mm_2);  sum_2 = mm_2 = None
        return (add,)
