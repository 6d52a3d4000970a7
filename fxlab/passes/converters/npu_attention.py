"""Converters of torch_npu's inference attention operators, as TorchAir makes them.

``npu_fused_infer_attention_score`` (v1 and v2) → ``FusedInferAttentionScore``,
``npu_incre_flash_attention`` → ``IncreFlashAttention``, ``npu_prompt_flash_attention``
→ ``PromptFlashAttention``: one GE op each, its key and value as one-element lists
(``key0``, ``value0``), the sequence lengths as int64 ``Const`` ops (serving code passes
Python lists), every attr written (these wrappers write them all). What TorchAir refuses
is refused with its words. The reference kernels are in
:mod:`fxlab.ir.kernels.npu_attention`.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.kernels.npu_attention_reference import V2_NAMES
from fxlab.ir.model import DataType
from fxlab.passes.converters.npu import npu_converter
from fxlab.passes.converters.npu_builders import compact_op, int64_input
from fxlab.passes.converters.registry import Sample

INT32_MAX = 2147483647
# FusedInferAttentionScore's optional inputs in prototype order, each with whether the
# wrapper writes a placeholder when it is absent (the later rope inputs it leaves out).
FIA_INPUTS = (
    ("pse_shift", True),
    ("atten_mask", True),
    ("actual_seq_lengths", True),
    ("actual_seq_lengths_kv", True),
    ("dequant_scale1", True),
    ("quant_scale1", True),
    ("dequant_scale2", True),
    ("quant_scale2", True),
    ("quant_offset2", True),
    ("antiquant_scale", True),
    ("antiquant_offset", True),
    ("block_table", True),
    ("query_padding_size", True),
    ("kv_padding_size", True),
    ("key_antiquant_scale", True),
    ("key_antiquant_offset", True),
    ("value_antiquant_scale", True),
    ("value_antiquant_offset", True),
    ("key_shared_prefix", True),
    ("value_shared_prefix", True),
    ("actual_shared_prefix_len", True),
    ("query_rope", False),
    ("key_rope", False),
    ("key_rope_antiquant_scale", False),
    ("dequant_scale_query", False),
    ("learnable_sink", True),
    ("q_start_idx", True),
    ("kv_start_idx", True),
)
FIA_LENGTHS = ("actual_seq_lengths", "actual_seq_lengths_kv", "actual_shared_prefix_len")
FIA_ATTRS = (
    ("num_heads", 1),
    ("scale", 1.0),
    ("pre_tokens", INT32_MAX),
    ("next_tokens", INT32_MAX),
    ("input_layout", "BSH"),
    ("num_key_value_heads", 0),
    ("sparse_mode", 0),
    ("inner_precise", 0),
    ("block_size", 0),
    ("antiquant_mode", 0),
    ("softmax_lse_flag", False),
    ("key_antiquant_mode", 0),
    ("value_antiquant_mode", 0),
    ("query_quant_mode", 0),
    ("pse_type", 0),
)


def fused_infer_attention_op(query: ge.Tensor, key: ge.Tensor, value: ge.Tensor, options: dict[str, Any]) -> list[ge.Tensor]:
    """``FusedInferAttentionScore`` from the GE op's own input and attr names."""
    inputs: dict[str, Any] = {"query": query, "key0": key, "value0": value}
    for name, placeholder in FIA_INPUTS:
        value_in = int64_input(options.get(name)) if name in FIA_LENGTHS else options.get(name)
        if value_in is not None or placeholder:
            inputs[name] = value_in
    attrs: dict[str, Any] = {name: options.get(name, default) for name, default in FIA_ATTRS}
    if options.get("out_dtype") is not None:  # the wrapper writes it only when given
        attrs["out_dtype"] = int(options["out_dtype"])
    return ge.op("FusedInferAttentionScore", inputs, attrs, outputs=("attention_out", "softmax_lse"))


def _int4_shape_factor(layout: str, key: ge.Tensor, value: ge.Tensor, per_int32: int = 8) -> list[int]:
    """What TorchAir multiplies an int4 (or fp4) key's shape by: the values one int32 holds."""
    if key.rank == 5 or value.rank == 5:
        return [1, 1, 1, 1, per_int32]
    return [1, 1, per_int32] if layout == "BSH" or key.rank == 3 or value.rank == 3 else [1, 1, 1, per_int32]


