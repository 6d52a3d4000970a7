class GraphModule(torch.nn.Module):
    def forward(self, L_self_modules_router_parameters_weight_: "f32[4, 32]", L_hidden_: "f32[8, 32]", L_self_modules_shared_expert_modules_gate_up_parameters_weight_: "f32[128, 32]", L_self_modules_shared_expert_modules_down_parameters_weight_: "f32[32, 64]", L_self_parameters_w_gate_up_: "f32[4, 32, 128]", L_self_parameters_w_down_: "f32[4, 64, 32]"):
        l_self_modules_router_parameters_weight_ = L_self_modules_router_parameters_weight_
        l_hidden_ = L_hidden_
        l_self_modules_shared_expert_modules_gate_up_parameters_weight_ = L_self_modules_shared_expert_modules_gate_up_parameters_weight_
        l_self_modules_shared_expert_modules_down_parameters_weight_ = L_self_modules_shared_expert_modules_down_parameters_weight_
        l_self_parameters_w_gate_up_ = L_self_parameters_w_gate_up_
        l_self_parameters_w_down_ = L_self_parameters_w_down_

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:60 in forward, code: logits = self.router(hidden)
        logits: "f32[8, 4]" = torch._C._nn.linear(l_hidden_, l_self_modules_router_parameters_weight_, None);  l_self_modules_router_parameters_weight_ = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:61 in forward, code: with npu_stream_switch("moe_shared", 0, enabled=MULTISTREAM):
        scope_enter = torch.ops.air.scope_enter(['_user_stream_label', '_user_stream_priority', '_enable_inner_parallel'], ['moe_shared', '0', 'True']);  scope_enter = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:33 in npu_wait_tensor, code: return torchair.scope.npu_wait_tensor(tensor, dependency) if enabled else tensor
        shared_in: "f32[8, 32]" = torch.ops.air.wait_tensor(l_hidden_, logits)

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:47 in forward, code: gate, up = self.gate_up(x).chunk(2, dim=-1)
        linear_1: "f32[8, 128]" = torch._C._nn.linear(shared_in, l_self_modules_shared_expert_modules_gate_up_parameters_weight_, None);  shared_in = l_self_modules_shared_expert_modules_gate_up_parameters_weight_ = None
        chunk = linear_1.chunk(2, dim = -1);  linear_1 = None
        gate: "f32[8, 64]" = chunk[0]
        up: "f32[8, 64]" = chunk[1];  chunk = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:48 in forward, code: return self.down(nn.functional.silu(gate) * up)
        silu: "f32[8, 64]" = torch.nn.functional.silu(gate);  gate = None
        mul: "f32[8, 64]" = silu * up;  silu = up = None
        shared: "f32[8, 32]" = torch._C._nn.linear(mul, l_self_modules_shared_expert_modules_down_parameters_weight_, None);  mul = l_self_modules_shared_expert_modules_down_parameters_weight_ = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:61 in forward, code: with npu_stream_switch("moe_shared", 0, enabled=MULTISTREAM):
        scope_exit = torch.ops.air.scope_exit();  scope_exit = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:64 in forward, code: with super_kernel("moe_experts", "stream-fusion=1", enabled=MULTISTREAM):
        scope_enter_1 = torch.ops.air.scope_enter(['_super_kernel_scope', '_super_kernel_options'], ['moe_experts', 'stream-fusion=1']);  scope_enter_1 = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:65 in forward, code: weights, chosen = torch.softmax(logits, dim=-1).topk(TOP_K, dim=-1)
        softmax: "f32[8, 4]" = torch.softmax(logits, dim = -1)
        topk = softmax.topk(2, dim = -1);  softmax = None
        weights: "f32[8, 2]" = topk[0]
        chosen: "i64[8, 2]" = topk[1];  topk = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:66 in forward, code: weights = weights / weights.sum(dim=-1, keepdim=True)
        sum_1: "f32[8, 1]" = weights.sum(dim = -1, keepdim = True)
        weights_1: "f32[8, 2]" = weights / sum_1;  weights = sum_1 = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:68 in forward, code: dense = torch.zeros_like(logits).scatter(1, chosen, weights)
        zeros_like: "f32[8, 4]" = torch.zeros_like(logits);  logits = None
        dense: "f32[8, 4]" = zeros_like.scatter(1, chosen, weights_1);  zeros_like = chosen = weights_1 = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:69 in forward, code: with torchair.scope.limit_core_num(16, 32):
        scope_enter_2 = torch.ops.air.scope_enter(['_op_aicore_num', '_op_vectorcore_num'], ['16', '32']);  scope_enter_2 = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:70 in forward, code: gate_up = torch.einsum("th,ehi->eti", hidden, self.w_gate_up)
        gate_up: "f32[4, 8, 128]" = torch.functional.einsum('th,ehi->eti', l_hidden_, l_self_parameters_w_gate_up_);  l_hidden_ = l_self_parameters_w_gate_up_ = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:71 in forward, code: gate, up = gate_up.chunk(2, dim=-1)
        chunk_1 = gate_up.chunk(2, dim = -1);  gate_up = None
        gate_1: "f32[4, 8, 64]" = chunk_1[0]
        up_1: "f32[4, 8, 64]" = chunk_1[1];  chunk_1 = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:72 in forward, code: routed = torch.einsum("eti,eih->eth", nn.functional.silu(gate) * up, self.w_down)
        silu_1: "f32[4, 8, 64]" = torch.nn.functional.silu(gate_1);  gate_1 = None
        mul_1: "f32[4, 8, 64]" = silu_1 * up_1;  silu_1 = up_1 = None
        routed: "f32[4, 8, 32]" = torch.functional.einsum('eti,eih->eth', mul_1, l_self_parameters_w_down_);  mul_1 = l_self_parameters_w_down_ = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:69 in forward, code: with torchair.scope.limit_core_num(16, 32):
        scope_exit_1 = torch.ops.air.scope_exit();  scope_exit_1 = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:73 in forward, code: routed = (routed * dense.t().unsqueeze(-1)).sum(dim=0)
        t: "f32[4, 8]" = dense.t();  dense = None
        unsqueeze: "f32[4, 8, 1]" = t.unsqueeze(-1);  t = None
        mul_2: "f32[4, 8, 32]" = routed * unsqueeze;  routed = unsqueeze = None
        routed_1: "f32[8, 32]" = mul_2.sum(dim = 0);  mul_2 = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:64 in forward, code: with super_kernel("moe_experts", "stream-fusion=1", enabled=MULTISTREAM):
        scope_exit_2 = torch.ops.air.scope_exit();  scope_exit_2 = None

        # File: /tmp/fxlab-golden/examples/multistream_moe.py:74 in forward, code: return routed + shared
        add: "f32[8, 32]" = routed_1 + shared;  routed_1 = shared = None
        return (add,)
