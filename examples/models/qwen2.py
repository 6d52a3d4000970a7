"""Qwen2 (transformers), tiny and random: grouped-query attention (4 query heads, 2 key/value
heads), RMSNorm, rotary embeddings, SwiGLU MLP; one forward pass over 8 tokens.

    fxlab trace examples/models/qwen2.py
    fxlab trace examples/models/qwen2.py --converter torchair --verify

Needs ``pip install fxlab[models]``.
"""
import torch
from transformers import Qwen2Config, Qwen2ForCausalLM


def get_model_and_inputs():
    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=64, use_cache=False,
    )
    model = Qwen2ForCausalLM(config).eval()
    return model, (torch.randint(0, 128, (1, 8)),)