def _refuse_int4(*tensors: ge.Tensor | None) -> None:
    if any(t is not None and t.dtype == DataType.DT_INT32 for t in tensors):
        raise NotImplementedError(
            "int4 key/value (packed in int32): TorchAir reads them as GE's DT_INT4, which the built-in converter does not build yet: "
            "convert with --converter torchair"
        )


# -- samples ------------------------------------------------------------------------------
def paged_cache(blocks: int, block_size: int, heads: int, dim: int, dtype: torch.dtype = torch.float16) -> torch.Tensor:
    """A paged KV cache ``(blocks, block_size, heads * dim)`` as serving code allocates it."""
    return torch.randn(blocks, block_size, heads * dim).to(dtype)


def _fia_samples() -> list[Sample]:
    half = torch.float16
    q, k, v = torch.randn(2, 1, 32), torch.randn(2, 6, 16), torch.randn(2, 6, 16)
    mask = torch.zeros(2, 1, 1, 6, dtype=torch.bool)
    mask[0, ..., 4:] = True
    table = torch.tensor([[3, 0, 5], [1, 4, 2]], dtype=torch.int32)
    return [
        Sample((q, k, v), {"atten_mask": mask, "num_heads": 4, "num_key_value_heads": 2, "scale": 0.35, "input_layout": "BSH"}),
        Sample(
            (torch.randn(1, 2, 3, 8), torch.randn(1, 2, 5, 8), torch.randn(1, 2, 5, 8)),
            {"num_heads": 2, "input_layout": "BNSD", "actual_seq_lengths_kv": [4]},
        ),
        # a decode step on a paged cache: block_table, lengths as a Python list, GQA
        Sample(
            (torch.randn(2, 1, 64).to(half), paged_cache(6, 4, 2, 16), paged_cache(6, 4, 2, 16)),
            {
                "block_table": table,
                "actual_seq_lengths_kv": [10, 7],
                "num_heads": 4,
                "num_key_value_heads": 2,
                "block_size": 4,
                "scale": 0.25,
                "input_layout": "BSH",
            },
        ),
        # the same on a (blocks, N, block_size, D) cache in BNSD, with the softmax lse
        Sample(
            (torch.randn(2, 4, 1, 16).to(half), torch.randn(6, 2, 4, 16).to(half), torch.randn(6, 2, 4, 16).to(half)),
            {
                "block_table": table,
                "actual_seq_lengths_kv": [9, 12],
                "num_heads": 4,
                "num_key_value_heads": 2,
                "block_size": 4,
                "input_layout": "BNSD",
                "softmax_lse_flag": True,
            },
        ),
        # prefill of packed sequences (TND, cumulative lengths), causal from the bottom right
        Sample(
            (torch.randn(5, 4, 8).to(half), torch.randn(7, 2, 8).to(half), torch.randn(7, 2, 8).to(half)),
            {
                "atten_mask": torch.ones(2048, 2048, dtype=torch.bool).triu(1),
                "actual_seq_lengths": [2, 5],
                "actual_seq_lengths_kv": [3, 7],
                "num_heads": 4,
                "num_key_value_heads": 2,
                "sparse_mode": 3,
                "scale": 0.3,
                "input_layout": "TND",
                "softmax_lse_flag": True,
            },
        ),
        # BSND prefill with query lengths, in BNSD_BSND out of BNSD, and MLA's rope parts
        Sample(
            (torch.randn(2, 2, 3, 8).to(half), torch.randn(2, 1, 5, 8).to(half), torch.randn(2, 1, 5, 8).to(half)),
            {
                "query_rope": torch.randn(2, 2, 3, 4).to(half),
                "key_rope": torch.randn(2, 1, 5, 4).to(half),
                "actual_seq_lengths": [3, 2],
                "num_heads": 2,
                "num_key_value_heads": 1,
                "input_layout": "BNSD_BSND",
                "sparse_mode": 0,
                "atten_mask": torch.ones(3, 5, dtype=torch.bool).triu(3),
            },
        ),
    ]


