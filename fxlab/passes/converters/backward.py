"""Converters of the ``*_backward`` ops of training graphs: most map to one GE ``*Grad``
op; select/slice backward scatter or concatenate into zeros, padding backward is
``PadV3Grad``. Also the MSE loss.

GE's gradient ops take their operands in their own order (``SigmoidGrad(y, dy)``,
``HardtanhGrad(result, grad)``, ``SoftmaxGrad(softmax, grad_softmax)``), which is the
order TorchAir passes them in and fxlab keeps.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch.fx.experimental.symbolic_shapes import optimization_hint

from fxlab.ir import ge
from fxlab.ir.model import DataType, ge_dtype
from fxlab.passes.converters.promotion import cast_scalar, dtype_promote, index_input, output_dtype, scalar_input
from fxlab.passes.converters.shape import identity, shape_of, squeeze, unsqueeze
from fxlab.passes.converters.layouts import input_layout, output_layout
from fxlab.passes.converters.registry import Sample, register_converter

aten = torch.ops.aten
REDUCTIONS = ("none", "mean", "sum")  # ATen's reduction enum, as GE names it


def _g(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape).to(dtype)


@register_converter(aten.sigmoid_backward.default, samples=lambda: [Sample((_g(2, 3), torch.sigmoid(_g(2, 3))))])
def convert_sigmoid_backward(grad_output: ge.Tensor, output: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor"""
    return ge.op1("SigmoidGrad", {"y": output, "dy": grad_output}, {"complex_conj": False})


