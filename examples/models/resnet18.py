"""ResNet-18 (transformers' ResNet: basic blocks, depths 2-2-2-2, the torchvision
architecture), narrow and random, on one 32x32 image.

transformers' implementation is used because torchvision's x86_64 wheels on PyPI are CUDA
builds that fail to import beside a CPU-only torch; with a working torchvision,
``torchvision.models.resnet18(num_classes=10)`` traces the same way.

    fxlab trace examples/models/resnet18.py
    fxlab trace examples/models/resnet18.py --converter torchair --verify

Needs ``pip install fxlab[models]``.
"""
import torch
from transformers import ResNetConfig, ResNetForImageClassification


def get_model_and_inputs():
    torch.manual_seed(0)
    config = ResNetConfig(layer_type="basic", depths=[2, 2, 2, 2], embedding_size=16, hidden_sizes=[16, 32, 64, 128], num_labels=10)
    model = ResNetForImageClassification(config).eval()
    return model, (torch.randn(1, 3, 32, 32),)