@npu_converter("npu_fused_infer_attention_score.default", _fia_samples)
def convert_fused_infer_attention_score(
    query: ge.Tensor, key: ge.Tensor, value: ge.Tensor, *, meta_outputs: Any = None, **options: Any
) -> list[ge.Tensor]:
    """npu_fused_infer_attention_score(Tensor query, Tensor key, Tensor value, *, Tensor? pse_shift=None, Tensor? atten_mask=None, SymInt[]? actual_seq_lengths=None, SymInt[]? actual_seq_lengths_kv=None, ...) -> (Tensor, Tensor)"""
    # TorchAir makes the int4 key's shape factor before it looks at the key's dtype: a
    # Const nothing reads (GE prunes it), but part of TorchAir's graph.
    ge.const(_int4_shape_factor(options.get("input_layout", "BSH"), key, value), DataType.DT_INT64)
    _refuse_int4(key, value, options.get("key_shared_prefix"), options.get("value_shared_prefix"))
    return fused_infer_attention_op(query, key, value, {**options, "out_dtype": 0})


# dtype arguments that make TorchAir bitcast an input to a GE type fxlab's IR lacks
V2_REINTERPRETED = (
    "query_dtype",
    "key_dtype",
    "value_dtype",
    "dequant_scale_query_dtype",
    "dequant_scale_key_dtype",
    "dequant_scale_value_dtype",
)


def _fia_v2_samples() -> list[Sample]:
    half = torch.float16
    table = torch.tensor([[2, 0], [1, 3]], dtype=torch.int32)
    return [
        Sample(
            (torch.randn(2, 1, 4, 16).to(half), torch.randn(4, 4, 32).to(half), torch.randn(4, 4, 32).to(half)),
            {
                "block_table": table,
                "actual_seq_kvlen": [6, 8],
                "num_query_heads": 4,
                "num_key_value_heads": 2,
                "block_size": 4,
                "softmax_scale": 0.25,
                "input_layout": "BSND",
                "return_softmax_lse": True,
            },
        ),
        Sample(
            (torch.randn(2, 3, 32).to(half), torch.randn(2, 3, 32).to(half), torch.randn(2, 3, 32).to(half)),
            {
                "num_query_heads": 4,
                "sparse_mode": 2,
                "atten_mask": torch.ones(2048, 2048, dtype=torch.bool).triu(1),
                "actual_seq_qlen": [3, 2],
            },
        ),
    ]


@npu_converter("npu_fused_infer_attention_score_v2.default", _fia_v2_samples)
def convert_fused_infer_attention_score_v2(
    query: ge.Tensor, key: ge.Tensor, value: ge.Tensor, *, meta_outputs: Any = None, **options: Any
) -> list[ge.Tensor]:
    """npu_fused_infer_attention_score_v2(Tensor query, Tensor key, Tensor value, *, Tensor? query_rope=None, Tensor? key_rope=None, ..., SymInt[]? actual_seq_qlen=None, SymInt[]? actual_seq_kvlen=None, ...) -> (Tensor, Tensor)"""
    given = [n for n in V2_REINTERPRETED if options.get(n) is not None]
    if given:
        raise NotImplementedError(
            f"{', '.join(given)}: TorchAir bitcasts these inputs to torch_npu's own GE types, which the built-in converter does not "
            "build yet: convert with --converter torchair"
        )
    _refuse_int4(key, value)
    renamed = {V2_NAMES.get(k, k): v for k, v in options.items()}
    # The arguments v2 dropped are written as absent.
    return fused_infer_attention_op(query, key, value, {**renamed, "antiquant_mode": 0, "out_dtype": options.get("out_dtype")})


# -- incremental and prompt flash attention ------------------------------------------------
def _ifa_samples() -> list[Sample]:
    half = torch.float16
    table = torch.tensor([[1, 3], [2, 0]], dtype=torch.int32)
    return [
        Sample(
            (torch.randn(2, 1, 32).to(half), torch.randn(2, 6, 16).to(half), torch.randn(2, 6, 16).to(half)),
            {"num_heads": 4, "num_key_value_heads": 2, "scale_value": 0.35, "actual_seq_lengths": [6, 4]},
        ),
        Sample(
            (torch.randn(2, 4, 1, 16).to(half), paged_cache(4, 4, 4, 16), paged_cache(4, 4, 4, 16)),
            {
                "block_table": table,
                "actual_seq_lengths": [7, 5],
                "atten_mask": torch.zeros(2, 1, 1, 8, dtype=torch.bool),
                "num_heads": 4,
                "block_size": 4,
                "input_layout": "BNSD",
            },
        ),
    ]


