"""Kernels of the GE ops TorchAir makes for torch_npu's (grouped, quantised) matmuls
(``GroupedMatmul``, ``QuantBatchMatmulV3``, ``WeightQuantBatchMatmulV2`` ...), on the math
of :mod:`fxlab.ir.kernels.npu_matmul_reference` and
:mod:`fxlab.ir.kernels.npu_grouped_matmul_reference`.

``GroupedMatmul`` gets TorchAir's stand-ins for absent tensor lists (empty ``Fill``
tensors): an empty tensor is an absent input here.
"""

from __future__ import annotations

from typing import Any

from fxlab.ir.kernels import npu_grouped_matmul_reference as gmm
from fxlab.ir.kernels import npu_matmul_reference as ref
from fxlab.ir.kernels.npu_io import dynamic_inputs
from fxlab.ir.kernels.registry import named_inputs, register_kernel
from fxlab.ir.model import DataType, IrOp

# GroupedMatmul's dtype attr -> torch_npu output dtype codes (-1: the input's type).
_GMM_OUTPUT_CODES = {0: 5, 1: 15, 2: 3}
# TorchAir's GE type numbers -> torch_npu dtype codes of matmul outputs.
_OUTPUT_CODES = {2: 1, 1: 5, 27: 15, 0: 6, 3: 3}


def _present(tensors: list[Any]) -> list[Any] | None:
    kept = [t for t in tensors if t is not None and t.numel() > 0]
    return kept or None


