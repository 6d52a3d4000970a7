"""Llama (transformers), tiny and random, with transformers' ``StaticCache``: the KV cache
is preallocated and every step writes its new keys and values into it in place
(``index_copy_`` at the step's cache positions) — the in-place writes this tool is for.

    fxlab trace examples/models/llama_static_cache.py                      # prefill: 8 tokens
    fxlab trace examples/models/llama_static_cache.py --entry decode_step  # one token after them
    fxlab diff examples/models/llama_static_cache.py --entry decode_step --before-functionalize

The cache is model state (the wrapper holds it), so the traced call returns the logits and
the cache tensors show up as graph inputs the graph mutates. TorchAir has no converter for
``index_copy``; on Ascend the cache write is written as ``torch_npu.npu_scatter_nd_update_``
or a slice assignment instead (examples/models/ascend_decoder_layer.py).

Needs ``pip install fxlab[models]``.
"""
import torch
from torch import nn
from transformers import LlamaConfig, LlamaForCausalLM, StaticCache

MAX_LEN, PROMPT = 16, 8


class LlamaWithStaticCache(nn.Module):
    """A causal LM step over a cache it owns: ``forward(ids, positions) -> logits``."""

    def __init__(self) -> None:
        super().__init__()
        config = LlamaConfig(
            vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=64,
        )
        self.lm = LlamaForCausalLM(config).eval()
        self.cache = StaticCache(config=config, max_cache_len=MAX_LEN)
        head_dim = config.hidden_size // config.num_attention_heads
        self.cache.early_initialization(1, config.num_key_value_heads, head_dim, torch.float32, torch.device("cpu"))
        # The cache's tensors (keys, values, and the filled length each step advances) are
        # the model's state: as buffers they are saved and restored around each checked run.
        for i, layer in enumerate(self.cache.layers):
            self.register_buffer(f"k_cache_{i}", layer.keys)
            self.register_buffer(f"v_cache_{i}", layer.values)
            self.register_buffer(f"cache_length_{i}", layer.cumulative_length)

    def forward(self, input_ids: torch.Tensor, cache_position: torch.Tensor) -> torch.Tensor:
        out = self.lm(input_ids, past_key_values=self.cache, cache_position=cache_position, use_cache=True)
        return out.logits


def get_model_and_inputs():
    """The prefill: the prompt's 8 tokens written into an empty cache."""
    torch.manual_seed(0)
    model = LlamaWithStaticCache()
    return model, (torch.randint(0, 128, (1, PROMPT)), torch.arange(PROMPT))


def decode_step():
    """One decode step: the prompt is prefilled eagerly, then one token at position 8."""
    model, prefill = get_model_and_inputs()
    with torch.no_grad():
        model(*prefill)
    return model, (torch.randint(0, 128, (1, 1)), torch.tensor([PROMPT]))
