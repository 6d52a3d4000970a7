"""Converters of torch_npu's common operators, making the GE ops TorchAir makes for them.

torch_npu's operators (``torch.ops.npu.*``) exist only while they are defined: by a real
torch_npu, or by fxlab from a torch_npu copy (``fxlab.compat.torch_npu_ops``). So these
converters are kept by operator name and registered for the live operators by
:func:`npu_converters`, for as long as the operators are defined; a converter a plugin
registers for the same operator replaces fxlab's, as for any other.

The GE op types, input names and attrs are those of TorchAir's converters in
``ge_converter/custom/`` (torch_npu 2.13.0): ``npu_rms_norm`` → ``RmsNorm``,
``npu_add_rms_norm`` → ``AddRmsNorm``, ``npu_apply_rotary_pos_emb`` → ``TensorMove`` of
query and key + ``ApplyRotaryPosEmb``, ``npu_swiglu`` → ``SwiGlu``,
``npu_scatter_nd_update`` → ``TensorMove`` + ``ScatterNdUpdate`` (the in-place form
without the move), ``npu_fused_infer_attention_score`` → ``FusedInferAttentionScore``,
``npu_fusion_attention`` (BSH/BNSD, no dropout) → ``FlashAttentionScore``,
``npu_moe_gating_top_k_softmax`` → ``MoeGatingTopKSoftmax``, ``npu_dynamic_quant``
(per token, no int4) → ``DynamicQuant``. The reference kernels of these GE ops are in
``fxlab.ir.kernels.npu``.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType
from fxlab.passes.convert_to_ascend_ir import NAMED_CONVERTER_LOOKUPS
from fxlab.passes.converters.registry import CONVERTERS, ORIGIN_FXLAB, Converter, Sample
from fxlab.passes.torchair_refusals import TORCH_NPU_OPERATORS

_INT32_MAX = 2147483647
# ApplyRotaryPosEmb's layout attr: TorchAir's numbers for the layout strings.
ROTARY_LAYOUTS = {"BSH": 1, "BSND": 1, "SBND": 2, "BNSD": 3, "TND": 4}

# operator name ("npu_rms_norm.default") -> (converter, its samples)
NPU_CONVERTERS: dict[str, tuple[Callable[..., Any], Callable[[], list[Sample]] | None]] = {}


def npu_converter(name: str, samples: Callable[[], list[Sample]] | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        if name in NPU_CONVERTERS:
            raise ValueError(f"two fxlab converters for npu::{name}")
        NPU_CONVERTERS[name] = (fn, samples)
        TORCH_NPU_OPERATORS.add(name.split(".", 1)[0])
        return fn

    return decorate


def _live(name: str) -> torch._ops.OpOverload | None:
    op, _, overload = name.partition(".")
    try:
        return getattr(getattr(torch.ops.npu, op), overload)
    except (AttributeError, RuntimeError):
        return None


def converter_by_name(target: Any) -> Callable[..., Any] | None:
    """fxlab's converter of a torch_npu operator, by its name: torch re-creates an
    operator's OpOverload when its namespace gains definitions (TorchAir's, a plugin's),
    so the object registered may no longer be the one a graph holds."""
    if getattr(target, "namespace", None) != "npu":
        return None
    entry = NPU_CONVERTERS.get(f"{target._opname}.{target._overloadname}")
    return entry[0] if entry is not None else None


NAMED_CONVERTER_LOOKUPS.append(converter_by_name)


@contextlib.contextmanager
def npu_converters() -> Iterator[list[str]]:
    """Register the converters of the torch_npu operators defined now; unregistered on exit."""
    registered = []
    for name, (fn, samples) in NPU_CONVERTERS.items():
        target = _live(name)
        if target is None or target in CONVERTERS:
            continue
        CONVERTERS.register(Converter(target=target, fn=fn, origin=ORIGIN_FXLAB, samples=samples, where=f"{__name__}:{fn.__name__}"))
        registered.append(target)
    try:
        yield [str(t) for t in registered]
    finally:
        for target in registered:
            if CONVERTERS.get(target) is not None and CONVERTERS.get(target).origin == ORIGIN_FXLAB:
                CONVERTERS.unregister(target)


# -- normalisation and activations ----------------------------------------------------------
@npu_converter(
    "npu_rms_norm.default", lambda: [Sample((torch.randn(2, 3, 8), torch.randn(8))), Sample((torch.randn(4, 16), torch.randn(16), 1e-2))]
)
def convert_rms_norm(self: ge.Tensor, gamma: ge.Tensor, epsilon: float = 1e-6, *, meta_outputs: Any = None) -> list[ge.Tensor]:
    """npu_rms_norm(Tensor self, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor)"""
    return ge.op("RmsNorm", {"x": self, "gamma": gamma}, {"epsilon": float(epsilon)}, outputs=("y", "rstd"))


@npu_converter("npu_add_rms_norm.default", lambda: [Sample((torch.randn(2, 3, 8), torch.randn(2, 3, 8), torch.randn(8)))])
def convert_add_rms_norm(
    x1: ge.Tensor, x2: ge.Tensor, gamma: ge.Tensor, epsilon: float = 1e-6, *, meta_outputs: Any = None
) -> list[ge.Tensor]:
    """npu_add_rms_norm(Tensor x1, Tensor x2, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor, Tensor)"""
    return ge.op("AddRmsNorm", {"x1": x1, "x2": x2, "gamma": gamma}, {"epsilon": float(epsilon)}, outputs=("y", "rstd", "x"))


def _rotary_samples() -> list[Sample]:
    q, k = torch.randn(2, 3, 4, 8), torch.randn(2, 3, 2, 8)
    cos, sin = torch.randn(2, 3, 1, 8), torch.randn(2, 3, 1, 8)
    return [
        Sample((q, k, cos, sin, "BSND")),
        Sample(
            (q.transpose(1, 2).contiguous(), k.transpose(1, 2).contiguous(), cos.transpose(1, 2), sin.transpose(1, 2), "BNSD", "interleave")
        ),
    ]


@npu_converter("npu_apply_rotary_pos_emb.default", _rotary_samples)
def convert_apply_rotary_pos_emb(
    query: ge.Tensor,
    key: ge.Tensor,
    cos: ge.Tensor,
    sin: ge.Tensor,
    layout: str = "BSND",
    rotary_mode: str = "half",
    *,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_apply_rotary_pos_emb(Tensor query, Tensor key, Tensor cos, Tensor sin, str layout='BSND', str rotary_mode='half') -> (Tensor, Tensor)"""
    if layout not in ROTARY_LAYOUTS:
        raise NotImplementedError(f"layout {layout!r}: TorchAir converts BSH, BSND, SBND, BNSD and TND")
    # The GE op writes into query and key: TorchAir moves them into new memory first.
    moved_q, moved_k = ge.op1("TensorMove", {"x": query}), ge.op1("TensorMove", {"x": key})
    # TorchAir's op builder leaves out attrs that keep the prototype's default.
    attrs: dict[str, Any] = {}
    if ROTARY_LAYOUTS[layout] != 1:
        attrs["layout"] = ROTARY_LAYOUTS[layout]
    if rotary_mode != "half":
        attrs["rotary_mode"] = rotary_mode
    inputs = {"query": moved_q, "key": moved_k, "cos": cos, "sin": sin}
    return ge.op("ApplyRotaryPosEmb", inputs, attrs, outputs=("query", "key"))


