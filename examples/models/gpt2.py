"""GPT-2 (transformers), a tiny random-weight model built from its config: one forward
pass over 8 tokens. Attention is transformers' default, ``F.scaled_dot_product_attention``
(causal, no mask), which fxlab captures as torch_npu runs it on an NPU.

    fxlab trace examples/models/gpt2.py
    fxlab trace examples/models/gpt2.py --converter torchair --verify

Needs ``pip install fxlab[models]``.
"""
import torch
from transformers import GPT2Config, GPT2LMHeadModel


def get_model_and_inputs():
    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=128, n_positions=32, bos_token_id=0, eos_token_id=0, use_cache=False)
    model = GPT2LMHeadModel(config).eval()
    return model, (torch.randint(0, 128, (1, 8)),)
