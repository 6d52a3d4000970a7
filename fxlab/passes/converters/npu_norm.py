"""Converters of torch_npu's normalisation operators, making the GE ops TorchAir makes.

From TorchAir's converters (``ge_converter/custom/`` of torch_npu 2.13.0):
``npu_rms_norm`` → ``RmsNorm``, ``npu_add_rms_norm`` → ``AddRmsNorm``,
``npu_add_rms_norm_v2_functional`` → ``TensorMove`` of both inputs + ``AddRmsNorm``,
``npu_add_rms_norm_cast`` → ``AddRmsNormCast``, ``npu_add_rms_norm_dynamic_quant`` →
``AddRmsNormDynamicQuant`` (unwanted outputs as empty ``Const`` ops),
``npu_rms_norm_backward`` → ``RmsNormGrad``, ``_npu_rms_norm_backward_quant`` →
``RmsNormGradQuant``, ``npu_group_norm_silu`` → ``GroupNormSilu``,
``batch_norm_gather_stats_update`` → ``Cast`` of the counts + ``SyncBatchNormGatherStats``
(NCHW layout hints), ``npu_rms_norm_dynamic_mx_quant`` / ``npu_add_rms_norm_dynamic_mx_quant``
→ ``RmsNormDynamicMxQuant`` / ``AddRmsNormDynamicMxQuant`` (float4 results repacked into
uint8). Kernels: :mod:`fxlab.ir.kernels.npu_norm`.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType
from fxlab.passes.converters.layouts import input_layout, output_layout
from fxlab.ir.npu_dtypes import FLOAT4_X2
from fxlab.passes.converters.npu import npu_converter
from fxlab.passes.converters.npu_builders import compact_op, empty_const, npu_dtype, packed, refuse
from fxlab.passes.converters.npu_quant import torchair_number
from fxlab.passes.converters.registry import Sample


def _hidden(*shape: int) -> torch.Tensor:
    return torch.randn(*shape).half()


# -- RMSNorm ------------------------------------------------------------------------------------
@npu_converter(
    "npu_rms_norm.default",
    lambda: [Sample((_hidden(2, 3, 8), torch.randn(8).half())), Sample((torch.randn(4, 16), torch.randn(16), 1e-2))],
)
def convert_rms_norm(self: ge.Tensor, gamma: ge.Tensor, epsilon: float = 1e-6, *, meta_outputs: Any = None) -> list[ge.Tensor]:
    """npu_rms_norm(Tensor self, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor)"""
    return ge.op("RmsNorm", {"x": self, "gamma": gamma}, {"epsilon": float(epsilon)}, outputs=("y", "rstd"))


def _add_norm_samples() -> list[Sample]:
    return [
        Sample((_hidden(2, 3, 8), _hidden(2, 3, 8), torch.randn(8).half())),
        Sample((torch.randn(4, 8), torch.randn(4, 8), torch.randn(8), 1e-5)),
    ]


@npu_converter("npu_add_rms_norm.default", _add_norm_samples)
def convert_add_rms_norm(
    x1: ge.Tensor, x2: ge.Tensor, gamma: ge.Tensor, epsilon: float = 1e-6, *, meta_outputs: Any = None
) -> list[ge.Tensor]:
    """npu_add_rms_norm(Tensor x1, Tensor x2, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor, Tensor)"""
    return ge.op("AddRmsNorm", {"x1": x1, "x2": x2, "gamma": gamma}, {"epsilon": float(epsilon)}, outputs=("y", "rstd", "x"))


@npu_converter("npu_add_rms_norm_v2_functional.default", _add_norm_samples)
def convert_add_rms_norm_v2_functional(
    x1: ge.Tensor, x2: ge.Tensor, gamma: ge.Tensor, epsilon: float = 1e-6, *, meta_outputs: Any = None
) -> list[ge.Tensor]:
    """npu_add_rms_norm_v2_functional(Tensor x1, Tensor x2, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor, Tensor)"""
    moved = {"x1": ge.op1("TensorMove", {"x": x1}), "x2": ge.op1("TensorMove", {"x": x2}), "gamma": gamma}
    y, rstd, x = ge.op("AddRmsNorm", moved, {"epsilon": float(epsilon)}, outputs=("y", "rstd", "x"))
    return [rstd, y, x]


@npu_converter("npu_add_rms_norm_cast.default", _add_norm_samples)
def convert_add_rms_norm_cast(
    x1: ge.Tensor, x2: ge.Tensor, gamma: ge.Tensor, epsilon: float = 1e-6, *, meta_outputs: Any = None
) -> list[ge.Tensor]:
    """npu_add_rms_norm_cast(Tensor x1, Tensor x2, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor, Tensor, Tensor)"""
    inputs = {"x1": x1, "x2": x2, "gamma": gamma}
    return compact_op("AddRmsNormCast", inputs, {"epsilon": float(epsilon)}, {"epsilon": 1e-6}, outputs=("y1", "y2", "rstd", "x"))


def _add_norm_quant_samples() -> list[Sample]:
    x1, x2, gamma = _hidden(2, 3, 16), _hidden(2, 3, 16), torch.randn(16).half()
    smooth = (torch.rand(16) + 0.5).half()
    return [
        Sample((x1, x2, gamma)),
        Sample((x1, x2, gamma), {"smooth_scale1": smooth, "smooth_scale2": smooth.flip(0), "beta": torch.randn(16).half()}),
        Sample((x1, x2, gamma), {"smooth_scale1": smooth, "output_mask": [False, True], "epsilon": 1e-5}),
        Sample((x1, x2, gamma), {"y_dtype": 16}),
    ]


@npu_converter("npu_add_rms_norm_dynamic_quant.default", _add_norm_quant_samples)
def convert_add_rms_norm_dynamic_quant(
    x1: ge.Tensor,
    x2: ge.Tensor,
    gamma: ge.Tensor,
    *,
    smooth_scale1: ge.Tensor | None = None,
    smooth_scale2: ge.Tensor | None = None,
    beta: ge.Tensor | None = None,
    epsilon: float = 1e-6,
    output_mask: list[bool] | None = None,
    y_dtype: int | None = None,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_add_rms_norm_dynamic_quant(Tensor x1, Tensor x2, Tensor gamma, *, Tensor? smooth_scale1=None, Tensor? smooth_scale2=None, Tensor? beta=None, float epsilon=1e-6, bool[2]? output_mask=None, int? y_dtype=None) -> (Tensor, Tensor, Tensor, Tensor, Tensor)"""
    code = 1 if y_dtype is None else int(y_dtype)
    target = npu_dtype(code)
    inputs = {"x1": x1, "x2": x2, "gamma": gamma, "smooth_scale1": smooth_scale1, "smooth_scale2": smooth_scale2, "beta": beta}
    attrs = {"epsilon": float(epsilon), "output_mask": [bool(m) for m in output_mask or []], "dst_type": torchair_number(code)}
    defaults = {"epsilon": 1e-6, "output_mask": [], "dst_type": 1}
    outputs = ("y1", "y2", "x", "scale1", "scale2")
    y1, y2, x, scale1, scale2 = compact_op("AddRmsNormDynamicQuant", inputs, attrs, defaults, outputs=outputs)
    wanted = list(output_mask) if output_mask is not None else [True, smooth_scale1 is not None and smooth_scale2 is not None]
    ge.set_dtype(y1, target)
    ge.set_dtype(y2, target)
    if not wanted[0]:
        y1, scale1 = empty_const(target), ge.const([], DataType.DT_FLOAT)
    if not wanted[1]:
        y2, scale2 = empty_const(target), ge.const([], DataType.DT_FLOAT)
    if target == DataType.DT_INT4:
        divisor = ge.const([1] * (x1.rank - 1) + [8], DataType.DT_INT32)
        y1 = packed(y1, x1.rank, 8, DataType.DT_INT32, divisor=divisor) if wanted[0] else ge.const([], DataType.DT_INT32)
        y2 = packed(y2, x1.rank, 8, DataType.DT_INT32, divisor=divisor) if wanted[1] else ge.const([], DataType.DT_INT32)
    return [y1, y2, x, scale1, scale2]


