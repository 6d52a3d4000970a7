"""Llama prefill (transformers), tiny and random, with the prompt length dynamic: the
sequence dim of the input ids is marked with ``torch._dynamo.mark_dynamic``, as a server
compiles once for every prompt length.

    fxlab trace examples/models/llama_dynamic_prefill.py
    fxlab trace examples/models/llama_dynamic_prefill.py --converter torchair

Dynamo makes the sequence length a symbol (``s0``): the Ascend IR takes it from the input's
shape (``Shape`` + ``Gather``), packs the sizes that name it (``Pack``), and the causal mask
fxlab builds for the fused attention (``Fill`` of a packed size) is sized by it; the same GE
graph as TorchAir's own. fxlab checks the graph at the traced length and at one more token.

Needs ``pip install fxlab[models]``.
"""
import torch
from transformers import LlamaConfig, LlamaForCausalLM


def get_model_and_inputs():
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=64,
    )
    model = LlamaForCausalLM(config).eval()
    input_ids = torch.randint(0, 128, (1, 8))
    torch._dynamo.mark_dynamic(input_ids, 1)
    return model, (input_ids,)
