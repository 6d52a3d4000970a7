"""BERT (transformers), tiny and random, over a padded batch: the attention mask hides
the second sentence's padding. transformers turns the mask into SDPA's boolean mask,
which torch_npu runs with its fused attention on an NPU, and so does fxlab's capture.

    fxlab trace examples/models/bert.py
    fxlab trace examples/models/bert.py --converter torchair --verify

Needs ``pip install fxlab[models]``.
"""
import torch
from transformers import BertConfig, BertModel


def get_model_and_inputs():
    torch.manual_seed(0)
    config = BertConfig(vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, max_position_embeddings=32)
    model = BertModel(config).eval()
    input_ids = torch.randint(1, 128, (2, 8))
    attention_mask = torch.ones(2, 8, dtype=torch.long)
    attention_mask[1, 5:] = 0  # the second sentence is 5 tokens long
    input_ids[1, 5:] = 0
    return model, (input_ids, attention_mask)
