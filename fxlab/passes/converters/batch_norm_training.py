"""Batch-norm ops of training graphs, in TorchAir's Atlas A2/A3 form (4-D, NCHW layout
hints): ``native_batch_norm_backward`` → ``BNTrainingUpdateGrad`` +
``BNTrainingReduceGrad`` (or ``BNInferGrad`` outside training), and the SyncBatchNorm
pieces ``batch_norm_elemt`` → ``BNInfer``, ``batch_norm_backward_reduce`` →
``SyncBatchNormBackwardReduce``, ``batch_norm_backward_elemt`` →
``SyncBatchNormBackwardElemt``."""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType
from fxlab.passes.converters.layouts import input_layout, output_layout
from fxlab.passes.converters.promotion import cast_scalar, index_input, scalar_input
from fxlab.passes.converters.registry import Sample, register_converter
from fxlab.passes.converters.shape import fold_trailing_dims, gather_dim, shape_of, squeeze, unsqueeze

aten = torch.ops.aten


def _nchw(t: ge.Tensor, inputs: int, outputs: list[int] | int) -> ge.Tensor:
    return output_layout(input_layout(t, list(range(inputs)), "NCHW"), outputs, "NCHW")


def _stats(c: int) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(c), torch.rand(c) + 0.5


def _backward_samples() -> list[Sample]:
    x = torch.randn(2, 3, 4, 4)
    mean, invstd = x.mean((0, 2, 3)), torch.rsqrt(x.var((0, 2, 3), unbiased=False) + 1e-5)
    running_mean, running_var = _stats(3)
    weight = torch.rand(3) + 0.5
    return [
        Sample((torch.randn(2, 3, 4, 4), x, weight, running_mean, running_var, mean, invstd, False, 1e-5, [True, True, True])),
        Sample((torch.randn(4, 3), torch.randn(4, 3), None, running_mean, running_var, *_stats(3), False, 1e-5, [True, True, True])),
    ]


@register_converter(aten.native_batch_norm_backward.default, samples=_backward_samples)
def convert_native_batch_norm_backward(
    grad_out: ge.Tensor,
    input: ge.Tensor,
    weight: ge.Tensor | None,
    running_mean: ge.Tensor | None,
    running_var: ge.Tensor | None,
    save_mean: ge.Tensor | None,
    save_invstd: ge.Tensor | None,
    train: bool,
    eps: float,
    output_mask: Any,
    meta_outputs: Any = None,
) -> list[Any]:
    """native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)"""
    rank = input.rank
    if rank < 2:
        raise NotImplementedError("native_batch_norm_backward of an input with fewer than 2 dims has no GE mapping (as in TorchAir)")
    if rank > 4:
        raise NotImplementedError("native_batch_norm_backward is converted for 2-4-D inputs (the 5-D BN3D form is not built by fxlab)")
    input_size = shape_of(input)
    if weight is None:
        weight = ge.op1("Fill", {"dims": gather_dim(input_size, 1), "value": cast_scalar(1.0, input.dtype)}, dtypes=input.dtype)
    # GE reads batch_variance as a variance. Outside training TorchAir hands it the running
    # variance; in training the saved inverse std, which a CPU-traced graph holds as ATen
    # computes it: there the reference run differs from eager, and the samples are the
    # inference ones.
    mean, invstd = (save_mean, save_invstd) if train else (running_mean, running_var)
    x, grad = input, grad_out
    if rank in (2, 3):
        x, grad = unsqueeze(x, list(range(rank, 4))), unsqueeze(grad, list(range(rank, 4)))
    inputs = {"grads": grad, "x": x, "batch_mean": mean, "batch_variance": invstd}
    diff_scale, diff_offset = ge.op(
        "BNTrainingUpdateGrad", inputs, {"epsilon": float(eps)}, outputs=("diff_scale", "diff_offset"), dtypes=DataType.DT_FLOAT
    )
    _nchw(diff_scale, 4, [0, 1])
    if train:
        reduce_inputs = {
            "grads": grad,
            "x": x,
            "diff_scale": diff_scale,
            "diff_offset": diff_offset,
            "scale": weight,
            "batch_mean": mean,
            "batch_variance": invstd,
        }
        grad_in = _nchw(ge.op1("BNTrainingReduceGrad", reduce_inputs, {"epsilon": float(eps)}), 7, 0)
    else:
        infer_inputs = {"grads": grad, "scale": weight, "batch_variance": invstd}
        grad_in = _nchw(ge.op("BNInferGrad", infer_inputs, {"epsilon": float(eps)}, outputs=("x_backprop",))[0], 3, 0)
    if rank in (2, 3):
        grad_in = squeeze(grad_in, list(range(3, rank - 1, -1)))
    return [grad_in, diff_scale if output_mask[1] else None, diff_offset if output_mask[2] else None]


