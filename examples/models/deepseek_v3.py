"""DeepSeek-V3 (transformers), tiny and random: multi-head latent attention (queries and
keys/values through low-rank projections, a decoupled rotary part), one dense layer then one
mixture-of-experts layer (4 routed experts in 2 groups, 2 chosen per token by a sigmoid
router with group-limited top-k, plus a shared expert); one forward pass over 8 tokens.

``get_model_and_inputs`` keeps transformers' defaults: its experts run ``grouped_mm``, which
on a machine without the fused kernel (a CPU, an NPU) calls transformers' own custom op
``transformers::grouped_mm_fallback``. TorchAir has no converter for that op, and its auto
converter would look for an Ascend IR op ``GroupedMmFallback`` that CANN does not have: the
trace ends ``partial`` and says so. ``batched_mm`` picks the experts implementation that
gathers each token's experts' weights and runs batched matmuls, which TorchAir converts.

    fxlab trace examples/models/deepseek_v3.py
    fxlab trace examples/models/deepseek_v3.py --entry batched_mm
    fxlab trace examples/models/deepseek_v3.py --entry batched_mm --converter torchair --verify

Needs ``pip install fxlab[models]``.
"""
import torch
from transformers import DeepseekV3Config, DeepseekV3ForCausalLM


def _config(**overrides):
    return DeepseekV3Config(
        vocab_size=128, hidden_size=64, intermediate_size=128, moe_intermediate_size=32, num_hidden_layers=2,
        first_k_dense_replace=1, n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2, n_group=2,
        topk_group=1, num_attention_heads=4, num_key_value_heads=4, q_lora_rank=32, kv_lora_rank=16,
        qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=8, max_position_embeddings=64, use_cache=False,
        **overrides,
    )


def _model_and_inputs(config):
    torch.manual_seed(0)
    model = DeepseekV3ForCausalLM(config).eval()
    return model, (torch.randint(0, 128, (1, 8)),)


def get_model_and_inputs():
    return _model_and_inputs(_config())


def batched_mm():
    config = _config()
    config._experts_implementation = "batched_mm"
    return _model_and_inputs(config)