@register_converter(aten.tanh_backward.default, samples=lambda: [Sample((_g(2, 3), torch.tanh(_g(2, 3))))])
def convert_tanh_backward(grad_output: ge.Tensor, output: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """tanh_backward(Tensor grad_output, Tensor output) -> Tensor"""
    return ge.op1("TanhGrad", {"y": output, "dy": grad_output}, {"complex_conj": False})


@register_converter(aten.threshold_backward.default, samples=lambda: [Sample((_g(2, 3), _g(2, 3), 0)), Sample((_g(2, 3), _g(2, 3), 0.5))])
def convert_threshold_backward(grad_output: ge.Tensor, self: ge.Tensor, threshold: Any, meta_outputs: Any = None) -> ge.Tensor:
    """threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor"""
    self, grad_output = dtype_promote(output_dtype(meta_outputs), self, grad_output)
    if isinstance(threshold, ge.Tensor):
        raise NotImplementedError("threshold_backward is converted only for a number threshold (as in TorchAir)")
    if threshold == 0.0:  # ReLU's backward: GE has a faster op for it
        return ge.op1("ReluGrad", {"gradients": grad_output, "features": self})
    return ge.op1("ThresholdGradV2D", {"gradients": grad_output, "features": self}, {"threshold": float(threshold)})


@register_converter(aten.hardsigmoid_backward.default, samples=lambda: [Sample((_g(3, 4), _g(3, 4) * 4))])
def convert_hardsigmoid_backward(grad_output: ge.Tensor, self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """hardsigmoid_backward(Tensor grad_output, Tensor self) -> Tensor"""
    return ge.op1("HardSigmoidGrad", {"grads": grad_output, "input_x": self}, {"alpha": 0.16666666, "beta": 0.5})


@register_converter(aten.hardswish_backward.default, samples=lambda: [Sample((_g(3, 4), _g(3, 4) * 4))])
def convert_hardswish_backward(grad_output: ge.Tensor, self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """hardswish_backward(Tensor grad_output, Tensor self) -> Tensor"""
    return ge.op1("HardSwishGrad", {"grad": grad_output, "x": self})


@register_converter(
    aten.hardtanh_backward.default, samples=lambda: [Sample((_g(3, 4), _g(3, 4) * 2, -1.0, 1.0)), Sample((_g(4), _g(4), -0.5, 0.5))]
)
def convert_hardtanh_backward(grad_output: ge.Tensor, self: ge.Tensor, min_val: Any, max_val: Any, meta_outputs: Any = None) -> ge.Tensor:
    """hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor"""
    if isinstance(min_val, ge.Tensor) or isinstance(max_val, ge.Tensor):
        raise NotImplementedError("hardtanh_backward is converted only for number bounds (as in TorchAir)")
    return ge.op1("HardtanhGrad", {"result": self, "grad": grad_output}, {"min_val": float(min_val), "max_val": float(max_val)})


@register_converter(aten.leaky_relu_backward.default, samples=lambda: [Sample((_g(3, 4), _g(3, 4), 0.2, False))])
def convert_leaky_relu_backward(
    grad_output: ge.Tensor, self: ge.Tensor, negative_slope: Any, self_is_result: bool, meta_outputs: Any = None
) -> ge.Tensor:
    """leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope, bool self_is_result) -> Tensor"""
    if isinstance(negative_slope, ge.Tensor):
        raise NotImplementedError("leaky_relu_backward is converted only for a number negative_slope (as in TorchAir)")
    return ge.op1("LeakyReluGrad", {"gradients": grad_output, "features": self}, {"negative_slope": float(negative_slope)})


@register_converter(
    aten.elu_backward.default,
    samples=lambda: [Sample((_g(3, 4), 1.0, 1.0, 1.0, False, _g(3, 4))), Sample((_g(3, 4), 0.5, 2.0, 1.5, True, F.elu(_g(3, 4), 0.5)))],
)
def convert_elu_backward(
    grad_output: ge.Tensor, alpha: Any, scale: Any, input_scale: Any, is_result: bool, self_or_result: ge.Tensor, meta_outputs: Any = None
) -> ge.Tensor:
    """elu_backward(Tensor grad_output, Scalar alpha, Scalar scale, Scalar input_scale, bool is_result, Tensor self_or_result) -> Tensor"""
    if any(isinstance(v, ge.Tensor) for v in (alpha, scale, input_scale)):
        raise NotImplementedError("elu_backward is converted only for number alpha, scale and input_scale (as in TorchAir)")
    if is_result and alpha < 0:
        raise NotImplementedError("elu_backward from the result with a negative alpha is not supported (as in TorchAir)")
    attrs = {"alpha": float(alpha), "scale": float(scale), "input_scale": float(input_scale), "is_result": is_result}
    return ge.op1("EluGradV2", {"grads": grad_output, "activations": self_or_result}, attrs)


# GE's GeluGrad differentiates the tanh approximation: only approximate="tanh" matches eager.
@register_converter(aten.gelu_backward.default, samples=lambda: [Sample((_g(3, 4), _g(3, 4)), {"approximate": "tanh"})])
def convert_gelu_backward(grad_output: ge.Tensor, self: ge.Tensor, *, approximate: str = "none", meta_outputs: Any = None) -> ge.Tensor:
    """gelu_backward(Tensor grad_output, Tensor self, *, str approximate="none") -> Tensor"""
    # GeluGrad has a third input y it does not read; TorchAir feeds it grad_output.
    return ge.op1("GeluGrad", {"dy": grad_output, "x": self, "y": grad_output})


@register_converter(aten.glu_backward.default, samples=lambda: [Sample((_g(2, 3), _g(2, 6), -1)), Sample((_g(2, 3), _g(4, 3), 0))])
def convert_glu_backward(grad_output: ge.Tensor, self: ge.Tensor, dim: int, meta_outputs: Any = None) -> ge.Tensor:
    """glu_backward(Tensor grad_output, Tensor self, int dim) -> Tensor"""
    return ge.op1("GLUGrad", {"y_grad": grad_output, "x": self}, {"dim": dim})


def _log_sigmoid_samples() -> list[Sample]:
    x = _g(2, 3)
    return [Sample((_g(2, 3), x, torch.ops.aten.log_sigmoid_forward(x)[1]))]


@register_converter(aten.log_sigmoid_backward.default, samples=_log_sigmoid_samples)
def convert_log_sigmoid_backward(grad_output: ge.Tensor, self: ge.Tensor, buffer: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """log_sigmoid_backward(Tensor grad_output, Tensor self, Tensor buffer) -> Tensor"""
    return ge.op1("LogSigmoidGrad", {"grads": grad_output, "features": self})


@register_converter(
    aten.log_sigmoid_backward.grad_input,
    samples=lambda: [Sample(s.args, {"grad_input": torch.empty(2, 3)}) for s in _log_sigmoid_samples()],
)
def convert_log_sigmoid_backward_grad_input(
    grad_output: ge.Tensor, self: ge.Tensor, buffer: ge.Tensor, *, grad_input: Any = None, meta_outputs: Any = None
) -> ge.Tensor:
    """log_sigmoid_backward.grad_input(Tensor grad_output, Tensor self, Tensor buffer, *, Tensor(a!) grad_input) -> Tensor(a!)"""
    return ge.op1("LogSigmoidGrad", {"grads": grad_output, "features": self})


@register_converter(aten._prelu_kernel_backward.default, samples=lambda: [Sample((_g(2, 3, 4), _g(2, 3, 4), torch.rand(3, 1)))])
def convert_prelu_kernel_backward(grad_output: ge.Tensor, self: ge.Tensor, weight: ge.Tensor, meta_outputs: Any = None) -> list[ge.Tensor]:
    """_prelu_kernel_backward(Tensor grad_output, Tensor self, Tensor weight) -> (Tensor, Tensor)"""
    return ge.op("PReluGrad", {"grads": grad_output, "features": self, "weights": weight}, outputs=("dx", "da"))


def _check_half_to_float(grad: ge.Tensor, input_dtype: Any) -> None:
    wanted = ge_dtype(input_dtype)
    if grad.dtype != wanted and (grad.dtype != DataType.DT_FLOAT or wanted != DataType.DT_FLOAT16):
        raise NotImplementedError("softmax backward needs grad and input of one dtype, or a float16 input with a float32 grad")


def _softmax_backward_samples(fn: Any) -> Any:
    def samples() -> list[Sample]:
        out = fn(_g(2, 5), -1)
        return [Sample((_g(2, 5), out, -1, torch.float32)), Sample((_g(2, 3, 4), fn(_g(2, 3, 4), 1), 1, torch.float32))]

    return samples


@register_converter(aten._softmax_backward_data.default, samples=_softmax_backward_samples(torch.softmax))
def convert_softmax_backward_data(
    grad_output: ge.Tensor, output: ge.Tensor, dim: int, input_dtype: Any, meta_outputs: Any = None
) -> ge.Tensor:
    """_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor"""
    _check_half_to_float(grad_output, input_dtype)
    return ge.op1("SoftmaxGrad", {"softmax": output, "grad_softmax": grad_output}, {"axes": [dim]})


@register_converter(aten._log_softmax_backward_data.default, samples=_softmax_backward_samples(torch.log_softmax))
def convert_log_softmax_backward_data(
    grad_output: ge.Tensor, output: ge.Tensor, dim: int, input_dtype: Any, meta_outputs: Any = None
) -> ge.Tensor:
    """_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor"""
    _check_half_to_float(grad_output, input_dtype)
    return ge.op1("LogSoftmaxGrad", {"grad": grad_output, "x": output}, {"axis": [dim]})


def _mse_samples() -> list[Sample]:
    return [Sample((_g(3, 4), _g(3, 4))), Sample((_g(3, 4), _g(3, 4), 0)), Sample((_g(3, 4), _g(3, 4), 2))]


@register_converter(aten.mse_loss.default, samples=_mse_samples)
def convert_mse_loss(self: ge.Tensor, target: ge.Tensor, reduction: int = 1, meta_outputs: Any = None) -> ge.Tensor:
    """mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor"""
    self, target = dtype_promote(output_dtype(meta_outputs), self, target)
    return ge.op1("MseLoss", {"predict": self, "label": target}, {"reduction": REDUCTIONS[reduction]})


def _mse_backward_samples() -> list[Sample]:
    return [
        Sample((_g(3, 4), _g(3, 4), _g(3, 4), 0)),
        Sample((torch.randn(()), _g(3, 4), _g(3, 4), 1)),
        Sample((torch.randn(()), _g(3, 4), _g(3, 4), 2)),
    ]


@register_converter(aten.mse_loss_backward.default, samples=_mse_backward_samples)
def convert_mse_loss_backward(
    grad_output: ge.Tensor, self: ge.Tensor, target: ge.Tensor, reduction: int, meta_outputs: Any = None
) -> ge.Tensor:
    """mse_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction) -> Tensor"""
    self, target = dtype_promote(output_dtype(meta_outputs), self, target)
    return ge.op1("MseLossGrad", {"predict": self, "label": target, "dout": grad_output}, {"reduction": REDUCTIONS[reduction]})


def _embedding_backward_samples() -> list[Sample]:
    indices = torch.tensor([[0, 2, 4], [4, 3, 2]])
    return [Sample((_g(2, 3, 5), indices, 6, -1, False)), Sample((_g(2, 3, 5), indices, 6, 2, True))]


@register_converter(aten.embedding_dense_backward.default, samples=_embedding_backward_samples)
def convert_embedding_dense_backward(
    grad_output: ge.Tensor, indices: ge.Tensor, num_weights: Any, padding_idx: Any, scale_grad_by_freq: bool, meta_outputs: Any = None
) -> ge.Tensor:
    """embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, SymInt padding_idx, bool scale_grad_by_freq) -> Tensor"""
    if isinstance(num_weights, ge.Tensor) or isinstance(padding_idx, ge.Tensor):
        raise NotImplementedError("embedding_dense_backward is converted only for static num_weights and padding_idx (as in TorchAir)")
    if scale_grad_by_freq:
        indices = ge.cast(indices, DataType.DT_INT32)
    attrs = {"num_weights": int(num_weights), "padding_idx": int(padding_idx), "scale_grad_by_freq": scale_grad_by_freq}
    return ge.op1("EmbeddingDenseGrad", {"grad": grad_output, "indices": indices}, attrs)


# -- dropout, padding, layer norm -----------------------------------------------------
def _dropout_backward_samples() -> list[Sample]:
    return [Sample((_g(3, 4), torch.rand(3, 4) > 0.3, 1 / 0.7))]


@register_converter(aten.native_dropout_backward.default, samples=_dropout_backward_samples)
def convert_native_dropout_backward(grad_output: ge.Tensor, mask: ge.Tensor, scale: float, meta_outputs: Any = None) -> ge.Tensor:
    """native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor"""
    keep = scalar_input(1.0 / scale, grad_output)
    return ge.op1("DropOutDoMask", {"x": grad_output, "mask": mask, "keep_prob": keep})


def _pad_grad(grad: ge.Tensor, paddings: list[int], mode: str) -> ge.Tensor:
    return ge.op1("PadV3Grad", {"x": grad, "paddings": index_input(paddings)}, {"mode": mode, "paddings_contiguous": True})


@register_converter(
    aten.reflection_pad2d_backward.default,
    samples=lambda: [Sample((_g(2, 3, 7, 8), _g(2, 3, 4, 5), [1, 2, 2, 1])), Sample((_g(3, 6, 6), _g(3, 4, 4), [1, 1, 1, 1]))],
)
def convert_reflection_pad2d_backward(grad_output: ge.Tensor, self: ge.Tensor, padding: Any, meta_outputs: Any = None) -> ge.Tensor:
    """reflection_pad2d_backward(Tensor grad_output, Tensor self, SymInt[4] padding) -> Tensor"""
    rank = 4 if self.rank == 3 else self.rank
    if self.rank == 3:
        grad_output = unsqueeze(grad_output, [0])
    # ATen pads from the last dim; PadV3Grad wants (before, after) per dim from the first.
    pads = list(padding) + [0] * (2 * rank - len(padding))
    pads.reverse()
    pads = [v for i in range(0, len(pads), 2) for v in (pads[i + 1], pads[i])]
    out = _pad_grad(grad_output, pads, "reflect")
    return squeeze(out, [0]) if self.rank == 3 else out


@register_converter(
    aten.replication_pad1d_backward.default, samples=lambda: [Sample((_g(3, 9), _g(3, 6), [1, 2])), Sample((_g(2, 5), _g(2, 5), [0, 0]))]
)
def convert_replication_pad1d_backward(grad_output: ge.Tensor, self: ge.Tensor, padding: Any, meta_outputs: Any = None) -> ge.Tensor:
    """replication_pad1d_backward(Tensor grad_output, Tensor self, SymInt[2] padding) -> Tensor"""
    if isinstance(padding, ge.Tensor) or any(isinstance(p, ge.Tensor) for p in padding):
        raise NotImplementedError("replication_pad1d_backward is converted only for static padding (as in TorchAir)")
    batched = unsqueeze(grad_output, [0])
    if sum(padding) == 0:
        return identity(grad_output)
    grad = _pad_grad(batched, [0, 0, 0, 0, 0, 0, padding[0], padding[1]], "edge")
    return squeeze(grad, [0])


def _layer_norm_backward_samples() -> list[Sample]:
    x, w, b = _g(2, 3, 8), torch.rand(8) + 0.5, _g(8)
    _, mean, rstd = torch.native_layer_norm(x, [8], w, b, 1e-5)
    return [Sample((_g(2, 3, 8), x, [8], mean, rstd, w, b, [True, True, True]))]


@register_converter(aten.native_layer_norm_backward.default, samples=_layer_norm_backward_samples)
def convert_native_layer_norm_backward(
    grad_out: ge.Tensor,
    input: ge.Tensor,
    normalized_shape: Any,
    mean: ge.Tensor,
    rstd: ge.Tensor,
    weight: ge.Tensor | None,
    bias: ge.Tensor | None,
    output_mask: Any,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)"""
    if weight is None:
        dims = ge.const(list(normalized_shape), DataType.DT_INT32)
        weight = ge.op1("Fill", {"dims": dims, "value": cast_scalar(1.0, input.dtype)}, dtypes=input.dtype)
    inputs = {"dy": grad_out, "x": input, "rstd": rstd, "mean": mean, "gamma": weight}
    return ge.op("LayerNormGradV3", inputs, outputs=("pd_x", "pd_gamma", "pd_beta"))


# -- pooling ------------------------------------------------------------------------
@register_converter(aten._adaptive_avg_pool2d_backward.default, samples=lambda: [Sample((_g(2, 3, 2, 2), _g(2, 3, 6, 6)))])
def convert_adaptive_avg_pool2d_backward(grad_output: ge.Tensor, self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor"""
    # TorchAir writes the input's sizes into an attr: symbolic ones at their traced values.
    sizes = [optimization_hint(d) for d in self.symsize] if self.symsize is not None else list(self.shape)
    return ge.op("AdaptiveAvgPool2dGrad", {"input_grad": grad_output}, {"orig_input_shape": sizes}, outputs=("output_grad",))[0]


def _avg_pool_backward_samples() -> list[Sample]:
    return [
        Sample((_g(1, 2, 3, 3), _g(1, 2, 6, 6), [2, 2], [2, 2], [0, 0], False, True, None)),
        Sample((_g(1, 2, 3, 3), _g(1, 2, 5, 5), [3, 3], [2, 2], [1, 1], False, False, None)),
    ]


@register_converter(aten.avg_pool2d_backward.default, samples=_avg_pool_backward_samples)
def convert_avg_pool2d_backward(
    grad_output: ge.Tensor,
    self: ge.Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor"""
    k_h = kernel_size[0]
    k_w = k_h if len(kernel_size) == 1 else kernel_size[1]
    s_h = k_h if len(stride) == 0 else stride[0]
    s_w = k_w if len(stride) == 0 else s_h if len(stride) == 1 else stride[1]
    p_h = padding[0]
    p_w = p_h if len(padding) == 1 else padding[1]
    attrs = {
        "ksize": [1, 1, k_h, k_w],
        "strides": [1, 1, s_h, s_w],
        "padding_mode": "CALCULATED",
        "pads": [p_h, p_h, p_w, p_w],
        "data_format": "NCHW",
        "global_pooling": False,
        "ceil_mode": ceil_mode,
        "exclusive": not count_include_pad,
        "divisor_override": divisor_override or 0,
    }
    inputs = {"orig_input_shape": shape_of(self), "input_grad": grad_output}
    return ge.op("AvgPoolV2Grad", inputs, attrs, outputs=("out_grad",))[0]


def _window(values: Any, default: list[int]) -> list[int]:
    return list(default) if len(values) == 0 else [values[0], values[0]] if len(values) == 1 else list(values)


def _max_pool_backward_samples() -> list[Sample]:
    x = _g(1, 2, 6, 6)
    out, indices = torch.ops.aten.max_pool2d_with_indices(x, [2, 2], [2, 2])
    x3 = _g(1, 2, 5, 5)
    out3, indices3 = torch.ops.aten.max_pool2d_with_indices(x3, [3, 3], [2, 2], [1, 1])
    return [
        Sample((_g(*out.shape), x, [2, 2], [2, 2], [0, 0], [1, 1], False, indices)),
        Sample((_g(*out3.shape), x3, [3, 3], [2, 2], [1, 1], [1, 1], False, indices3)),
    ]


@register_converter(aten.max_pool2d_with_indices_backward.default, samples=_max_pool_backward_samples)
def convert_max_pool2d_with_indices_backward(
    grad_output: ge.Tensor,
    self: ge.Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
    indices: ge.Tensor,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor"""
    kernel = _window(kernel_size, [])
    strides = _window(stride, kernel)
    pads, dilations = _window(padding, []), _window(dilation, [])
    attrs = {
        "ksize": [1, *kernel, 1],
        "strides": [1, *strides, 1],
        "pads": [1, *pads, 1],
        "dtype": 3,
        "dilation": [1, *dilations, 1],
        "ceil_mode": ceil_mode,
    }
    # GE's argmax is its own mask, not ATen's indices: TorchAir pools again to get it.
    output, argmax = ge.op("MaxPoolWithArgmaxV1", {"x": self}, attrs, outputs=("y", "argmax"), dtypes=[self.dtype, DataType.DT_INT32])
    output_layout(input_layout(output, 0, "NCHW"), [0, 1], "NCHW")
    grad = ge.op1("MaxPoolGradWithArgmaxV1", {"x": self, "grad": grad_output, "argmax": argmax}, attrs)
    return output_layout(input_layout(grad, [0, 1, 2], "NCHW"), 0, "NCHW")


def _upsample_backward_samples() -> list[Sample]:
    return [Sample((_g(1, 2, 6, 8), [6, 8], [1, 2, 3, 4])), Sample((_g(2, 1, 4, 4), [4, 4], [2, 1, 2, 2]))]


@register_converter(aten.upsample_nearest2d_backward.default, samples=_upsample_backward_samples)
def convert_upsample_nearest2d_backward(
    grad_output: ge.Tensor,
    output_size: Any,
    input_size: Any,
    scales_h: float | None = None,
    scales_w: float | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """upsample_nearest2d_backward(Tensor grad_output, SymInt[2] output_size, SymInt[4] input_size, float? scales_h=None, float? scales_w=None) -> Tensor"""
    if isinstance(input_size, ge.Tensor) or any(isinstance(s, ge.Tensor) for s in input_size):
        raise NotImplementedError("upsample_nearest2d_backward is converted only for a static input_size (as in TorchAir)")
    grad = dtype_promote(DataType.DT_FLOAT, grad_output)
    size = ge.const([input_size[2], input_size[3]], DataType.DT_INT32)
    out = ge.op1(
        "ResizeNearestNeighborV2Grad",
        {"grads": grad, "size": size},
        {"align_corners": False, "half_pixel_centers": False},
        dtypes=DataType.DT_FLOAT,
    )
    output_layout(input_layout(out, 0, "NCHW"), 0, "NCHW")
    return ge.cast(out, output_dtype(meta_outputs))


def _matmul_backward_samples() -> list[Sample]:
    return [Sample((_g(2, 3, 5), _g(2, 3, 4), _g(2, 4, 5), [True, True])), Sample((_g(3, 5), _g(3, 4), _g(4, 5), [True, True]))]


@register_converter(aten.matmul_backward.default, samples=_matmul_backward_samples)
def convert_matmul_backward(grad: ge.Tensor, self: ge.Tensor, other: ge.Tensor, mask: Any, meta_outputs: Any = None) -> list[ge.Tensor]:
    """matmul_backward(Tensor grad, Tensor self, Tensor other, bool[2] mask) -> (Tensor, Tensor)"""
    if len(mask) != 2 or not all(mask):
        raise NotImplementedError("matmul_backward is converted only with both gradients asked for (as in TorchAir)")
    self_perm, other_perm = list(range(self.rank)), list(range(other.rank))
    self_perm[-1], self_perm[-2] = self_perm[-2], self_perm[-1]
    other_perm[-1], other_perm[-2] = other_perm[-2], other_perm[-1]
    self_perm_t, other_perm_t = dtype_promote(DataType.DT_INT64, self_perm, other_perm)
    adj = {"adj_x1": False, "adj_x2": False}
    grad_self = ge.op1("BatchMatMul", {"x1": grad, "x2": ge.op1("Transpose", {"x": other, "perm": other_perm_t})}, adj)
    grad_other = ge.op1("BatchMatMul", {"x1": ge.op1("Transpose", {"x": self, "perm": self_perm_t}), "x2": grad}, adj)
    return [grad_self, grad_other]


# -- convolution ----------------------------------------------------------------------
def _conv_backward_samples() -> list[Sample]:
    x, w = _g(2, 3, 6, 6), _g(4, 3, 3, 3)
    grad = _g(2, 4, 4, 4)
    x1, w1, grad1 = _g(2, 4, 7), _g(6, 2, 3), _g(2, 6, 4)
    return [
        Sample((grad, x, w, [4], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, True, True])),
        Sample((_g(2, 4, 3, 3), x, w, None, [2, 2], [1, 1], [1, 1], False, [0, 0], 1, [True, True, False])),
        Sample((grad1, x1, w1, [6], [2], [1], [1], False, [0], 2, [True, True, True])),
    ]


def _conv2d_backward_attrs(stride: list[int], padding: list[int], dilation: list[int], groups: int) -> dict[str, Any]:
    return {
        "strides": [1, 1, stride[0], stride[1]],
        "pads": [padding[0], padding[0], padding[1], padding[1]],
        "dilations": [1, 1, dilation[0], dilation[1]],
        "groups": groups,
        "data_format": "NCHW",
    }


@register_converter(aten.convolution_backward.default, samples=_conv_backward_samples)
def convert_convolution_backward(
    grad_output: ge.Tensor,
    input: ge.Tensor,
    weight: ge.Tensor,
    bias_sizes: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    transposed: bool,
    output_padding: Any,
    groups: int,
    output_mask: Any,
    meta_outputs: Any = None,
) -> list[Any]:
    """convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)"""
    if transposed or input.rank not in (3, 4):
        raise NotImplementedError(
            "convolution_backward is converted for 1-D and 2-D convolutions (fxlab does not build the 3-D or transposed forms)"
        )
    grad, weight = dtype_promote(input.dtype, grad_output, weight)
    x_dtype, one_dim = input.dtype, input.rank == 3
    stride, padding, dilation = list(stride), list(padding), list(dilation)
    x = input
    if one_dim:  # as a 2-D convolution over a unit height
        stride, padding, dilation = [1] + stride, [0] + padding, [1] + dilation
        x, weight, grad = unsqueeze(x, [2]), unsqueeze(weight, [2]), unsqueeze(grad, [2])
    attrs = _conv2d_backward_attrs(stride, padding, dilation, groups)
    grad_x = grad_weight = grad_bias = None
    if output_mask[0]:
        # A static input size is a Const; the unsqueezed 1-D input's is asked of GE.
        static = not one_dim and all(d >= 0 for d in x.shape)
        size = index_input(list(x.shape)) if static else shape_of(x)
        grad_x = ge.op1("Conv2DBackpropInput", {"input_size": size, "filter": weight, "out_backprop": grad}, attrs, dtypes=x_dtype)
        output_layout(input_layout(input_layout(grad_x, 0, "ND"), [1, 2], "NCHW"), 0, "NCHW")
    if output_mask[1]:
        filter_size = shape_of(weight)
        grad_weight = ge.op1(
            "Conv2DBackpropFilter", {"x": x, "filter_size": filter_size, "out_backprop": grad}, attrs, dtypes=DataType.DT_FLOAT
        )
        output_layout(input_layout(input_layout(grad_weight, 1, "ND"), [0, 2], "NCHW"), 0, "NCHW")
        if x_dtype != DataType.DT_FLOAT:
            grad_weight = ge.cast(grad_weight, x_dtype)
    if output_mask[2]:
        flat = ge.op1("FlattenV2", {"x": grad}, {"axis": 2, "end_axis": -1})
        grad_bias = ge.op1("ReduceSum", {"x": flat, "axes": index_input([0, 2])}, {"keep_dims": False})
    if one_dim:
        grad_x = squeeze(grad_x, [2]) if grad_x is not None else None
        grad_weight = squeeze(grad_weight, [2]) if grad_weight is not None else None
    return [grad_x, grad_weight, grad_bias]
