"""Llama (transformers), tiny and random, with a static KV cache: the cache is preallocated
and every step writes its new keys and values into it in place — the in-place writes this
tool is for.

    fxlab trace examples/models/llama_static_cache.py                           # prefill: 8 tokens
    fxlab trace examples/models/llama_static_cache.py --entry decode_step       # one token after them
    fxlab trace examples/models/llama_static_cache.py --entry decode_step_stock # transformers' own cache
    fxlab diff examples/models/llama_static_cache.py --entry decode_step --before-functionalize

transformers' ``StaticCache`` writes with ``index_copy_``, which TorchAir has no converter
for (``decode_step_stock`` shows the refusal and the rewrite). On Ascend the write is
rewritten with torch_npu's scatter ops: here each layer's update is
``torch_npu.npu_scatter_nd_update_`` (GE ``ScatterNdUpdate``), the default entries' cache.

The cache is model state (the wrapper holds it), so the traced call returns the logits and
the cache tensors show up as graph inputs the graph mutates.

Needs ``pip install fxlab[models]``.
"""
import torch
import torch_npu
from torch import nn
from transformers import LlamaConfig, LlamaForCausalLM, StaticCache
from transformers.cache_utils import StaticLayer

MAX_LEN, PROMPT = 16, 8


class AscendStaticLayer(StaticLayer):
    """transformers' static cache layer with the write Ascend models use: one
    ``npu_scatter_nd_update_`` per cache, at (batch, head, position) index triples."""

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        batch, heads, seq, _ = key_states.shape
        positions = torch.arange(seq) + self.cumulative_length
        self.cumulative_length.add_(seq)
        grid = (batch, heads, seq)
        indices = torch.stack([
            torch.arange(batch).view(batch, 1, 1).expand(grid),
            torch.arange(heads).view(1, heads, 1).expand(grid),
            positions.view(1, 1, seq).expand(grid),
        ], dim=-1)
        torch_npu.npu_scatter_nd_update_(self.keys, indices, key_states)
        torch_npu.npu_scatter_nd_update_(self.values, indices, value_states)
        return self.keys, self.values


class AscendStaticCache(StaticCache):
    """``StaticCache`` whose layers write as :class:`AscendStaticLayer`."""

    def __init__(self, config: LlamaConfig, max_cache_len: int) -> None:
        super().__init__(config=config, max_cache_len=max_cache_len)
        self.layers = [AscendStaticLayer(max_cache_len=max_cache_len) for _ in self.layers]


class LlamaWithStaticCache(nn.Module):
    """A causal LM step over a cache it owns: ``forward(ids, positions) -> logits``."""

    def __init__(self, cache_type: type[StaticCache] = AscendStaticCache) -> None:
        super().__init__()
        config = LlamaConfig(
            vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=64,
        )
        self.lm = LlamaForCausalLM(config).eval()
        self.cache = cache_type(config=config, max_cache_len=MAX_LEN)
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


def get_model_and_inputs(cache_type: type[StaticCache] = AscendStaticCache):
    """The prefill: the prompt's 8 tokens written into an empty cache."""
    torch.manual_seed(0)
    model = LlamaWithStaticCache(cache_type)
    return model, (torch.randint(0, 128, (1, PROMPT)), torch.arange(PROMPT))


def decode_step(cache_type: type[StaticCache] = AscendStaticCache):
    """One decode step: the prompt is prefilled eagerly, then one token at position 8."""
    model, prefill = get_model_and_inputs(cache_type)
    with torch.no_grad():
        model(*prefill)
    return model, (torch.randint(0, 128, (1, 1)), torch.tensor([PROMPT]))


def decode_step_stock():
    """The decode step with transformers' own ``StaticCache`` (``index_copy_``)."""
    return decode_step(StaticCache)