def _sync_samples() -> list[Sample]:
    return [Sample((torch.randn(2, 3, 4, 4), torch.rand(3) + 0.5, torch.randn(3), torch.randn(3), torch.rand(3) + 0.5, 1e-5))]


@register_converter(aten.batch_norm_elemt.default, samples=_sync_samples)
def convert_batch_norm_elemt(
    input: ge.Tensor,
    weight: ge.Tensor | None,
    bias: ge.Tensor | None,
    mean: ge.Tensor,
    invstd: ge.Tensor,
    eps: float,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """batch_norm_elemt(Tensor input, Tensor? weight, Tensor? bias, Tensor mean, Tensor invstd, float eps) -> Tensor"""
    if input.rank != 4:
        raise NotImplementedError("batch_norm_elemt is converted only for 4-D inputs (as in TorchAir)")
    # BNInfer wants a variance: 1 / invstd^2 - eps.
    square = ge.op1("Mul", {"x1": invstd, "x2": invstd})
    variance = ge.op1("Div", {"x1": scalar_input(1.0, square), "x2": square})
    variance = ge.op1("Sub", {"x1": variance, "x2": scalar_input(eps, variance)})
    inputs = {"x": input, "scale": weight, "offset": bias, "mean": mean, "variance": variance}
    return _nchw(ge.op1("BNInfer", inputs, {"epsilon": float(eps)}), 5, 0)


def _reduce_samples() -> list[Sample]:
    x = torch.randn(2, 3, 4, 4)
    return [Sample((torch.randn(2, 3, 4, 4), x, x.mean((0, 2, 3)), torch.rand(3) + 0.5, torch.rand(3) + 0.5, True, True, True))]


@register_converter(aten.batch_norm_backward_reduce.default, samples=_reduce_samples)
def convert_batch_norm_backward_reduce(
    grad_out: ge.Tensor,
    input: ge.Tensor,
    mean: ge.Tensor,
    invstd: ge.Tensor,
    weight: ge.Tensor | None,
    input_g: bool,
    weight_g: bool,
    bias_g: bool,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """batch_norm_backward_reduce(Tensor grad_out, Tensor input, Tensor mean, Tensor invstd, Tensor? weight, bool input_g, bool weight_g, bool bias_g) -> (Tensor, Tensor, Tensor, Tensor)"""
    if grad_out.rank != 4:
        raise NotImplementedError("batch_norm_backward_reduce is converted only for 4-D inputs (as in TorchAir)")
    if not (input_g and weight_g and bias_g):
        raise NotImplementedError("batch_norm_backward_reduce is converted only with all three gradients asked for (as in TorchAir)")
    axes = [0, 2, 3]
    product = ge.op1("Mul", {"x1": grad_out, "x2": input})
    sum_dy_x = ge.op1("ReduceSum", {"x": product, "axes": index_input(axes)}, {"keep_dims": False})
    sum_dy = ge.op1("ReduceSum", {"x": grad_out, "axes": index_input(axes)}, {"keep_dims": False})
    inputs = {"sum_dy": sum_dy, "sum_dy_dx_pad": sum_dy_x, "mean": mean, "invert_std": invstd}
    sum_dy_xmu, grad_weight = ge.op("SyncBatchNormBackwardReduce", inputs, outputs=("sum_dy_xmu", "y"))
    output_layout(input_layout(sum_dy_xmu, list(range(4)), "NCHW"), [0, 1], "NCHW")
    return [sum_dy, sum_dy_xmu, grad_weight, sum_dy]


def _elemt_samples() -> list[Sample]:
    x = torch.randn(2, 3, 4, 4)
    count = torch.tensor([[16.0], [16.0]])
    return [
        Sample(
            (torch.randn(2, 3, 4, 4), x, x.mean((0, 2, 3)), torch.rand(3) + 0.5, torch.rand(3) + 0.5, torch.randn(3), torch.randn(3), count)
        )
    ]


def _spread(t: ge.Tensor, shape: ge.Tensor) -> ge.Tensor:
    """A per-channel vector broadcast over NCHW: [1, C, 1, 1], then to the input's shape."""
    t = unsqueeze(unsqueeze(t, [0]), [2, 3])
    return ge.op1("BroadcastTo", {"x": t, "shape": shape})


@register_converter(aten.batch_norm_backward_elemt.default, samples=_elemt_samples)
def convert_batch_norm_backward_elemt(
    grad_out: ge.Tensor,
    input: ge.Tensor,
    mean: ge.Tensor,
    invstd: ge.Tensor,
    weight: ge.Tensor | None,
    sum_dy: ge.Tensor,
    sum_dy_xmu: ge.Tensor,
    count: ge.Tensor,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """batch_norm_backward_elemt(Tensor grad_out, Tensor input, Tensor mean, Tensor invstd, Tensor? weight, Tensor sum_dy, Tensor sum_dy_xmu, Tensor count) -> Tensor"""
    if grad_out.rank != 4:
        raise NotImplementedError("batch_norm_backward_elemt is converted only for 4-D inputs (as in TorchAir)")
    if weight is None:  # TorchAir's converter expands it as it does the others, and fails without one
        raise NotImplementedError("batch_norm_backward_elemt is converted only with a weight (as in TorchAir)")
    divisor = ge.op1("ReduceSum", {"x": count, "axes": index_input(list(range(count.rank)))}, {"keep_dims": False})
    mean_dy = ge.op1("RealDiv", {"x1": sum_dy, "x2": divisor})
    mean_dy_xmu = ge.op1("RealDiv", {"x1": sum_dy_xmu, "x2": divisor})
    shape = ge.op1("Shape", {"x": input}, {"dtype": 3}, dtypes=DataType.DT_INT32, shapes=[(4,)])
    spread = [_spread(t, shape) for t in (mean, invstd, weight, mean_dy, mean_dy_xmu)]
    names = ("mean", "invstd", "weight", "mean_dy", "mean_dy_xmu")
    inputs = {"grad_output": grad_out, "save_input": input, **dict(zip(names, spread))}
    grad_in = ge.op("SyncBatchNormBackwardElemt", inputs, outputs=("grad_input",))[0]
    return _nchw(grad_in, 7, 0)


def _max_pool3d_samples() -> list[Sample]:
    return [Sample((torch.randn(1, 2, 4, 4, 4), [2, 2, 2])), Sample((torch.randn(2, 4, 5, 5), [3], [2], [1]))]


@register_converter(aten.max_pool3d_with_indices.default, samples=_max_pool3d_samples)
def convert_max_pool3d_with_indices(
    self: ge.Tensor,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = (0, 0, 0),
    dilation: Any = (1, 1, 1),
    ceil_mode: bool = False,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)"""

    def three(values: Any, default: list[int]) -> list[int]:
        return list(default) if len(values) == 0 else [values[0]] * 3 if len(values) == 1 else list(values)

    kernel = three(kernel_size, [])
    strides = three(stride, kernel)
    x = unsqueeze(self, [0]) if self.rank == 4 else self
    attrs = {
        "ksize": kernel,
        "strides": strides,
        "pads": three(padding, []),
        "dilation": three(dilation, []),
        "ceil_mode": ceil_mode,
        "data_format": "NCDHW",
        "dtype": 3,
    }
    output, argmax = ge.op("MaxPool3DWithArgmaxV2", {"x": x}, attrs, outputs=("y", "argmax"), dtypes=[self.dtype, DataType.DT_INT32])
    output_layout(input_layout(output, 0, "NCDHW"), [0, 1], "NCDHW")
    argmax = ge.cast(argmax, DataType.DT_INT64)
    if self.rank == 4:
        output, argmax = squeeze(output, [0]), squeeze(argmax, [0])
    return [output, argmax]


# -- group norm backward --------------------------------------------------------------
def _pack(values: list[Any]) -> ge.Tensor:
    """``Pack`` of ints and tensors: TorchAir's builder makes each int a Const in turn."""
    parts = [v if isinstance(v, ge.Tensor) else scalar_input(v) for v in values]
    return ge.op1("Pack", {f"x{i}": p for i, p in enumerate(parts)}, {"axis": 0, "N": len(parts)})


def _reshape(x: ge.Tensor, shape: ge.Tensor) -> ge.Tensor:
    return ge.op1("Reshape", {"x": x, "shape": shape}, {"axis": 0, "num_axes": -1})


def _binary(op_type: str, a: Any, b: Any) -> ge.Tensor:
    x1 = a if isinstance(a, ge.Tensor) else scalar_input(a)
    x2 = b if isinstance(b, ge.Tensor) else scalar_input(b, x1)
    return ge.op1(op_type, {"x1": x1, "x2": x2})


def _group_norm_samples() -> list[Sample]:
    x = torch.randn(2, 4, 3, 3)
    weight = torch.rand(4) + 0.5
    _, mean, rstd = torch.native_group_norm(x, weight, None, 2, 4, 9, 2, 1e-5)
    x3, weight3 = torch.randn(2, 6, 5), torch.rand(6) + 0.5
    _, mean3, rstd3 = torch.native_group_norm(x3, weight3, None, 2, 6, 5, 3, 1e-5)
    return [
        Sample((torch.randn(2, 4, 3, 3), x, mean, rstd, weight, 2, 4, 9, 2, [True, True, True])),
        Sample((torch.randn(2, 6, 5), x3, mean3, rstd3, weight3, 2, 6, 5, 3, [True, False, True])),
    ]


@register_converter(aten.native_group_norm_backward.default, samples=_group_norm_samples)
def convert_native_group_norm_backward(
    grad_out: ge.Tensor,
    input: ge.Tensor,
    mean: ge.Tensor,
    rstd: ge.Tensor,
    weight: ge.Tensor | None,
    N: Any,
    C: Any,
    HxW: Any,
    group: int,
    output_mask: Any,
    meta_outputs: Any = None,
) -> list[Any]:
    """native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight, SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask) -> (Tensor, Tensor, Tensor)"""
    # TorchAir's A2 form: each (sample, group) is a channel of a batch norm over one sample.
    eps = 1e-5
    if input.rank != 3:
        flat = _pack([N, C, HxW])
        dy, x = _reshape(grad_out, flat), _reshape(input, flat)
    else:
        dy, x = grad_out, input
    dy_scaled = _binary("Mul", dy, _reshape(weight, _pack([1, C, 1]))) if weight is not None else dy
    groups = _binary("Mul", N, group)
    by_group, per_group = _pack([1, groups, -1 if N else 1]), _pack([groups])
    x_groups, dy_groups = _reshape(x, by_group), _reshape(dy_scaled, by_group)
    mean_groups = _reshape(mean, per_group)
    variance = _binary("Sub", ge.op1("Reciprocal", {"x": _binary("Mul", rstd, rstd)}), eps)
    variance_groups = _reshape(variance, per_group)
    ones = ge.op1("Fill", {"dims": per_group, "value": ge.const(1, input.dtype)})
    x_groups, dy_groups = unsqueeze(x_groups, [3]), unsqueeze(dy_groups, [3])
    update = {"grads": dy_groups, "x": x_groups, "batch_mean": mean_groups, "batch_variance": variance_groups}
    diff_scale, diff_offset = ge.op(
        "BNTrainingUpdateGrad", update, {"epsilon": eps}, outputs=("diff_scale", "diff_offset"), dtypes=DataType.DT_FLOAT
    )
    _nchw(diff_scale, 4, [0, 1])
    reduce_inputs = {
        "grads": dy_groups,
        "x": x_groups,
        "diff_scale": diff_scale,
        "diff_offset": diff_offset,
        "scale": ones,
        "batch_mean": mean_groups,
        "batch_variance": variance_groups,
    }
    grad_in = squeeze(_nchw(ge.op1("BNTrainingReduceGrad", reduce_inputs, {"epsilon": eps}), 7, 0), [3])
    return _group_norm_outputs(input, mean, rstd, N, C, group, output_mask, grad_in, x, dy)


def _group_norm_outputs(
    input: ge.Tensor,
    mean: ge.Tensor,
    rstd: ge.Tensor,
    n: Any,
    c: Any,
    group: int,
    output_mask: Any,
    grad_in: ge.Tensor,
    x: ge.Tensor,
    dy: ge.Tensor,
) -> list[Any]:
    grad_input = _reshape(grad_in, ge.op1("Shape", {"x": input}, {"dtype": 3}, dtypes=DataType.DT_INT32, shapes=[(input.rank,)]))
    grad_weight = grad_bias = None
    if output_mask[1]:
        if mean.rank == 1:
            by_sample = _pack([n, group])
            mean_b, rstd_b = unsqueeze(_reshape(mean, by_sample), [2]), unsqueeze(_reshape(rstd, by_sample), [2])
        else:
            mean_b, rstd_b = unsqueeze(mean, [2]), unsqueeze(rstd, [2])
        per_group = _binary("RealDiv", c, group)
        spread, per_channel = _pack([n, group, per_group]), _pack([n, c, 1])
        mean_b = _reshape(ge.op1("BroadcastTo", {"x": mean_b, "shape": spread}), per_channel)
        rstd_b = _reshape(ge.op1("BroadcastTo", {"x": rstd_b, "shape": spread}), per_channel)
        x_hat = _binary("Mul", _binary("Sub", x, mean_b), rstd_b)
        grad_weight = ge.op1("ReduceSum", {"x": _binary("Mul", dy, x_hat), "axes": index_input([0, 2])}, {"keep_dims": False})
    if output_mask[2]:
        grad_bias = ge.op1("ReduceSum", {"x": dy, "axes": index_input([0, 2])}, {"keep_dims": False})
    return [grad_input, grad_weight, grad_bias]


# -- batch norm in training -----------------------------------------------------------
def _functional_samples() -> list[Sample]:
    def stats(c: int) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.randn(c), torch.rand(c) + 0.5

    return [
        Sample((torch.randn(2, 3, 4, 4), torch.rand(3) + 0.5, torch.randn(3), *stats(3), True, 0.1, 1e-5)),
        Sample((torch.randn(4, 3), None, None, *stats(3), True, 0.2, 1e-3)),
        Sample((torch.randn(2, 3, 2, 2, 3, 2), torch.rand(3) + 0.5, torch.randn(3), *stats(3), True, 0.1, 1e-5)),  # folded to 5-D
    ]


@register_converter(aten._native_batch_norm_legit_functional.default, samples=_functional_samples)
def convert_native_batch_norm_legit_functional(
    input: ge.Tensor,
    weight: ge.Tensor | None,
    bias: ge.Tensor | None,
    running_mean: ge.Tensor,
    running_var: ge.Tensor,
    training: bool,
    momentum: float,
    eps: float,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """_native_batch_norm_legit_functional(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor, Tensor running_mean_out, Tensor running_var_out)"""
    _check_training_input("_native_batch_norm_legit_functional", input, training)
    input_size = shape_of(input)
    weight, bias = _affine_or_identity(input, input_size, weight, bias)
    x = _fold_to_5d(input, input_size)
    # BatchNormV3 updates the running statistics in place: TorchAir hands it copies.
    mean_copy = ge.op1("TensorMove", {"x": running_mean})
    var_copy = ge.op1("TensorMove", {"x": running_var})
    output, mean, var, save_mean, save_rstd = _batch_norm_v3(
        x, input.rank, input_size, weight, bias, mean_copy, var_copy, training, momentum, eps
    )
    # TorchAir's order, not ATen's: GE's updated running statistics come second and third.
    return [output, mean, var, save_mean, save_rstd]


def _check_training_input(op: str, input: ge.Tensor, training: bool) -> None:
    if not training:
        raise NotImplementedError(f"{op} is converted only in training (as in TorchAir)")
    if input.rank < 2:
        raise NotImplementedError(f"{op} is converted for inputs of 2 or more dims (as in TorchAir)")


def _per_channel_fill(input: ge.Tensor, input_size: ge.Tensor, value: float) -> ge.Tensor:
    return ge.op1("Fill", {"dims": gather_dim(input_size, 1), "value": cast_scalar(value, input.dtype)}, dtypes=input.dtype)


def _affine_or_identity(
    input: ge.Tensor, input_size: ge.Tensor, weight: ge.Tensor | None, bias: ge.Tensor | None
) -> tuple[ge.Tensor, ge.Tensor]:
    """The affine parameters, ones and zeros per channel where absent."""
    if weight is None:
        weight = _per_channel_fill(input, input_size, 1.0)
    if bias is None:
        bias = _per_channel_fill(input, input_size, 0.0)
    return weight, bias


def _fold_to_5d(input: ge.Tensor, input_size: ge.Tensor) -> ge.Tensor:
    """An input above 5-D as TorchAir hands it to BatchNormV3: 5-D, every dim after the
    fourth folded into the last."""
    return fold_trailing_dims(input, input_size, 4) if input.rank > 5 else input


def _batch_norm_v3(
    x: ge.Tensor,
    rank: int,
    input_size: ge.Tensor,
    weight: ge.Tensor,
    bias: ge.Tensor,
    running_mean: ge.Tensor,
    running_var: ge.Tensor,
    training: bool,
    momentum: float,
    eps: float,
) -> list[ge.Tensor]:
    """``BatchNormV3`` of an input of ``rank`` dims (``x``: as :func:`_fold_to_5d` left
    it) with TorchAir's layout hints: 2-D and 3-D unsqueezed to 4-D and back, above 5-D
    reshaped back to ``input_size``. Returns y, the updated running mean and variance,
    the batch mean and rstd."""
    if rank in (2, 3):
        x = unsqueeze(x, list(range(rank, 4)))
    inputs = {"x": x, "weight": weight, "bias": bias, "running_mean": running_mean, "running_var": running_var}
    attrs = {"epsilon": float(eps), "momentum": float(momentum), "is_training": training}
    names = ("y", "running_mean", "running_var", "save_mean", "save_rstd")
    output, mean, var, save_mean, save_rstd = ge.op("BatchNormV3", inputs, attrs, outputs=names)
    layout = "NCHW" if rank <= 4 else "NCDHW"
    output_layout(input_layout(output, 0, layout), 0, layout)
    if rank in (2, 3):
        output = squeeze(output, list(range(3, rank - 1, -1)))
    elif rank > 5:
        output = ge.op1("Reshape", {"x": output, "shape": input_size}, {"axis": 0, "num_axes": -1})
        output_layout(input_layout(output, [0, 1], "ND"), 0, "ND")
    return [output, mean, var, save_mean, save_rstd]


# TorchAir converts _native_batch_norm_legit only on arch35 SoCs (names with Ascend910_95
# or Ascend950): on Atlas A2/A3 its converter raises NotImplementedError. fxlab builds
# that one form (the built-in conversion does not know the SoC).
def _legit_samples() -> list[Sample]:
    def stats(c: int) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.randn(c), torch.rand(c) + 0.5

    return [
        Sample((torch.randn(2, 3, 4, 4), torch.rand(3) + 0.5, torch.randn(3), *stats(3), True, 0.1, 1e-5)),
        Sample((torch.randn(4, 2, 3), None, None, *stats(2), True, 0.9, 1e-5)),
        Sample((torch.randn(2, 2, 2, 2, 2), torch.rand(2) + 0.5, torch.randn(2), *stats(2), True, 0.2, 1e-3)),
        Sample((torch.randn(2, 2, 3, 2, 2, 2, 2), None, None, *stats(2), True, 0.1, 1e-5)),  # folded to 5-D
    ]


@register_converter(aten._native_batch_norm_legit.default, samples=_legit_samples)
def convert_native_batch_norm_legit(
    input: ge.Tensor,
    weight: ge.Tensor | None,
    bias: ge.Tensor | None,
    running_mean: ge.Tensor,
    running_var: ge.Tensor,
    training: bool,
    momentum: float,
    eps: float,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)"""
    _check_training_input("_native_batch_norm_legit", input, training)
    input_size = shape_of(input)
    weight, bias = _affine_or_identity(input, input_size, weight, bias)
    x = _fold_to_5d(input, input_size)
    # The running statistics are the op's own (a!, b!): BatchNormV3 updates them in place.
    output, _, _, save_mean, save_rstd = _batch_norm_v3(
        x, input.rank, input_size, weight, bias, running_mean, running_var, training, momentum, eps
    )
    return [output, save_mean, save_rstd]


def _no_stats_samples() -> list[Sample]:
    return [
        Sample((torch.randn(2, 3, 4, 4), torch.rand(3) + 0.5, torch.randn(3), True, 0.1, 1e-5)),
        Sample((torch.randn(1, 4, 6), None, None, True, 0.1, 1e-5)),
        Sample((torch.randn(2, 3, 2, 2, 2, 3), torch.rand(3) + 0.5, None, True, 0.1, 1e-5)),  # folded to 5-D
    ]


@register_converter(aten._native_batch_norm_legit.no_stats, samples=_no_stats_samples)
def convert_native_batch_norm_legit_no_stats(
    input: ge.Tensor,
    weight: ge.Tensor | None,
    bias: ge.Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """_native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, Tensor? bias, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)"""
    _check_training_input("_native_batch_norm_legit.no_stats", input, training)
    input_size = shape_of(input)
    weight, bias = _affine_or_identity(input, input_size, weight, bias)
    # No running statistics: BatchNormV3 gets zeros and ones it may update.
    running_mean = _per_channel_fill(input, input_size, 0.0)
    running_var = _per_channel_fill(input, input_size, 1.0)
    x = _fold_to_5d(input, input_size)
    output, _, _, save_mean, save_rstd = _batch_norm_v3(
        x, input.rank, input_size, weight, bias, running_mean, running_var, training, momentum, eps
    )
    return [output, save_mean, save_rstd]