@npu_converter("npu_swiglu.default", lambda: [Sample((torch.randn(2, 8),)), Sample((torch.randn(4, 6, 3), 1))])
def convert_swiglu(self: ge.Tensor, dim: int = -1, *, meta_outputs: Any = None) -> ge.Tensor:
    """npu_swiglu(Tensor self, int dim=-1) -> Tensor"""
    return ge.op1("SwiGlu", {"x": self}, {"dim": int(dim)})


# -- KV-cache writes ---------------------------------------------------------------------------
def _scatter_samples() -> list[Sample]:
    return [Sample((torch.zeros(2, 6, 4), torch.tensor([[[0, 1]], [[1, 3]]]), torch.randn(2, 1, 4)))]


@npu_converter("npu_scatter_nd_update.default", _scatter_samples)
def convert_scatter_nd_update(self: ge.Tensor, indices: ge.Tensor, updates: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """npu_scatter_nd_update(Tensor self, Tensor indices, Tensor updates) -> Tensor"""
    moved = ge.op1("TensorMove", {"x": self})
    return ge.op("ScatterNdUpdate", {"var": moved, "indices": indices, "updates": updates}, {"use_locking": False}, outputs=("var",))[0]


@npu_converter("npu_scatter_nd_update_.default")
def convert_scatter_nd_update_(self: ge.Tensor, indices: ge.Tensor, updates: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """npu_scatter_nd_update_(Tensor(a!) self, Tensor indices, Tensor updates) -> Tensor(a!)"""
    return ge.op("ScatterNdUpdate", {"var": self, "indices": indices, "updates": updates}, {"use_locking": False}, outputs=("var",))[0]


# -- attention -----------------------------------------------------------------------------------
_FIA_OPTIONAL_INPUTS = (
    "pse_shift",
    "atten_mask",
    "actual_seq_lengths",
    "actual_seq_lengths_kv",
    "dequant_scale1",
    "quant_scale1",
    "dequant_scale2",
    "quant_scale2",
    "quant_offset2",
    "antiquant_scale",
    "antiquant_offset",
    "block_table",
    "query_padding_size",
    "kv_padding_size",
    "key_antiquant_scale",
    "key_antiquant_offset",
    "value_antiquant_scale",
    "value_antiquant_offset",
    "key_shared_prefix",
    "value_shared_prefix",
    "actual_shared_prefix_len",
)
# TorchAir's op leaves these inputs out unless given (MLA's rope parts).
_FIA_ROPE_INPUTS = ("query_rope", "key_rope", "key_rope_antiquant_scale")
_FIA_TAIL_INPUTS = ("learnable_sink", "q_start_idx", "kv_start_idx")
_FIA_ATTRS = (
    ("num_heads", 1),
    ("scale", 1.0),
    ("pre_tokens", _INT32_MAX),
    ("next_tokens", _INT32_MAX),
    ("input_layout", "BSH"),
    ("num_key_value_heads", 0),
    ("sparse_mode", 0),
    ("inner_precise", 0),
    ("block_size", 0),
    ("antiquant_mode", 0),
    ("softmax_lse_flag", False),
    ("key_antiquant_mode", 0),
    ("value_antiquant_mode", 0),
)
_LENGTH_INPUTS = ("actual_seq_lengths", "actual_seq_lengths_kv", "actual_shared_prefix_len")


def _fia_samples() -> list[Sample]:
    q, k, v = torch.randn(2, 1, 32), torch.randn(2, 6, 16), torch.randn(2, 6, 16)
    mask = torch.zeros(2, 1, 1, 6, dtype=torch.bool)
    mask[0, ..., 4:] = True
    return [
        Sample((q, k, v), {"atten_mask": mask, "num_heads": 4, "num_key_value_heads": 2, "scale": 0.35, "input_layout": "BSH"}),
        Sample(
            (torch.randn(1, 2, 3, 8), torch.randn(1, 2, 5, 8), torch.randn(1, 2, 5, 8)),
            {"num_heads": 2, "input_layout": "BNSD", "actual_seq_lengths_kv": [4]},
        ),
    ]


@npu_converter("npu_fused_infer_attention_score.default", _fia_samples)
def convert_fused_infer_attention_score(
    query: ge.Tensor, key: ge.Tensor, value: ge.Tensor, *, meta_outputs: Any = None, **options: Any
) -> list[ge.Tensor]:
    """npu_fused_infer_attention_score(Tensor query, Tensor key, Tensor value, *, Tensor? pse_shift=None, Tensor? atten_mask=None, ...) -> (Tensor, Tensor)"""
    if key.dtype == DataType.DT_INT32 or query.dtype == DataType.DT_INT8:
        raise NotImplementedError("int4 key/value and int8 query: convert with --converter torchair")
    # TorchAir makes the int4 key's shape factor before it looks at the key's dtype: a Const
    # nothing reads (GE prunes it), but part of TorchAir's graph.
    ge.const(_int4_shape_factor(options.get("input_layout", "BSH"), key, value), DataType.DT_INT64)
    inputs: dict[str, Any] = {"query": query, "key0": key, "value0": value}
    for name in _FIA_OPTIONAL_INPUTS:
        inputs[name] = _length_const(options.get(name)) if name in _LENGTH_INPUTS else options.get(name)
    for name in _FIA_ROPE_INPUTS:
        if options.get(name) is not None:
            inputs[name] = options[name]
    for name in _FIA_TAIL_INPUTS:
        inputs[name] = None
    attrs: dict[str, Any] = {name: options.get(name, default) for name, default in _FIA_ATTRS}
    attrs.update(query_quant_mode=0, pse_type=0, out_dtype=0)
    return ge.op("FusedInferAttentionScore", inputs, attrs, outputs=("attention_out", "softmax_lse"))


def _int4_shape_factor(layout: str, key: ge.Tensor, value: ge.Tensor) -> list[int]:
    """What TorchAir multiplies an int4 key's int32 shape by (eight int4 per int32)."""
    if key.rank == 5 or value.rank == 5:
        return [1, 1, 1, 1, 8]
    return [1, 1, 8] if layout == "BSH" or key.rank == 3 or value.rank == 3 else [1, 1, 1, 8]


def _length_const(value: Any) -> ge.Tensor | None:
    """A list of sequence lengths as TorchAir passes it: an int64 ``Const``."""
    if value is None or isinstance(value, ge.Tensor):
        return value
    return ge.const([int(v) for v in value], DataType.DT_INT64)


def _fa_samples() -> list[Sample]:
    q, k, v = torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8)
    causal = torch.ones(4, 4, dtype=torch.bool).triu(1)
    return [
        Sample((q, k, v, 2, "BNSD"), {"atten_mask": causal, "scale": 0.35}),
        Sample((torch.randn(1, 3, 16), torch.randn(1, 3, 16), torch.randn(1, 3, 16), 2, "BSH")),
    ]


@npu_converter("npu_fusion_attention.default", _fa_samples)
def convert_fusion_attention(
    query: ge.Tensor,
    key: ge.Tensor,
    value: ge.Tensor,
    head_num: int,
    input_layout: str,
    *args: Any,
    meta_outputs: Any = None,
    **kwargs: Any,
) -> tuple[Any, ...]:
    """npu_fusion_attention(Tensor query, Tensor key, Tensor value, int head_num, str input_layout, Tensor? pse=None, ...) -> (Tensor, Tensor, Tensor, Tensor, int, int, int)"""
    names = (
        "pse",
        "padding_mask",
        "atten_mask",
        "scale",
        "keep_prob",
        "pre_tockens",
        "next_tockens",
        "inner_precise",
        "prefix",
        "actual_seq_qlen",
        "actual_seq_kvlen",
        "sparse_mode",
    )
    options = {**dict(zip(names, args)), **kwargs}
    keep_prob = float(options.get("keep_prob", 1.0))
    if input_layout not in ("BSH", "BNSD") or not math.isclose(keep_prob, 1.0, rel_tol=1e-9):
        raise NotImplementedError("TorchAir converts npu_fusion_attention only for BSH/BNSD layouts without dropout (keep_prob 1)")
    inputs = {
        "query": query,
        "key": key,
        "value": value,
        "real_shift": None,
        "drop_mask": None,
        "padding_mask": options.get("padding_mask"),
        "atten_mask": options.get("atten_mask"),
        "prefix": _length_const(options.get("prefix")),
        "actual_seq_qlen": _length_const(options.get("actual_seq_qlen")),
        "actual_seq_kvlen": _length_const(options.get("actual_seq_kvlen")),
        # TorchAir passes Python 0s, which its op wrapper makes scalar Consts.
        "q_start_idx": ge.const(0, DataType.DT_INT64),
        "kv_start_idx": ge.const(0, DataType.DT_INT64),
    }
    attrs = {
        "scale_value": float(options.get("scale", 1.0)),
        "keep_prob": keep_prob,
        "pre_tockens": int(options.get("pre_tockens", _INT32_MAX)),
        "next_tockens": int(options.get("next_tockens", _INT32_MAX)),
        "head_num": int(head_num),
        "input_layout": input_layout,
        "inner_precise": int(options.get("inner_precise", 0)),
        "sparse_mode": int(options.get("sparse_mode", 0)),
    }
    softmax_max, softmax_sum, softmax_out, attention_out = ge.op(
        "FlashAttentionScore", inputs, attrs, outputs=("softmax_max", "softmax_sum", "softmax_out", "attention_out")
    )
    return attention_out, softmax_max, softmax_sum, softmax_out, 0, 0, 0


# -- MoE and quantisation -----------------------------------------------------------------------
@npu_converter(
    "npu_moe_gating_top_k_softmax.default",
    lambda: [Sample((torch.randn(5, 8),), {"k": 2}), Sample((torch.randn(3, 4), torch.tensor([False, True, False]), 1))],
)
def convert_moe_gating_top_k_softmax(
    x: ge.Tensor, finished: ge.Tensor | None = None, k: int = 1, *, meta_outputs: Any = None
) -> list[ge.Tensor]:
    """npu_moe_gating_top_k_softmax(Tensor x, Tensor? finished=None, int k=1) -> (Tensor, Tensor, Tensor)"""
    return ge.op("MoeGatingTopKSoftmax", {"x": x, "finished": finished}, {"k": int(k)}, outputs=("y", "expert_idx", "row_idx"))


@npu_converter(
    "npu_dynamic_quant.default",
    lambda: [Sample((torch.randn(3, 16),)), Sample((torch.randn(2, 3, 8),), {"smooth_scales": torch.rand(8) + 0.5})],
)
def convert_dynamic_quant(
    input: ge.Tensor,
    *,
    smooth_scales: ge.Tensor | None = None,
    group_index: ge.Tensor | None = None,
    dst_type: int | None = None,
    quant_mode: str = "pertoken",
    dst_type_max: float = 0.0,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_dynamic_quant(Tensor input, *, Tensor? smooth_scales=None, Tensor? group_index=None, int? dst_type=None, str quant_mode="pertoken", float dst_type_max=0.0) -> (Tensor, Tensor)"""
    if dst_type not in (None, 1) or quant_mode != "pertoken":
        raise NotImplementedError("npu_dynamic_quant: only per-token int8 has fxlab's converter; use --converter torchair for the others")
    # TorchAir's op wrapper leaves out absent optional inputs and attrs at their IR default
    # (dst_type DT_INT8 here), so neither is written.
    inputs = {"x": input, "smooth_scales": smooth_scales, "group_index": group_index}
    while inputs[next(reversed(inputs))] is None:
        inputs.popitem()
    return ge.op("DynamicQuant", inputs, {}, outputs=("y", "scale"))
