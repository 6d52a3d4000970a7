"""A Mixtral-style mixture of experts (transformers), tiny and random: 4 experts, 2 chosen
per token by a softmax router; one forward pass over 8 tokens.

The experts run as ``experts_implementation="batched_mm"`` (each token's chosen experts'
weights gathered, then batched matmuls). transformers' default, ``grouped_mm``, counts
tokens per expert with ``torch.histc``, for which TorchAir has no converter: that graph
would not compile for an NPU either (``fxlab trace ... --converter torchair`` shows the gap).

    fxlab trace examples/models/mixtral_moe.py
    fxlab trace examples/models/mixtral_moe.py --converter torchair --verify

Needs ``pip install fxlab[models]``.
"""
import torch
from transformers import MixtralConfig, MixtralForCausalLM


def get_model_and_inputs():
    torch.manual_seed(0)
    config = MixtralConfig(
        vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2, max_position_embeddings=64, use_cache=False,
    )
    config._experts_implementation = "batched_mm"
    model = MixtralForCausalLM(config).eval()
    return model, (torch.randint(0, 128, (1, 8)),)
