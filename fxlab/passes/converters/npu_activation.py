"""Converters of torch_npu's activation operators, making the GE ops TorchAir makes.

From TorchAir's converters (``ge_converter/custom/`` of torch_npu 2.13.0):
``npu_swiglu`` → ``SwiGlu``, ``npu_swiglu_backward`` → ``SwiGluGrad``,
``npu_clipped_swiglu`` → ``ClippedSwiglu``, ``npu_gelu`` / ``npu_gelu_backward`` →
``GeluV2`` / ``GeluGradV2``, ``fast_gelu`` and ``npu_fast_gelu`` → ``FastGelu``,
``npu_fast_gelu_backward`` → ``FastGeluGrad``, ``npu_geglu`` → ``GeGluV2``,
``npu_gelu_quant`` → ``GeluQuant``, ``npu_dequant_swiglu_quant`` →
``DequantSwigluQuant``, ``npu_swiglu_mx_quant`` → ``SwigluMxQuant`` (float4 results
repacked two to a byte). Kernels: :mod:`fxlab.ir.kernels.npu_activation`.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType
from fxlab.ir.npu_dtypes import FLOAT4_X2, HIFLOAT8
from fxlab.passes.converters.npu import npu_converter
from fxlab.passes.converters.npu_builders import compact_op, npu_dtype, packed, refuse
from fxlab.passes.converters.npu_quant import torchair_number
from fxlab.passes.converters.registry import Sample


def _x(*shape: int) -> torch.Tensor:
    return torch.randn(*shape).half()


# -- SwiGLU ---------------------------------------------------------------------------------------
@npu_converter("npu_swiglu.default", lambda: [Sample((_x(2, 8),)), Sample((torch.randn(4, 6, 3), 1))])
def convert_swiglu(self: ge.Tensor, dim: int = -1, *, meta_outputs: Any = None) -> ge.Tensor:
    """npu_swiglu(Tensor self, int dim=-1) -> Tensor"""
    return ge.op1("SwiGlu", {"x": self}, {"dim": int(dim)})


@npu_converter(
    "npu_swiglu_backward.default", lambda: [Sample((_x(2, 4), _x(2, 8))), Sample((torch.randn(2, 3, 3), torch.randn(4, 3, 3), 0))]
)
def convert_swiglu_backward(grad_output: ge.Tensor, self: ge.Tensor, dim: int = -1, *, meta_outputs: Any = None) -> ge.Tensor:
    """npu_swiglu_backward(Tensor grad_output, Tensor self, int dim=-1) -> Tensor"""
    return ge.op1("SwiGluGrad", {"y_grad": grad_output, "x": self}, {"dim": int(dim)})


@npu_converter(
    "npu_clipped_swiglu.default",
    lambda: [Sample((torch.randn(3, 16) * 5,)), Sample((_x(3, 16),), {"alpha": 1.5, "limit": 3.0, "bias": 0.5, "interleaved": False})],
)
def convert_clipped_swiglu(
    x: ge.Tensor,
    *,
    group_index: ge.Tensor | None = None,
    dim: int = -1,
    alpha: float = 1.702,
    limit: float = 7.0,
    bias: float = 1.0,
    interleaved: bool = True,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """npu_clipped_swiglu(Tensor x, *, Tensor? group_index=None, int dim=-1, float alpha=1.702, float limit=7.0, float bias=1.0, bool interleaved=True) -> Tensor"""
    attrs = {"dim": int(dim), "alpha": float(alpha), "limit": float(limit), "bias": float(bias), "interleaved": bool(interleaved)}
    return ge.op1("ClippedSwiglu", {"x": x, "group_index": group_index}, attrs)


# -- GELU family -----------------------------------------------------------------------------------
def _check_approximate(approximate: str, where: str) -> None:
    if approximate not in ("tanh", "none"):
        refuse("ValueError: approximate argument must be either none or tanh.", where)


@npu_converter("npu_gelu.default", lambda: [Sample((_x(3, 8),)), Sample((torch.randn(3, 8),), {"approximate": "tanh"})])
def convert_gelu(self: ge.Tensor, *, approximate: str = "none", meta_outputs: Any = None) -> ge.Tensor:
    """npu_gelu(Tensor self, *, str approximate='none') -> Tensor"""
    _check_approximate(approximate, "custom/npu_gelu.py:14")
    return compact_op("GeluV2", {"x": self}, {"approximate": approximate}, {"approximate": "none"})[0]


@npu_converter(
    "npu_gelu_backward.default",
    lambda: [Sample((_x(3, 8), _x(3, 8))), Sample((torch.randn(3, 8), torch.randn(3, 8)), {"approximate": "tanh"})],
)
def convert_gelu_backward(grad_output: ge.Tensor, self: ge.Tensor, *, approximate: str = "none", meta_outputs: Any = None) -> ge.Tensor:
    """npu_gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor"""
    _check_approximate(approximate, "custom/npu_gelu_backward.py:16")
    return compact_op("GeluGradV2", {"dy": grad_output, "x": self}, {"approximate": approximate}, {"approximate": "none"}, outputs=("z",))[
        0
    ]


def _fast_gelu(self: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    return ge.op1("FastGelu", {"x": self})


@npu_converter("npu_fast_gelu.default", lambda: [Sample((_x(3, 8),)), Sample((torch.randn(2, 3, 4),))])
def convert_npu_fast_gelu(self: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """npu_fast_gelu(Tensor self) -> Tensor"""
    return _fast_gelu(self)


@npu_converter("fast_gelu.default", lambda: [Sample((_x(3, 8),))])
def convert_fast_gelu(self: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """fast_gelu(Tensor self) -> Tensor"""
    return _fast_gelu(self)


@npu_converter("npu_fast_gelu_backward.default", lambda: [Sample((_x(3, 8), _x(3, 8)))])
def convert_fast_gelu_backward(grad: ge.Tensor, self: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """npu_fast_gelu_backward(Tensor grad, Tensor self) -> Tensor"""
    return ge.op("FastGeluGrad", {"dy": grad, "x": self}, {}, outputs=("z",))[0]


@npu_converter("npu_geglu.default", lambda: [Sample((_x(3, 8),)), Sample((torch.randn(4, 3), 0, 0, True))])
def convert_geglu(
    self: ge.Tensor, dim: int = -1, approximate: int = 1, activate_left: bool = False, *, meta_outputs: Any = None
) -> list[ge.Tensor]:
    """npu_geglu(Tensor self, int dim=-1, int approximate=1, bool activate_left=False) -> (Tensor, Tensor)"""
    attrs = {"dim": int(dim), "approximate": int(approximate), "activate_left": bool(activate_left)}
    return compact_op("GeGluV2", {"x": self}, attrs, {"dim": -1, "approximate": 1, "activate_left": False}, outputs=("y", "gelu"))


# -- quantised activations -----------------------------------------------------------------------
_ROUND_MODES = {
    DataType.DT_HIFLOAT8: ("round", "hybrid"),
    DataType.DT_FLOAT8_E4M3FN: ("rint",),
    DataType.DT_FLOAT8_E5M2: ("rint",),
    DataType.DT_INT8: ("rint",),
}


def _gelu_quant_refusal(
    self: ge.Tensor, scale: ge.Tensor | None, offset: ge.Tensor | None, mode: str, target: DataType, rounding: str
) -> str | None:
    """TorchAir's reason to refuse these ``npu_gelu_quant`` arguments, if any."""
    if mode not in ("static", "dynamic"):
        return f"AssertionError: quant_mode:{mode} must be 'dynamic' or 'static'."
    if mode == "static" and scale is None:
        return "RuntimeError: If quant_mode is 'static', input_scale must not be None"
    if mode == "dynamic" and scale is None and offset is not None:
        return "RuntimeError: If quant_mode is 'dynamic', when input_offset is not None, input_scale must not be None too."
    if self.rank < 2 and mode == "dynamic":
        return "RuntimeError: Tensor self must be at least 2-dimensional when quant_mode is 'dynamic'."
    if target not in _ROUND_MODES:
        return "RuntimeError: dst_type not supported, only supports torch.int8(1), torch.float8_e5m2(23), torch.float8_e4m3fn(24), torch_npu.hifloat8(290)"
    if rounding not in _ROUND_MODES[target]:
        return f"RuntimeError: round_mode not supported for dst_type, support lists are:{list(_ROUND_MODES[target])}"
    return None