# -- backward -------------------------------------------------------------------------------------
def _backward_samples() -> list[Sample]:
    x, gamma = torch.randn(2, 4, 16), torch.randn(16)
    rstd = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    return [Sample((torch.randn(2, 4, 16), x, gamma, rstd)), Sample((torch.randn(2, 4, 16).half(), x.half(), gamma.half(), rstd))]


@npu_converter("npu_rms_norm_backward.default", _backward_samples)
def convert_rms_norm_backward(
    dy: ge.Tensor, self: ge.Tensor, gamma: ge.Tensor, rstd: ge.Tensor, *, meta_outputs: Any = None
) -> list[ge.Tensor]:
    """npu_rms_norm_backward(Tensor dy, Tensor self, Tensor gamma, Tensor rstd) -> (Tensor, Tensor)"""
    return ge.op("RmsNormGrad", {"dy": dy, "x": self, "rstd": rstd, "gamma": gamma}, {}, outputs=("dx", "dgamma"))


def _backward_quant_samples() -> list[Sample]:
    x, gamma = torch.randn(2, 4, 16).half(), torch.randn(16).half()
    rstd = torch.rsqrt(x.float().pow(2).mean(-1) + 1e-6)
    return [
        Sample((torch.randn(2, 4, 16).half(), x, rstd, gamma, torch.tensor([0.05]))),
        Sample(
            (torch.randn(2, 4, 16).half(), x, rstd, gamma, torch.tensor([8.0])),
            {"offset_x": torch.tensor([3], dtype=torch.int32), "div_mode": False},
        ),
    ]


