"""T5 (transformers), tiny and random: one encoder-decoder step, the encoder over 8 tokens
and the decoder over 4 (relative position biases, cross attention).

    fxlab trace examples/models/t5.py
    fxlab trace examples/models/t5.py --converter torchair --verify

Needs ``pip install fxlab[models]``.
"""
import torch
from transformers import T5Config, T5ForConditionalGeneration


def get_model_and_inputs():
    torch.manual_seed(0)
    config = T5Config(
        vocab_size=128, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2, num_heads=4,
        decoder_start_token_id=0, pad_token_id=0, use_cache=False,
    )
    model = T5ForConditionalGeneration(config).eval()
    return model, (torch.randint(1, 128, (1, 8)), torch.ones(1, 8, dtype=torch.long), torch.randint(1, 128, (1, 4)))
