"""Converters of torch_npu's linear-attention pieces (Qwen3-Next's gated delta rule and the
causal depthwise convolution before it), as TorchAir makes them.

``npu_recurrent_gated_delta_rule`` → ``RecurrentGatedDeltaRule`` on the state itself
(TorchAir returns the op's two outputs for the schema's one, and fails: it is listed in
``torchair_refusals``), its functional form → ``TensorMove`` of the state + the same op;
``npu_fused_causal_conv1d`` → ``FusedCausalConv1d`` (its conv-state output dropped),
``npu_fused_causal_conv1d_v2`` → ``InplaceFusedCausalConv1d``, ``npu_masked_causal_conv1d``
→ ``MaskedCausalConv1d``. ``npu_chunk_gated_delta_rule`` TorchAir refuses outright ("not
supported in GE graph mode"), so it has no converter here. The reference kernels are in
:mod:`fxlab.ir.kernels.npu_linear_attention`.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.passes.converters.npu import npu_converter
from fxlab.passes.converters.npu_builders import compact_op, tensor_move
from fxlab.passes.converters.registry import Sample

# activation and conv_mode strings -> FusedCausalConv1d's int attrs
ACTIVATIONS = {"silu": 1, "swish": 2}
CONV_MODES = {"pangu": 1}
CONV_DEFAULTS = {
    "activation_mode": 0,
    "pad_slot_id": -1,
    "run_mode": 0,
    "max_query_len": -1,
    "residual_connection": 1,
    "block_size": 128,
    "conv_mode": 0,
}
CONV_OPTIONAL_INPUTS = (
    "query_start_loc",
    "cache_indices",
    "initial_state_mode",
    "bias",
    "num_accepted_tokens",
    "num_computed_tokens",
    "block_idx_first_scheduled_token",
    "block_idx_last_scheduled_token",
    "initial_state_idx",
)


# -- the gated delta rule ------------------------------------------------------------------------
def delta_rule_tensors() -> tuple[torch.Tensor, ...]:
    """Two sequences of 2 tokens: 1 key head and 2 value heads of 8; a state slot per token."""
    bf16 = torch.bfloat16
    query = torch.nn.functional.normalize(torch.randn(4, 1, 8), dim=-1).to(bf16)
    key = torch.nn.functional.normalize(torch.randn(4, 1, 8), dim=-1).to(bf16)
    return query, key, torch.randn(4, 2, 8).to(bf16), (torch.randn(4, 2, 8, 8) * 0.1).to(bf16)


def _delta_rule_samples() -> list[Sample]:
    options = {
        "beta": torch.rand(4, 2).to(torch.bfloat16),
        "g": -torch.rand(4, 2),
        "scale": 0.35,
        "actual_seq_lengths": torch.tensor([2, 2], dtype=torch.int32),
        "ssm_state_indices": torch.tensor([0, 1, 2, 3], dtype=torch.int32),
    }
    return [
        Sample(delta_rule_tensors(), options),
        Sample(delta_rule_tensors(), {**options, "num_accepted_tokens": torch.tensor([2, 1], dtype=torch.int32)}),
    ]


def _delta_rule_op(query: ge.Tensor, key: ge.Tensor, value: ge.Tensor, state: ge.Tensor, options: dict[str, Any]) -> list[ge.Tensor]:
    if options.get("scale") is None:
        # TorchAir writes scale into a float attr as given: None fails there.
        raise TypeError("None has type NoneType, but expected one of: int, float (RecurrentGatedDeltaRule's scale_value)")
    inputs = {"query": query, "key": key, "value": value, "beta": options.get("beta"), "state": state}
    inputs.update({n: options.get(n) for n in ("actual_seq_lengths", "ssm_state_indices", "g", "gk", "num_accepted_tokens")})
    return ge.op("RecurrentGatedDeltaRule", inputs, {"scale_value": float(options["scale"])}, outputs=("out", "state"))


@npu_converter("npu_recurrent_gated_delta_rule.default", _delta_rule_samples)
def convert_recurrent_gated_delta_rule(
    query: ge.Tensor, key: ge.Tensor, value: ge.Tensor, state: ge.Tensor, *, meta_outputs: Any = None, **options: Any
) -> ge.Tensor:
    """npu_recurrent_gated_delta_rule(Tensor query, Tensor key, Tensor value, Tensor(a!) state, *, Tensor? beta=None, float? scale=None, Tensor? actual_seq_lengths=None, Tensor? ssm_state_indices=None, Tensor? num_accepted_tokens=None, Tensor? g=None, Tensor? gk=None) -> Tensor"""
    # The op writes the state in place; converting it anyway, the output is the schema's one.
    return _delta_rule_op(query, key, value, state, options)[0]


@npu_converter("npu_recurrent_gated_delta_rule_functional.default", _delta_rule_samples)
def convert_recurrent_gated_delta_rule_functional(
    query: ge.Tensor, key: ge.Tensor, value: ge.Tensor, state: ge.Tensor, *, meta_outputs: Any = None, **options: Any
) -> list[ge.Tensor]:
    """npu_recurrent_gated_delta_rule_functional(Tensor query, Tensor key, Tensor value, Tensor state, *, ...) -> (Tensor, Tensor)"""
    return _delta_rule_op(query, key, value, tensor_move(state), options)


# -- causal convolutions ---------------------------------------------------------------------------
def _conv_samples() -> list[Sample]:
    """Two sequences (3 and 2 tokens) of 8 channels, kernel width 3, states of 3 slots."""
    bf16 = torch.bfloat16
    x, weight, states = torch.randn(5, 8).to(bf16), torch.randn(3, 8).to(bf16), torch.randn(3, 2, 8).to(bf16)
    options = {
        "query_start_loc": torch.tensor([0, 3, 5], dtype=torch.int32),
        "cache_indices": torch.tensor([2, 0], dtype=torch.int32),
        "initial_state_mode": torch.tensor([1, 0], dtype=torch.int32),
        "activation": "silu",
        "max_query_len": 3,
    }
    return [
        Sample((x, weight, states), options),
        Sample((x, weight, states), {**options, "bias": torch.randn(8).to(bf16), "activation": "None"}),
    ]


def _conv_op(op_type: str, x: ge.Tensor, weight: ge.Tensor, conv_states: ge.Tensor, options: dict[str, Any]) -> list[ge.Tensor]:
    inputs = {"x": x, "weight": weight, "conv_states": conv_states, **{n: options.get(n) for n in CONV_OPTIONAL_INPUTS}}
    attrs = {
        "activation_mode": ACTIVATIONS.get(options.get("activation", "None"), 0),
        "pad_slot_id": options.get("pad_slot_id", -1),
        "run_mode": options.get("run_mode", 0),
        "max_query_len": options.get("max_query_len", -1),
        "residual_connection": options.get("residual_connection", 0),
        "block_size": options.get("block_size", 128),
        "conv_mode": CONV_MODES.get(options.get("conv_mode", "default"), 0),
    }
    outputs = ("conv_states", "y" if op_type == "FusedCausalConv1d" else "x")
    return compact_op(op_type, inputs, attrs, CONV_DEFAULTS, outputs=outputs)


@npu_converter("npu_fused_causal_conv1d.default", _conv_samples)
def convert_fused_causal_conv1d(
    x: ge.Tensor, weight: ge.Tensor, conv_states: ge.Tensor, *, meta_outputs: Any = None, **options: Any
) -> ge.Tensor:
    """npu_fused_causal_conv1d(Tensor x, Tensor weight, Tensor(a!) conv_states, *, Tensor? query_start_loc=None, Tensor? cache_indices=None, ..., str? activation="None", int? pad_slot_id=-1, int? run_mode=0, int? residual_connection=0, int? max_query_len=-1, ..., int? block_size=128, str? conv_mode="default") -> Tensor"""
    return _conv_op("FusedCausalConv1d", x, weight, conv_states, options)[1]


@npu_converter("npu_fused_causal_conv1d_v2.default", _conv_samples)
def convert_fused_causal_conv1d_v2(
    x: ge.Tensor, weight: ge.Tensor, conv_states: ge.Tensor, *, meta_outputs: Any = None, **options: Any
) -> ge.Tensor:
    """npu_fused_causal_conv1d_v2(Tensor(a!) x, Tensor weight, Tensor(b!) conv_states, *, ...) -> ()"""
    return _conv_op("InplaceFusedCausalConv1d", x, weight, conv_states, options)[1]


@npu_converter(
    "npu_masked_causal_conv1d.default",
    lambda: [
        Sample(
            (torch.randn(2, 5, 8).half(), torch.randn(3, 8).half()),
            {"mask": torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)},
        ),
        Sample((torch.randn(2, 5, 8).half(), torch.randn(3, 8).half())),
    ],
)
def convert_masked_causal_conv1d(
    input: ge.Tensor, weight: ge.Tensor, *, mask: ge.Tensor | None = None, meta_outputs: Any = None
) -> ge.Tensor:
    """npu_masked_causal_conv1d(Tensor input, Tensor weight, *, Tensor? mask=None) -> Tensor"""
    return compact_op("MaskedCausalConv1d", {"input": input, "weight": weight, "mask": mask}, {}, {}, outputs=("output",))[0]
