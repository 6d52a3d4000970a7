"""Converters of torch_npu's MLA prologs (DeepSeek's multi-head latent attention before the
attention itself), as TorchAir makes them.

``npu_mla_prolog`` → ``MlaProlog``, ``_v2`` → ``MlaPrologV2``, ``_v3`` → ``MlaPrologV3``
on the caches themselves (the op writes them), ``_v3_functional`` → two ``TensorMove``
of the caches + ``MlaPrologV3``, outputs reordered. Every wrapper writes a placeholder per
absent optional input and every attr. TorchAir's HiFloat8 bitcasts (``weight_quant_mode``
5 with a ``*_dtype`` of hifloat8, and the outputs typed so by hand) are not built here
yet: those calls fail naming them. The reference kernels are in :mod:`fxlab.ir.kernels.npu_mla`.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.npu_dtypes import HIFLOAT8
from fxlab.passes.converters.npu import npu_converter
from fxlab.passes.converters.npu_builders import tensor_move
from fxlab.passes.converters.registry import Sample

WEIGHT_NAMES = (
    "token_x",
    "weight_dq",
    "weight_uq_qr",
    "weight_uk",
    "weight_dkv_kr",
    "rmsnorm_gamma_cq",
    "rmsnorm_gamma_ckv",
    "rope_sin",
    "rope_cos",
)
QUANT_NAMES = (
    "dequant_scale_x",
    "dequant_scale_w_dq",
    "dequant_scale_w_uq_qr",
    "dequant_scale_w_dkv_kr",
    "quant_scale_ckv",
    "quant_scale_ckr",
    "smooth_scales_cq",
)
V3_ATTRS = (
    ("query_norm_flag", False),
    ("weight_quant_mode", 0),
    ("kv_cache_quant_mode", 0),
    ("query_quant_mode", 0),
    ("ckvkr_repo_mode", 0),
    ("quant_scale_repo_mode", 0),
    ("tile_size", 128),
    ("qc_qr_scale", 1.0),
    ("kc_scale", 1.0),
)
V3_DTYPES = ("token_x_dtype", "weight_dq_dtype", "weight_uq_qr_dtype", "weight_dkv_kr_dtype", "kv_cache_dtype")
V1_OUTPUTS = ("query", "query_rope", "kv_cache", "kr_cache")


def _common_attrs(options: dict[str, Any]) -> dict[str, Any]:
    return {
        "rmsnorm_epsilon_cq": float(options.get("rmsnorm_epsilon_cq", 1e-5)),
        "rmsnorm_epsilon_ckv": float(options.get("rmsnorm_epsilon_ckv", 1e-5)),
        "cache_mode": options.get("cache_mode", "PA_BSND"),
    }


def mla_tensors(tokens: int = 2, batch: int = 2, heads: int = 2) -> tuple[torch.Tensor, ...]:
    """A small MLA prolog's inputs (bf16): hidden 32, q rank 16, kv rank 16, head dims 8
    (nope) and 4 (rope), a paged cache of 4 blocks of 2 tokens."""
    bf16 = torch.bfloat16
    return (
        torch.randn(batch, tokens, 32).to(bf16),
        (torch.randn(32, 16) * 0.2).to(bf16),
        (torch.randn(16, heads * 12) * 0.2).to(bf16),
        (torch.randn(heads, 8, 16) * 0.2).to(bf16),
        (torch.randn(32, 20) * 0.2).to(bf16),
        (torch.rand(16) + 0.5).to(bf16),
        (torch.rand(16) + 0.5).to(bf16),
        torch.randn(batch, tokens, 4).to(bf16),
        torch.randn(batch, tokens, 4).to(bf16),
    )


def _caches() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.zeros(4, 2, 1, 16).to(torch.bfloat16), torch.zeros(4, 2, 1, 4).to(torch.bfloat16)


def _v1_samples() -> list[Sample]:
    index = torch.tensor([[0, 1], [5, 6]])
    return [Sample((*mla_tensors(), index, *_caches()), {"rmsnorm_epsilon_cq": 1e-6})]


def _v1_op(op_type: str, args: tuple[Any, ...], options: dict[str, Any], outputs: tuple[str, ...]) -> list[ge.Tensor]:
    inputs: dict[str, Any] = dict(zip((*WEIGHT_NAMES, "cache_index", "kv_cache", "kr_cache"), args))
    inputs.update({n: options.get(n) for n in QUANT_NAMES})
    return ge.op(op_type, inputs, _common_attrs(options), outputs=outputs)


@npu_converter("npu_mla_prolog.default", _v1_samples)
def convert_mla_prolog(*args: Any, meta_outputs: Any = None, **options: Any) -> list[ge.Tensor]:
    """npu_mla_prolog(Tensor token_x, Tensor weight_dq, Tensor weight_uq_qr, Tensor weight_uk, Tensor weight_dkv_kr, Tensor rmsnorm_gamma_cq, Tensor rmsnorm_gamma_ckv, Tensor rope_sin, Tensor rope_cos, Tensor cache_index, Tensor kv_cache, Tensor kr_cache, *, ..., float rmsnorm_epsilon_cq=1e-05, float rmsnorm_epsilon_ckv=1e-05, str cache_mode="PA_BSND") -> (Tensor, Tensor, Tensor, Tensor)"""
    return _v1_op("MlaProlog", args, options, V1_OUTPUTS)


@npu_converter("npu_mla_prolog_v2.default", _v1_samples)
def convert_mla_prolog_v2(*args: Any, meta_outputs: Any = None, **options: Any) -> list[ge.Tensor]:
    """npu_mla_prolog_v2(Tensor token_x, Tensor weight_dq, Tensor weight_uq_qr, Tensor weight_uk, Tensor weight_dkv_kr, Tensor rmsnorm_gamma_cq, Tensor rmsnorm_gamma_ckv, Tensor rope_sin, Tensor rope_cos, Tensor cache_index, Tensor kv_cache, Tensor kr_cache, *, ...) -> (Tensor, Tensor, Tensor, Tensor, Tensor)"""
    return _v1_op("MlaPrologV2", args, options, (*V1_OUTPUTS, "dequant_scale_q_nope"))


def _refuse_hifloat8(options: dict[str, Any]) -> None:
    if int(options.get("weight_quant_mode", 0)) == 5 and any(options.get(n) == HIFLOAT8 for n in V3_DTYPES):
        raise NotImplementedError(
            "HiFloat8 inputs: TorchAir bitcasts them to DT_HIFLOAT8, which the built-in converter does not build yet: "
            "convert with --converter torchair"
        )


def _v3_op(args: tuple[Any, ...], kv_cache: ge.Tensor, kr_cache: ge.Tensor, options: dict[str, Any]) -> list[ge.Tensor]:
    inputs: dict[str, Any] = dict(zip(WEIGHT_NAMES, args))
    inputs.update(kv_cache=kv_cache, kr_cache=kr_cache, cache_index=options.get("cache_index"))
    inputs.update({n: options.get(n) for n in (*QUANT_NAMES, "actual_seq_len", "k_nope_clip_alpha")})
    attrs = {**_common_attrs(options), **{name: options.get(name, default) for name, default in V3_ATTRS}}
    outputs = (*V1_OUTPUTS, "dequant_scale_q_nope", "query_norm", "dequant_scale_q_norm")
    return ge.op("MlaPrologV3", inputs, attrs, outputs=outputs)


def _v3_samples() -> list[Sample]:
    tensors = mla_tensors()
    return [Sample((*tensors, *_caches()), {"cache_index": torch.tensor([[0, 1], [5, 6]]), "cache_mode": "PA_BSND"})]


@npu_converter("npu_mla_prolog_v3.default", _v3_samples)
def convert_mla_prolog_v3(*args: Any, meta_outputs: Any = None, **options: Any) -> list[ge.Tensor]:
    """npu_mla_prolog_v3(Tensor token_x, Tensor weight_dq, Tensor weight_uq_qr, Tensor weight_uk, Tensor weight_dkv_kr, Tensor rmsnorm_gamma_cq, Tensor rmsnorm_gamma_ckv, Tensor rope_sin, Tensor rope_cos, Tensor(a!) kv_cache, Tensor(b!) kr_cache, *, Tensor? cache_index=None, ...) -> (Tensor, Tensor, Tensor, Tensor, Tensor)"""
    _refuse_hifloat8(options)
    # TorchAir returns all seven outputs and fails (torchair_refusals); converting it
    # anyway, the schema's five: the caches are written in place by the op.
    query, query_rope, _, _, scale_q_nope, query_norm, scale_q_norm = _v3_op(args[:9], args[9], args[10], options)
    return [query, query_rope, scale_q_nope, query_norm, scale_q_norm]


@npu_converter("npu_mla_prolog_v3_functional.default", _v3_samples)
def convert_mla_prolog_v3_functional(*args: Any, meta_outputs: Any = None, **options: Any) -> list[ge.Tensor]:
    """npu_mla_prolog_v3_functional(Tensor token_x, Tensor weight_dq, Tensor weight_uq_qr, Tensor weight_uk, Tensor weight_dkv_kr, Tensor rmsnorm_gamma_cq, Tensor rmsnorm_gamma_ckv, Tensor rope_sin, Tensor rope_cos, Tensor kv_cache, Tensor kr_cache, *, Tensor? cache_index=None, ...) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)"""
    _refuse_hifloat8(options)
    query, query_rope, kv_out, kr_out, scale_q_nope, query_norm, scale_q_norm = _v3_op(
        args[:9], tensor_move(args[9]), tensor_move(args[10]), options
    )
    return [query, query_rope, scale_q_nope, query_norm, scale_q_norm, kv_out, kr_out]