@npu_converter("npu_incre_flash_attention.default", _ifa_samples)
def convert_incre_flash_attention(
    query: ge.Tensor,
    key: ge.Tensor,
    value: ge.Tensor,
    *,
    num_heads: int = 1,
    scale_value: float = 1.0,
    input_layout: str = "BSH",
    num_key_value_heads: int = 0,
    block_size: int = 0,
    inner_precise: int = 1,
    meta_outputs: Any = None,
    **optional: Any,
) -> ge.Tensor:
    """npu_incre_flash_attention(Tensor query, Tensor key, Tensor value, *, Tensor? padding_mask=None, Tensor? atten_mask=None, Tensor? pse_shift=None, SymInt[]? actual_seq_lengths=None, ..., int num_heads=1, float scale_value=1.0, str input_layout="BSH", int num_key_value_heads=0, int block_size=0, int inner_precise=1) -> Tensor"""
    # padding_mask is accepted and not passed on, as TorchAir does.
    names = ("pse_shift", "atten_mask", "actual_seq_lengths", "dequant_scale1", "quant_scale1", "dequant_scale2", "quant_scale2") + (
        "quant_offset2",
        "antiquant_scale",
        "antiquant_offset",
        "block_table",
        "kv_padding_size",
    )
    inputs: dict[str, Any] = {"query": query, "key0": key, "value0": value}
    inputs.update({n: int64_input(optional.get(n)) if n == "actual_seq_lengths" else optional.get(n) for n in names})
    attrs = {
        "num_heads": num_heads,
        "scale_value": float(scale_value),
        "input_layout": input_layout,
        "num_key_value_heads": num_key_value_heads,
        "block_size": block_size,
        "inner_precise": inner_precise,
    }
    return ge.op("IncreFlashAttention", inputs, attrs, outputs=("attention_out",))[0]


def _pfa_samples() -> list[Sample]:
    half = torch.float16
    causal = torch.ones(4, 6, dtype=torch.bool).triu(3)
    return [
        Sample(
            (torch.randn(1, 4, 32).to(half), torch.randn(1, 6, 16).to(half), torch.randn(1, 6, 16).to(half)),
            {"atten_mask": causal, "num_heads": 4, "num_key_value_heads": 2, "scale_value": 0.35, "next_tokens": 65535},
        ),
        Sample(
            (torch.randn(2, 2, 3, 8).to(half), torch.randn(2, 2, 3, 8).to(half), torch.randn(2, 2, 3, 8).to(half)),
            {
                "atten_mask": torch.ones(2048, 2048).triu(1).to(half),
                "num_heads": 2,
                "input_layout": "BNSD",
                "sparse_mode": 12,
                "actual_seq_lengths": [3, 2],
                "actual_seq_lengths_kv": [3, 2],
            },
        ),
    ]