@npu_converter(
    "npu_gelu_quant.default",
    lambda: [
        Sample((_x(3, 16),)),
        Sample((_x(3, 16),), {"input_scale": (torch.rand(16) + 0.5).half(), "approximate": "tanh"}),
        Sample((_x(3, 16),), {"round_mode": "round"}),
    ],
)
def convert_gelu_quant(
    self: ge.Tensor,
    *,
    input_scale: ge.Tensor | None = None,
    input_offset: ge.Tensor | None = None,
    approximate: str = "none",
    quant_mode: str = "dynamic",
    dst_type: int | None = None,
    round_mode: str = "rint",
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_gelu_quant(Tensor self, *, Tensor? input_scale=None, Tensor? input_offset=None, str approximate='none', str quant_mode='dynamic', int? dst_type=None, str round_mode='rint') -> (Tensor, Tensor)"""
    target = DataType.DT_INT8 if dst_type is None else npu_dtype(dst_type)
    reason = _gelu_quant_refusal(self, input_scale, input_offset, quant_mode, target, round_mode)
    if reason is not None:
        refuse(reason, "custom/npu_gelu_quant.py")
    inputs = {"x": self, "input_scale": input_scale, "input_offset": input_offset}
    attrs = {
        "approximate": approximate,
        "quant_mode": quant_mode,
        "dst_type": torchair_number(1 if dst_type is None else dst_type),
        "round_mode": round_mode,
    }
    defaults = {"approximate": "none", "quant_mode": "dynamic", "dst_type": 2, "round_mode": "rint"}
    y, scale = compact_op("GeluQuant", inputs, attrs, defaults, outputs=("y", "out_scale"))
    if target == DataType.DT_HIFLOAT8:
        ge.set_dtype(y, npu_dtype(HIFLOAT8))
    return [y, scale]


def _dequant_swiglu_samples() -> list[Sample]:
    x = torch.randint(-2000, 2000, (4, 32), dtype=torch.int32)
    scales = {"weight_scale": torch.rand(32) * 0.01, "activation_scale": torch.rand(4) + 0.5, "quant_scale": torch.rand(1, 16) + 0.5}
    return [
        Sample((x,), {**scales, "activate_left": True, "quant_mode": 1}),
        Sample((x,), {**scales, "quant_mode": 1, "swiglu_mode": 1, "clamp_limit": 5.0}),
        Sample((x,), {**scales, "quant_mode": 0, "quant_offset": torch.zeros(1, 16)}),
    ]


_ROUND_MODE_NAMES = {1: "round", 2: "floor", 3: "ceil", 4: "trunc"}


@npu_converter("npu_dequant_swiglu_quant.default", _dequant_swiglu_samples)
def convert_dequant_swiglu_quant(
    x: ge.Tensor,
    *,
    weight_scale: ge.Tensor | None = None,
    activation_scale: ge.Tensor | None = None,
    bias: ge.Tensor | None = None,
    quant_scale: ge.Tensor | None = None,
    quant_offset: ge.Tensor | None = None,
    group_index: ge.Tensor | None = None,
    activate_left: bool = False,
    quant_mode: int = 0,
    dst_type: int | None = None,
    round_mode: int | None = None,
    activate_dim: int | None = None,
    swiglu_mode: int = 0,
    clamp_limit: float = 7.0,
    glu_alpha: float = 1.702,
    glu_bias: float = 1.0,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_dequant_swiglu_quant(Tensor x, *, Tensor? weight_scale=None, Tensor? activation_scale=None, Tensor? bias=None, Tensor? quant_scale=None, Tensor? quant_offset=None, Tensor? group_index=None, bool activate_left=False, int quant_mode=0, int? dst_type=None, int? round_mode=None, int? activate_dim=None, int swiglu_mode=0, float clamp_limit=7.0, float glu_alpha=1.702, float glu_bias=1.0) -> (Tensor, Tensor)"""
    code = 1 if dst_type is None else int(dst_type)
    inputs = {
        "x": x,
        "weight_scale": weight_scale,
        "activation_scale": activation_scale,
        "bias": bias,
        "quant_scale": quant_scale,
        "quant_offset": quant_offset,
        "group_index": group_index,
    }
    attrs = {
        "activate_left": bool(activate_left),
        "quant_mode": "dynamic" if quant_mode == 1 else "static",
        "dst_type": torchair_number(code),
        "round_mode": _ROUND_MODE_NAMES.get(round_mode or 0, "rint"),
        "activate_dim": -1 if activate_dim is None else int(activate_dim),
        "swiglu_mode": int(swiglu_mode),
        "clamp_limit": float(clamp_limit),
        "glu_alpha": float(glu_alpha),
        "glu_bias": float(glu_bias),
    }
    defaults = {"activate_left": False, "quant_mode": "static", "swiglu_mode": 0, "clamp_limit": 7.0, "glu_alpha": 1.702, "glu_bias": 1.0}
    y, scale = compact_op("DequantSwigluQuant", inputs, attrs, defaults, outputs=("y", "scale"))
    ge.set_dtype(y, npu_dtype(code))
    return [packed(y, x.rank, 2, DataType.DT_UINT8, cast_consts=True) if code in FLOAT4_X2 else y, scale]


@npu_converter(
    "npu_swiglu_mx_quant.default", lambda: [Sample((_x(4, 128),)), Sample((_x(4, 128),), {"dst_type": 24, "activate_left": True})]
)
def convert_swiglu_mx_quant(
    x: ge.Tensor,
    *,
    group_index: ge.Tensor | None = None,
    activate_dim: int = -1,
    activate_left: bool = False,
    swiglu_mode: int = 0,
    clamp_limit: float = 7.0,
    glu_alpha: float = 1.702,
    glu_bias: float = 1.0,
    group_mode: int = 0,
    axis: int = -1,
    dst_type: int = 296,
    round_mode: str = "rint",
    scale_alg: int = 0,
    max_dtype_value: float = 0,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_swiglu_mx_quant(Tensor x, *, Tensor? group_index=None, int activate_dim=-1, bool activate_left=False, int swiglu_mode=0, float clamp_limit=7.0, float glu_alpha=1.702, float glu_bias=1.0, int group_mode=0, int axis=-1, int dst_type=296, str round_mode="rint", int scale_alg=0, float max_dtype_value=0) -> (Tensor, Tensor)"""
    attrs = {
        "activate_dim": int(activate_dim),
        "activate_left": bool(activate_left),
        "swiglu_mode": int(swiglu_mode),
        "clamp_limit": float(clamp_limit),
        "glu_alpha": float(glu_alpha),
        "glu_bias": float(glu_bias),
        "group_mode": int(group_mode),
        "axis": int(axis),
        "dst_type": torchair_number(dst_type),
        "round_mode": round_mode,
        "scale_alg": int(scale_alg),
        "max_dtype_value": float(max_dtype_value),
    }
    defaults = {
        "activate_dim": -1,
        "activate_left": False,
        "swiglu_mode": 0,
        "clamp_limit": 7.0,
        "glu_alpha": 1.702,
        "glu_bias": 1.0,
        "group_mode": 0,
        "axis": -1,
        "dst_type": 40,
        "round_mode": "rint",
        "scale_alg": 0,
        "max_dtype_value": 0.0,
    }
    y, scale = compact_op("SwigluMxQuant", {"x": x, "group_index": group_index}, attrs, defaults, outputs=("y", "mxscale"))
    ge.set_dtype(y, npu_dtype(dst_type))
    ge.set_dtype(scale, DataType.DT_FLOAT8_E8M0)
    return [packed(y, x.rank, 2, DataType.DT_UINT8, cast_consts=True) if dst_type in FLOAT4_X2 else y, scale]
