"""ViT (transformers), tiny and random: a 32x32 image in 8x8 patches, 2 encoder layers.

    fxlab trace examples/models/vit.py
    fxlab trace examples/models/vit.py --converter torchair --verify

Needs ``pip install fxlab[models]``.
"""
import torch
from transformers import ViTConfig, ViTModel


def get_model_and_inputs():
    torch.manual_seed(0)
    config = ViTConfig(image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128)
    model = ViTModel(config, add_pooling_layer=False).eval()
    return model, (torch.randn(1, 3, 32, 32),)