@npu_converter("npu_prompt_flash_attention.default", _pfa_samples)
def convert_prompt_flash_attention(
    query: ge.Tensor,
    key: ge.Tensor,
    value: ge.Tensor,
    *,
    num_heads: int = 1,
    scale_value: float = 1.0,
    pre_tokens: int = 2147473647,
    next_tokens: int = 0,
    input_layout: str = "BSH",
    num_key_value_heads: int = 0,
    sparse_mode: int = 0,
    inner_precise: int = 1,
    meta_outputs: Any = None,
    **optional: Any,
) -> ge.Tensor:
    """npu_prompt_flash_attention(Tensor query, Tensor key, Tensor value, *, Tensor? padding_mask=None, Tensor? atten_mask=None, Tensor? pse_shift=None, int[]? actual_seq_lengths=None, ..., int num_heads=1, float scale_value=1.0, int pre_tokens=2147473647, int next_tokens=0, str input_layout="BSH", int num_key_value_heads=0, int[]? actual_seq_lengths_kv=None, int sparse_mode=0, int inner_precise=1) -> Tensor"""
    for name in ("actual_seq_lengths", "actual_seq_lengths_kv"):
        if isinstance(optional.get(name), ge.Tensor):
            raise NotImplementedError(f"PromptFlashAttention is not implemented while {name} is Tensor!")
    lengths = {n: int64_input(optional.get(n)) for n in ("actual_seq_lengths", "actual_seq_lengths_kv")}
    mask = optional.get("atten_mask")
    if mask is not None and mask.dtype == DataType.DT_FLOAT16:
        mask = ge.cast(mask, DataType.DT_UINT8)
    if 10 <= sparse_mode <= 14:  # the same modes at the other precision
        inner_precise, sparse_mode = 0, sparse_mode - 10
    inputs = {"query": query, "key": key, "value": value, "pse_shift": optional.get("pse_shift"), "atten_mask": mask, **lengths}
    inputs.update({n: optional.get(n) for n in ("deq_scale1", "quant_scale1", "deq_scale2", "quant_scale2", "quant_offset2")})
    attrs = {
        "num_heads": num_heads,
        "scale_value": float(scale_value),
        "pre_tokens": pre_tokens,
        "next_tokens": next_tokens,
        "input_layout": input_layout,
        "num_key_value_heads": num_key_value_heads,
        "sparse_mode": sparse_mode,
        "inner_precise": inner_precise,
    }
    return ge.op("PromptFlashAttention", inputs, attrs, outputs=("attention_out",))[0]


# -- combining partial attention, and Swin's masked softmax ---------------------------------
def _attention_update_samples() -> list[Sample]:
    """Two sequence-parallel partial results of 3 tokens, 2 heads of 8."""
    lse = [torch.randn(6) for _ in range(2)]
    outs = [torch.randn(6, 8).to(torch.float16) for _ in range(2)]
    return [Sample((lse, outs, 0)), Sample(([torch.randn(6) for _ in range(3)], [torch.randn(6, 8) for _ in range(3)], 0))]


@npu_converter("npu_attention_update.default", _attention_update_samples)
def convert_attention_update(
    lse: list[ge.Tensor], local_out: list[ge.Tensor], update_type: int, *, meta_outputs: Any = None
) -> list[ge.Tensor]:
    """npu_attention_update(Tensor[] lse, Tensor[] local_out, int update_type) -> (Tensor, Tensor)"""
    attrs = {"update_type": int(update_type), "sp": len(lse)}
    return compact_op("AttentionUpdate", {"lse": list(lse), "go": list(local_out)}, attrs, {}, outputs=("output", "lse_m"))


def _masked_softmax_samples() -> list[Sample]:
    """Swin's windowed scores (batch 2, windows 2, heads 2, 4 x 4), window masks, head biases."""
    x = torch.randn(2, 2, 2, 4, 4).to(torch.float16)
    mask = torch.where(torch.rand(2, 1, 4, 4) > 0.8, -100.0, 0.0).to(torch.float16)
    bias = torch.randn(1, 1, 2, 4, 4).to(torch.float16)
    return [Sample((x, mask, bias), {"scale_value": 0.5}), Sample((x, None, bias))]


@npu_converter("npu_masked_softmax_with_rel_pos_bias.default", _masked_softmax_samples)
def convert_masked_softmax_with_rel_pos_bias(
    x: ge.Tensor,
    atten_mask: ge.Tensor | None,
    relative_pos_bias: ge.Tensor,
    scale_value: float = 1.0,
    inner_precision_mode: int = 0,
    *,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """npu_masked_softmax_with_rel_pos_bias(Tensor x, Tensor? atten_mask, Tensor relative_pos_bias, float scale_value=1., int inner_precision_mode=0) -> Tensor"""
    inputs = {"x": x, "atten_mask": atten_mask, "relative_pos_bias": relative_pos_bias}
    attrs = {"scale_value": float(scale_value), "inner_precision_mode": int(inner_precision_mode)}
    return ge.op1("MaskedSoftmaxWithRelPosBias", inputs, attrs)