@register_kernel("GroupedMatmul")
def grouped_matmul(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    lists = {name: _present(dynamic_inputs(n, name)) for name in ("bias", "scale", "offset", "antiquant_scale", "antiquant_offset")}
    token_scale = n.get("per_token_scale")
    output_code = _GMM_OUTPUT_CODES.get(int(attrs.get("dtype", -1)))
    return ref_grouped(dynamic_inputs(n, "x"), dynamic_inputs(n, "weight"), lists, token_scale, n.get("group_list"), attrs, output_code)


def ref_grouped(
    x: list[Any], weight: list[Any], lists: dict[str, Any], token_scale: Any, group_list: Any, attrs: dict[str, Any], code: int | None
) -> list[Any]:
    return gmm.grouped_matmul(
        x,
        weight,
        per_token_scale=[token_scale] if token_scale is not None else None,
        group_list=group_list,
        split_item=int(attrs.get("split_item", 0)),
        group_type=int(attrs.get("group_type", -1)),
        group_list_type=int(attrs.get("group_list_type", 0)),
        act_type=int(attrs.get("act_type", 0)),
        output_dtype=code,
        **lists,
    )


@register_kernel("GroupedMatmulFinalizeRouting")
def grouped_matmul_finalize_routing(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    tensors: dict[str, Any] = {
        name: n.get(name) for name in ("scale", "bias", "offset", "pertoken_scale", "shared_input", "logit", "row_index")
    }
    options = {key: attrs[key] for key in ("shared_input_weight", "shared_input_offset", "output_bs", "group_list_type") if key in attrs}
    return [gmm.grouped_matmul_finalize_routing(n["x"], n["w"], n["group_list"], **tensors, **options)]


@register_kernel("GroupedMatmulSwigluQuantV2")
def grouped_matmul_swiglu_quant_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    if int(attrs.get("quant_dtype", 1)) != 2 and "quant_dtype" in attrs:
        raise NotImplementedError("GroupedMatmulSwigluQuantV2: float8/float4 quantisation has no CPU reference kernel")
    return list(
        gmm.grouped_matmul_swiglu_quant_v2(
            n["x"],
            dynamic_inputs(n, "weight"),
            dynamic_inputs(n, "weight_scale"),
            n["x_scale"],
            n["group_list"],
            smooth_scale=n.get("smooth_scale"),
            group_list_type=int(attrs.get("group_list_type", 0)),
            quant_mode=int(attrs.get("quant_mode", 0)),
        )
    )


@register_kernel("QuantGroupedMatmulDequant")
def quant_grouped_matmul_dequant(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    tensors = {name: n.get(name) for name in ("bias", "x_scale", "x_offset", "smooth_scale")}
    mode = attrs.get("x_quant_mode", "pertoken")
    return [gmm.quant_grouped_matmul_dequant(n["x"], n["quantized_weight"], n["weight_scale"], n["group_list"], quant_mode=mode, **tensors)]


@register_kernel("QuantMatmulDequant")
def quant_matmul_dequant(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    tensors = {name: n.get(name) for name in ("bias", "x_scale", "x_offset", "smooth_scale")}
    return [
        ref.quant_matmul_dequant(
            n["x"], n["quantized_weight"], n["weight_scale"], quant_mode=attrs.get("x_quant_mode", "pertoken"), **tensors
        )
    ]


@register_kernel("QuantBatchMatmulV3")
def quant_batch_matmul_v3(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    if attrs.get("transpose_x1") or attrs.get("transpose_x2"):
        raise NotImplementedError("QuantBatchMatmulV3: transposed inputs have no CPU reference kernel")
    code = _OUTPUT_CODES[int(attrs["dtype"])]
    tensors = {name: n.get(name) for name in ("offset", "pertoken_scale", "bias")}
    return [ref.quant_matmul(n["x1"], n["x2"], n["scale"], output_dtype=code, **tensors)]


@register_kernel("WeightQuantBatchMatmulV2")
def weight_quant_batch_matmul_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    if attrs.get("transpose_x") or attrs.get("transpose_weight"):
        raise NotImplementedError("WeightQuantBatchMatmulV2: transposed inputs have no CPU reference kernel")
    tensors: dict[str, Any] = {name: n.get(name) for name in ("antiquant_offset", "quant_scale", "quant_offset", "bias")}
    group = int(attrs.get("antiquant_group_size", 0))
    return [ref.weight_quant_batchmatmul(n["x"], n["weight"], n["antiquant_scale"], antiquant_group_size=group, **tensors)]


@register_kernel("QuantMatmulReduceSum")
def quant_matmul_reduce_sum(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    return [ref.quant_matmul_reduce_sum(n["x1"], n["x2"], x1_scale=n.get("x1_scale"), x2_scale=n.get("x2_scale"))]


@register_kernel("QuantConv2D")
def quant_conv2d(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """``dtype`` is the output's proto type number here (TorchAir's converter writes it so)."""
    n = named_inputs(op, inputs)
    strides, pads, dilations = attrs["strides"], attrs["pads"], attrs["dilations"]
    codes = {DataType.DT_FLOAT16: 5, DataType.DT_FLOAT: 6, DataType.DT_BF16: 15}
    code = codes.get(DataType(int(attrs["dtype"])), 290)
    return [
        ref.quant_conv2d(
            n["x"],
            n["filter"],
            n["scale"],
            strides[2:],
            [pads[0], pads[2]],
            dilations[2:],
            int(attrs.get("groups", 1)),
            int(attrs.get("offset_x", 0)),
            output_dtype=code,
            bias=n.get("bias"),
        )
    ]


@register_kernel("AddLora")
def add_lora(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    options = {key: attrs[key] for key in ("layer_idx", "scale", "y_offset", "y_slice_size") if key in attrs}
    return [ref.batch_gather_matmul(n["y"], n["x"], n["weightB"], n["indices"], n.get("weightA"), **options)]


@register_kernel("TransposeBatchMatMul")
def transpose_batch_matmul(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    perms = {key: attrs.get(key) or None for key in ("perm_x1", "perm_x2", "perm_y")}
    return [
        ref.transpose_batchmatmul(
            n["x1"], n["x2"], bias=n.get("bias"), scale=n.get("scale"), batch_split_factor=attrs.get("batch_split_factor", 1), **perms
        )
    ]


@register_kernel("TransposeQuantBatchMatMul")
def transpose_quant_batch_matmul(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    perms = {key: attrs.get(key, default) for key, default in (("perm_x1", [1, 0, 2]), ("perm_x2", [0, 1, 2]), ("perm_y", [1, 0, 2]))}
    code = _OUTPUT_CODES[int(attrs["dtype"])]
    tensors = {name: n.get(name) for name in ("bias", "x1_scale", "x2_scale")}
    return [
        ref.transpose_quant_batchmatmul(n["x1"], n["x2"], code, batch_split_factor=attrs.get("batch_split_factor", 1), **tensors, **perms)
    ]