@npu_converter("_npu_rms_norm_backward_quant.default", _backward_quant_samples)
def convert_rms_norm_backward_quant(
    dy: ge.Tensor,
    x: ge.Tensor,
    rstd: ge.Tensor,
    gamma: ge.Tensor,
    scale_x: ge.Tensor,
    *,
    offset_x: ge.Tensor | None = None,
    div_mode: bool = True,
    quant_mode: str = "static",
    dst_type: int = 1,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """_npu_rms_norm_backward_quant(Tensor dy, Tensor x, Tensor rstd, Tensor gamma, Tensor scale_x, *, Tensor? offset_x=None, bool? div_mode=True, str quant_mode="static", int? dst_type=1) -> (Tensor, Tensor)"""
    inputs = {"dy": dy, "x": x, "rstd": rstd, "gamma": gamma, "scale_x": scale_x, "offset_x": offset_x}
    attrs = {"div_mode": bool(div_mode), "quant_mode": quant_mode, "dst_type": torchair_number(dst_type)}
    defaults = {"div_mode": True, "quant_mode": "static", "dst_type": 2}
    return compact_op("RmsNormGradQuant", inputs, attrs, defaults, outputs=("dx_out", "dgamma_out"))


# -- GroupNorm + SiLU, sync batch norm ----------------------------------------------------------
@npu_converter(
    "npu_group_norm_silu.default",
    lambda: [
        Sample((_hidden(2, 8, 4, 4), torch.randn(8).half(), torch.randn(8).half(), 4, 1e-5)),
        Sample((torch.randn(2, 6, 5), None, None, 3, 1e-4)),
    ],
)
def convert_group_norm_silu(
    self: ge.Tensor, weight: ge.Tensor | None, bias: ge.Tensor | None, group: int, eps: float = 1e-4, *, meta_outputs: Any = None
) -> list[ge.Tensor]:
    """npu_group_norm_silu(Tensor input, Tensor? weight, Tensor? bias, int group, float eps=0.00001) -> (Tensor, Tensor, Tensor)

    An ``eps`` left out is 1e-4 here, as in TorchAir's converter (torch_npu's own default
    is 1e-5: see :data:`fxlab.passes.torchair_refusals.WRONG_RESULTS`)."""
    inputs = {"x": self, "gamma": weight, "beta": bias}
    return ge.op("GroupNormSilu", inputs, {"num_groups": int(group), "eps": float(eps)}, outputs=("y", "mean", "variance"))


def _gather_stats_samples() -> list[Sample]:
    x = torch.randn(2, 4, 3, 3)
    sums, squares = torch.randn(2, 4) * 9, torch.rand(2, 4) * 9 + 9
    return [Sample((x, sums, squares, torch.zeros(4), torch.ones(4), 0.1, 1e-5, torch.tensor([9.0, 9.0])))]


@npu_converter("batch_norm_gather_stats_update.default", _gather_stats_samples)
def convert_batch_norm_gather_stats_update(
    input: ge.Tensor,
    mean: ge.Tensor,
    invstd: ge.Tensor,
    running_mean: ge.Tensor | None,
    running_var: ge.Tensor | None,
    momentum: float,
    eps: float,
    counts: ge.Tensor,
    *,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """batch_norm_gather_stats_update(Tensor input, Tensor mean, Tensor invstd, Tensor? running_mean, Tensor? running_var, float momentum, float eps, Tensor counts) -> (Tensor, Tensor)"""
    if input.rank != 4:
        refuse(
            "NotImplementedError: ge_converter is only implemented for 4D input!",
            "custom/npu_batch_norm_gather_stats_update.py:22",
        )
    inputs = {
        "total_sum": mean,
        "total_square_sum": invstd,
        "sample_count": ge.cast(counts, DataType.DT_INT32),
        "mean": running_mean,
        "variance": running_var,
    }
    outputs = ("batch_mean", "batch_invstd", "mean", "variance")
    batch_mean, batch_invstd, _, _ = ge.op(
        "SyncBatchNormGatherStats", inputs, {"momentum": float(momentum), "eps": float(eps)}, outputs=outputs
    )
    input_layout(batch_mean, [0, 1, 2, 3, 4], "NCHW")
    output_layout(batch_mean, [0, 1, 2, 3], "NCHW")
    return [batch_mean, batch_invstd]


# -- RMSNorm with MX quantisation ---------------------------------------------------------------
def _mx_attrs(epsilon: float, scale_alg: int, round_mode: str, dst_type: int) -> tuple[dict[str, Any], dict[str, Any]]:
    attrs = {
        "epsilon": float(epsilon),
        "scale_alg": int(scale_alg),
        "round_mode": round_mode,
        "dst_type": torchair_number(dst_type),
        "output_rstd": False,
    }
    return attrs, {"epsilon": 1e-6, "scale_alg": 0, "round_mode": "rint", "dst_type": 40, "output_rstd": False}


def _mx_result(y: ge.Tensor, mxscale: ge.Tensor, rank: int, dst_type: int) -> ge.Tensor:
    """The MX-quantised values typed as torch_npu asked, float4 repacked two to a byte."""
    ge.set_dtype(y, npu_dtype(dst_type))
    ge.set_dtype(mxscale, DataType.DT_FLOAT8_E8M0)
    return packed(y, rank, 2, DataType.DT_UINT8, cast_consts=True) if dst_type in FLOAT4_X2 else y


@npu_converter(
    "npu_rms_norm_dynamic_mx_quant.default",
    lambda: [
        Sample((_hidden(4, 64), torch.randn(64).half())),
        Sample((_hidden(4, 64), torch.randn(64).half()), {"beta": torch.randn(64).half(), "dst_type": 24}),
    ],
)
def convert_rms_norm_dynamic_mx_quant(
    x: ge.Tensor,
    gamma: ge.Tensor,
    *,
    beta: ge.Tensor | None = None,
    epsilon: float = 1e-6,
    scale_alg: int = 0,
    round_mode: str = "rint",
    dst_type: int = 296,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_rms_norm_dynamic_mx_quant(Tensor x, Tensor gamma, *, Tensor? beta=None, float epsilon=1e-06, int scale_alg=0, str round_mode="rint", int dst_type=296) -> (Tensor, Tensor, Tensor)"""
    attrs, defaults = _mx_attrs(epsilon, scale_alg, round_mode, dst_type)
    y, mxscale, rstd = compact_op(
        "RmsNormDynamicMxQuant", {"x": x, "gamma": gamma, "beta": beta}, attrs, defaults, outputs=("y", "mxscale", "rstd")
    )
    return [_mx_result(y, mxscale, x.rank, dst_type), mxscale, rstd]


@npu_converter(
    "npu_add_rms_norm_dynamic_mx_quant.default",
    lambda: [
        Sample((_hidden(4, 64), _hidden(4, 64), torch.randn(64).half())),
        Sample((_hidden(4, 64), _hidden(4, 64), torch.randn(64).half()), {"dst_type": 23}),
    ],
)
def convert_add_rms_norm_dynamic_mx_quant(
    x1: ge.Tensor,
    x2: ge.Tensor,
    gamma: ge.Tensor,
    *,
    beta: ge.Tensor | None = None,
    epsilon: float = 1e-6,
    scale_alg: int = 0,
    round_mode: str = "rint",
    dst_type: int = 296,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_add_rms_norm_dynamic_mx_quant(Tensor x1, Tensor x2, Tensor gamma, *, Tensor? beta=None, float epsilon=1e-06, int scale_alg=0, str round_mode="rint", int dst_type=296) -> (Tensor, Tensor, Tensor, Tensor)"""
    attrs, defaults = _mx_attrs(epsilon, scale_alg, round_mode, dst_type)
    inputs = {"x1": x1, "x2": x2, "gamma": gamma, "beta": beta}
    y, x, mxscale, rstd = compact_op("AddRmsNormDynamicMxQuant", inputs, attrs, defaults, outputs=("y", "x", "mxscale", "rstd"))
    return [_mx_result(y, mxscale, x1.rank, dst_type), x, mxscale, rstd]
