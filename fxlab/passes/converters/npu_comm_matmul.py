"""Converters of torch_npu's communication-fused matmuls (MC2), as TorchAir makes them on an
Atlas A2/A3 SoC (not arch35).

``npu_all_gather_base_mm`` → ``AllGatherMatmul``, ``npu_all_gather_quant_mm`` →
``AllGatherMatmulV2``, ``npu_mm_all_reduce_base`` → ``MatmulAllReduce``,
``npu_mm_reduce_scatter_base`` → ``MatmulReduceScatter``, ``npu_quant_mm_reduce_scatter``
→ ``MatmulReduceScatterV2``, ``npu_all_to_all_matmul`` → ``AlltoAllMatmul``,
``npu_matmul_all_to_all`` → ``MatmulAlltoAll``. The communication group is the HCCL
group name the caller passes (``hcom``), written as the op's ``group`` attr as given. The
checks TorchAir makes before building (dtypes, world sizes, options the graph mode does
not take) raise as TorchAir raises them. TorchAir's bitcasts for torch_npu's own dtypes
(``x1_dtype``... given as dtype codes: HiFloat8, FP8, FP4) are not built here yet: those
calls fail naming them. The reference kernels (one rank) are
in :mod:`fxlab.ir.kernels.npu_comm`; the expert-parallel forms are in
:mod:`fxlab.passes.converters.npu_moe_comm`.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import TORCHAIR_DTYPE_NUMBER, DataType
from fxlab.ir.npu_dtypes import ge_dtype_of_code
from fxlab.passes.converters.npu import npu_converter
from fxlab.passes.converters.npu_builders import compact_op
from fxlab.passes.converters.registry import Sample

HALF_TYPES = (DataType.DT_FLOAT16, DataType.DT_BF16)
GROUP_SIZE_MAX = 65535
GATHER_QUANT_WORLD_SIZES = (2, 4, 8, 16, 32, 64)
UNDEFINED_DTYPE = 28  # TorchAir's number for DT_UNDEFINED
HCOM = "hcom_group_0"  # the samples' HCCL group name
TYPE_NAMES = {
    DataType.DT_FLOAT16: "torch.float16",
    DataType.DT_BF16: "torch.bfloat16",
    DataType.DT_INT8: "torch.int8",
    DataType.DT_FLOAT: "torch.float32",
}


def refuse_dtype_codes(options: dict[str, Any], *names: str) -> None:
    """Calls that name torch_npu dtypes: TorchAir bitcasts to GE types the built-in
    converter does not build yet."""
    given = [n for n in names if options.get(n) is not None]
    if given:
        raise NotImplementedError(
            f"{', '.join(given)}: TorchAir bitcasts these inputs to torch_npu's own GE types, which the built-in converter does not "
            "build yet: convert with --converter torchair"
        )


def packed_group_size(group_sizes: Any) -> int:
    """``group_sizes`` [m, n, k] as the one int the op's ``group_size`` attr holds."""
    if group_sizes is None:
        return 0
    if len(group_sizes) != 3:
        raise RuntimeError("group_size must be a list with 3 elements, actual group_sizes is " + str(group_sizes))
    m, n, k = (int(v) for v in group_sizes)
    if max(m, n, k) > GROUP_SIZE_MAX:
        raise RuntimeError("group_size can't larger than 65535, actual group_sizes is " + str(group_sizes))
    if min(m, n, k) < 0:
        raise RuntimeError("group_size can't smaller than 0, actual group_sizes is " + str(group_sizes))
    return (m << 32) + (n << 16) + k


def _check_half_pair(x1: ge.Tensor, x2: ge.Tensor) -> None:
    if x1.dtype != x2.dtype:
        raise AssertionError(f"Type of x1:{x1.dtype} and x2:{x2.dtype} must be same.")
    if x1.dtype not in HALF_TYPES:
        raise AssertionError(f"Input supported dtype is fp16/bf16, but got type {x1.dtype}.")


def _refuse_graph_mode_scales(options: dict[str, Any], api: str, *names: str) -> None:
    for name in names:
        if options.get(name) is not None:
            raise ValueError(
                f"The graph mode does not support the {name} parameter. If required, please use the eager mode or the graph mode of the {api} API."
            )


def _mm_samples(world_size: int = 1) -> list[Sample]:
    half = torch.float16
    x1, x2 = torch.randn(4, 16).to(half), torch.randn(16, 8).to(half)
    return [
        Sample((x1, x2, HCOM, world_size)),
        Sample((x1, x2, HCOM, world_size), {"bias": torch.randn(8).to(half), "gather_index": 0, "comm_turn": 0}),
    ]


# -- all-gather + matmul -------------------------------------------------------------------------------
@npu_converter(
    "npu_all_gather_base_mm.default",
    lambda: _mm_samples()[:1] + [Sample(_mm_samples()[1].args, {"bias": torch.randn(8).half(), "gather_output": False})],
)
def convert_all_gather_base_mm(
    self: ge.Tensor, x2: ge.Tensor, hcom: str, world_size: int, *, meta_outputs: Any = None, **options: Any
) -> list[ge.Tensor]:
    """npu_all_gather_base_mm(Tensor self, Tensor x2, str hcom, int world_size, *, Tensor? bias=None, Tensor? x1_scale=None, Tensor? x2_scale=None, int gather_index=0, bool gather_output=True, int comm_turn=0, ScalarType? output_dtype=None, str? comm_mode=None) -> (Tensor, Tensor)"""
    _check_half_pair(self, x2)
    _refuse_graph_mode_scales(options, "npu_all_gather_quant_mm", "x1_scale", "x2_scale", "output_dtype")
    if options.get("comm_mode") is not None:
        _refuse_graph_mode_scales(options, "npu_all_gather_quant_mm", "comm_mode")
    attrs = {
        "group": hcom,
        "is_trans_a": False,
        "is_trans_b": False,
        "gather_index": int(options.get("gather_index", 0)),
        "comm_turn": int(options.get("comm_turn", 0)),
        "rank_size": int(world_size),
        "is_gather_out": bool(options.get("gather_output", True)),
    }
    return ge.op("AllGatherMatmul", {"x1": self, "x2": x2, "bias": options.get("bias")}, attrs, outputs=("y", "gather_out"))


def _check_v2_dtypes(x1: ge.Tensor, x2: ge.Tensor, y_dtype: Any) -> DataType:
    """The output type: x1's for fp16/bf16 (an int8 input needs a y_dtype)."""
    if x1.dtype != x2.dtype and x1.dtype in HALF_TYPES:
        raise AssertionError(f"Type of x1:{x1.dtype} and x2:{x2.dtype} must be same.")
    output = x1.dtype if y_dtype is None else ge_dtype_of_code(int(y_dtype))
    if output is None:
        raise NotImplementedError(f"y_dtype {y_dtype}: a dtype value GE has no type for: convert with --converter torchair")
    if x1.dtype in HALF_TYPES and output != x1.dtype:
        raise RuntimeError(
            "When input is float16 or bfloat16, output should be the same as input dtype."
            f"Expected out type is {TYPE_NAMES.get(x1.dtype)}, but got {TYPE_NAMES.get(output)}"
        )
    if x1.rank < 2 or x2.rank < 2:
        raise RuntimeError(f"x1 and x2 must have at least 2 dimensions, got {x1.rank} and {x2.rank}.")
    return output


def _v2_quant_samples(world_size: int) -> list[Sample]:
    x1, x2 = torch.randint(-8, 8, (4, 16), dtype=torch.int8), torch.randint(-8, 8, (16, 8), dtype=torch.int8)
    scales = {"x1_scale": torch.rand(4, 1) * 0.1, "x2_scale": torch.rand(1, 8) * 0.1, "y_dtype": 15}
    half = torch.float16
    return [
        Sample((torch.randn(4, 16).to(half), torch.randn(16, 8).to(half), HCOM, world_size)),
        Sample((x1, x2, HCOM, world_size), scales),
    ]


@npu_converter("npu_all_gather_quant_mm.default", lambda: _v2_quant_samples(2))
def convert_all_gather_quant_mm(
    self: ge.Tensor, x2: ge.Tensor, hcom: str, world_size: int, *, meta_outputs: Any = None, **options: Any
) -> list[ge.Tensor]:
    """npu_all_gather_quant_mm(Tensor self, Tensor x2, str hcom, int world_size, *, Tensor? bias=None, Tensor? x1_scale=None, Tensor? x2_scale=None, Tensor? quant_scale=None, int block_size=0, int gather_index=0, bool gather_output=True, int comm_turn=0, int[]? group_sizes=None, bool amax_output=False, int? y_dtype=None, int? x1_dtype=None, int? x2_dtype=None, int? x1_scale_dtype=None, int? x2_scale_dtype=None, str? comm_mode=None) -> (Tensor, Tensor, Tensor)"""
    refuse_dtype_codes(options, "x1_dtype", "x2_dtype", "x1_scale_dtype", "x2_scale_dtype")
    output = _check_v2_dtypes(self, x2, options.get("y_dtype"))
    if int(world_size) not in GATHER_QUANT_WORLD_SIZES:
        raise RuntimeError(f"world_size only supports value in {list(GATHER_QUANT_WORLD_SIZES)}, but got {world_size}.")
    inputs = {"x1": self, "x2": x2, **{n: options.get(n) for n in ("bias", "x1_scale", "x2_scale", "quant_scale")}}
    attrs: dict[str, Any] = {"group": hcom, "is_trans_a": False, "is_trans_b": False}
    attrs.update(
        gather_index=int(options.get("gather_index", 0)),
        comm_turn=int(options.get("comm_turn", 0)),
        rank_size=int(world_size),
        block_size=int(options.get("block_size", 0)),
        group_size=packed_group_size(options.get("group_sizes")),
        is_gather_out=bool(options.get("gather_output", True)),
        is_amax_out=bool(options.get("amax_output", False)),
        y_dtype=TORCHAIR_DTYPE_NUMBER[output],
    )
    if options.get("comm_mode") is not None:  # the wrapper writes it only when given
        attrs["comm_mode"] = options["comm_mode"]
    return ge.op("AllGatherMatmulV2", inputs, attrs, outputs=("y", "gather_out", "amax_out"))


# -- matmul + all-reduce / reduce-scatter -------------------------------------------------------------
def _all_reduce_samples() -> list[Sample]:
    half = torch.float16
    x1, x2 = torch.randn(2, 3, 16).to(half), torch.randn(16, 8).to(half)
    return [Sample((x1, x2, HCOM)), Sample((x1, x2, HCOM), {"bias": torch.randn(8).to(half), "x3": torch.randn(2, 3, 8).to(half)})]


def _check_all_reduce_dtypes(x1: ge.Tensor, x2: ge.Tensor, options: dict[str, Any]) -> None:
    if options.get("dequant_scale") is not None or options.get("antiquant_scale") is not None:
        raise NotImplementedError(
            "npu_mm_all_reduce_base: quantised matmuls (dequant_scale, antiquant_scale): convert with --converter torchair"
        )
    for name, other in (("x2", x2), ("bias", options.get("bias")), ("x3", options.get("x3"))):
        if other is not None and other.dtype != x1.dtype:
            raise AssertionError(
                f"Non-quant scene: x1 dtype {TYPE_NAMES.get(x1.dtype)} != {name} dtype {TYPE_NAMES.get(other.dtype)}, must be same."
            )
    if x1.dtype not in HALF_TYPES:
        raise AssertionError(
            f"Non-quant scene: x1 dtype {TYPE_NAMES.get(x1.dtype)} not supported, only support ['torch.float16', 'torch.bfloat16']."
        )


@npu_converter("npu_mm_all_reduce_base.default", _all_reduce_samples)
def convert_mm_all_reduce_base(x1: ge.Tensor, x2: ge.Tensor, hcom: str, *, meta_outputs: Any = None, **options: Any) -> ge.Tensor:
    """npu_mm_all_reduce_base(Tensor x1, Tensor x2, str hcom, *, str reduce_op='sum', Tensor? bias=None, Tensor? antiquant_scale=None, Tensor? antiquant_offset=None, Tensor? x3=None, Tensor? dequant_scale=None, Tensor? pertoken_scale=None, Tensor? comm_quant_scale_1=None, Tensor? comm_quant_scale_2=None, int antiquant_group_size=0, int comm_turn=0, int[]? group_sizes=None, int? y_dtype=None, ..., int comm_quant_mode=0, str? comm_mode=None) -> Tensor"""
    refuse_dtype_codes(options, "y_dtype", "x1_dtype", "x2_dtype", "dequant_scale_dtype", "pertoken_scale_dtype")
    _check_all_reduce_dtypes(x1, x2, options)
    group_size = packed_group_size(options.get("group_sizes"))
    if x1.rank < 2 or x2.rank < 2:
        raise RuntimeError(f"Input x1 and x2 dimensions can't be less than 2, actual x1 dimension is {x1.rank}.")
    comm_mode = options.get("comm_mode")
    if comm_mode is not None and comm_mode != "ai_cpu":
        raise RuntimeError("In Ascend910b SOC, if input comm_mode is not none, it must be 'ai_cpu', but now it is: {" + comm_mode + "}.")
    names = (
        "bias",
        "x3",
        "antiquant_scale",
        "antiquant_offset",
        "dequant_scale",
        "pertoken_scale",
        "comm_quant_scale_1",
        "comm_quant_scale_2",
    )
    attrs = {
        "group": hcom,
        "reduce_op": options.get("reduce_op", "sum"),
        "is_trans_a": False,
        "is_trans_b": False,
        "comm_turn": int(options.get("comm_turn", 0)),
        "antiquant_group_size": int(options.get("antiquant_group_size", 0)),
        "group_size": group_size,
        "y_dtype": UNDEFINED_DTYPE,
        "comm_quant_mode": int(options.get("comm_quant_mode", 0)),
        "comm_mode": comm_mode or "ai_cpu",
    }
    return ge.op1("MatmulAllReduce", {"x1": x1, "x2": x2, **{n: options.get(n) for n in names}}, attrs)


@npu_converter(
    "npu_mm_reduce_scatter_base.default",
    lambda: [Sample(s.args, {k: v for k, v in s.kwargs.items() if k == "bias"}) for s in _mm_samples()],
)
def convert_mm_reduce_scatter_base(
    self: ge.Tensor, x2: ge.Tensor, hcom: str, world_size: int, *, meta_outputs: Any = None, **options: Any
) -> ge.Tensor:
    """npu_mm_reduce_scatter_base(Tensor self, Tensor x2, str hcom, int world_size, *, str reduce_op="sum", Tensor? bias=None, Tensor? x1_scale=None, Tensor? x2_scale=None, int comm_turn=0, ScalarType? output_dtype=None, str? comm_mode=None) -> Tensor"""
    _check_half_pair(self, x2)
    api = "npu.npu_quant_mm_reduce_scatter"
    for name in ("x1_scale", "x2_scale", "output_dtype"):
        if options.get(name) is not None:
            raise ValueError(
                f"The graph mode does not support the {name} parameter currently. If required, please use eager mode or the graph mode of {api} API"
            )
    if options.get("comm_mode") is not None:
        raise ValueError("The comm_mode parameter is not supported on Ascend910B/Ascend910C.")
    attrs = {
        "group": hcom,
        "reduce_op": options.get("reduce_op", "sum"),
        "is_trans_a": False,
        "is_trans_b": False,
        "comm_turn": int(options.get("comm_turn", 0)),
        "rank_size": int(world_size),
    }
    return ge.op1("MatmulReduceScatter", {"x1": self, "x2": x2, "bias": options.get("bias")}, attrs)


@npu_converter("npu_quant_mm_reduce_scatter.default", lambda: _v2_quant_samples(1))
def convert_quant_mm_reduce_scatter(
    self: ge.Tensor, x2: ge.Tensor, hcom: str, world_size: int, *, meta_outputs: Any = None, **options: Any
) -> list[ge.Tensor]:
    """npu_quant_mm_reduce_scatter(Tensor self, Tensor x2, str hcom, int world_size, *, str reduce_op="sum", Tensor? bias=None, Tensor? x1_scale=None, Tensor? x2_scale=None, Tensor? quant_scale=None, int block_size=0, int comm_turn=0, int[]? group_sizes=None, bool amax_output=False, int? y_dtype=None, int? x1_dtype=None, int? x2_dtype=None, int? x1_scale_dtype=None, int? x2_scale_dtype=None, str? comm_mode=None) -> (Tensor, Tensor)"""
    refuse_dtype_codes(options, "x1_dtype", "x2_dtype", "x1_scale_dtype", "x2_scale_dtype")
    group_size = packed_group_size(options.get("group_sizes"))
    output = _check_v2_dtypes(self, x2, options.get("y_dtype"))
    inputs = {"x1": self, "x2": x2, **{n: options.get(n) for n in ("bias", "x1_scale", "x2_scale", "quant_scale")}}
    attrs: dict[str, Any] = {"group": hcom, "reduce_op": options.get("reduce_op", "sum"), "is_trans_a": False, "is_trans_b": False}
    attrs.update(
        comm_turn=int(options.get("comm_turn", 0)),
        rank_size=int(world_size),
        block_size=int(options.get("block_size", 0)),
        group_size=group_size,
        is_amax_out=bool(options.get("amax_output", False)),
        y_dtype=TORCHAIR_DTYPE_NUMBER[output],
        comm_mode=options.get("comm_mode") or "aiv",  # TorchAir's choice before arch35
    )
    return ge.op("MatmulReduceScatterV2", inputs, attrs, outputs=("y", "amax_out"))


# -- all-to-all + matmul -----------------------------------------------------------------------------
A2A_DEFAULTS = {
    "all2all_axes": [-2, -1],
    "y_dtype": UNDEFINED_DTYPE,
    "x1_quant_mode": 0,
    "x2_quant_mode": 0,
    "comm_quant_mode": 0,
    "x1_quant_dtype": UNDEFINED_DTYPE,
    "comm_quant_dtype": UNDEFINED_DTYPE,
    "transpose_x1": False,
    "transpose_x2": False,
    "group_size": 0,
    "alltoall_out_flag": True,
    "comm_mode": "ai_cpu",
}


def _check_a2a_dtypes(x1: ge.Tensor, x2: ge.Tensor, bias: ge.Tensor | None) -> None:
    for name, t in (("x1", x1), ("x2", x2)):
        if t.dtype not in HALF_TYPES:
            raise AssertionError(f"Type of {name}:{TYPE_NAMES.get(t.dtype)} is error, {name} should be float16/bf16.")
    if x1.dtype != x2.dtype:
        raise AssertionError(f"Type of x1:{TYPE_NAMES.get(x1.dtype)} and x2:{TYPE_NAMES.get(x2.dtype)} must be same.")
    if bias is not None and bias.dtype not in (DataType.DT_FLOAT, x1.dtype):
        raise AssertionError(f"Type of bias:{TYPE_NAMES.get(bias.dtype)} is error, bias should be {TYPE_NAMES.get(x1.dtype)} or float.")


def _a2a_attrs(hcom: str, world_size: int, axes: Any, x1: ge.Tensor, comm_mode: Any) -> dict[str, Any]:
    attrs = {
        **A2A_DEFAULTS,
        "group": hcom,
        "world_size": int(world_size),
        "all2all_axes": list(axes),
        "y_dtype": TORCHAIR_DTYPE_NUMBER[x1.dtype],
    }
    attrs["comm_mode"] = comm_mode
    return attrs


@npu_converter(
    "npu_all_to_all_matmul.default", lambda: [Sample(s.args, {k: v for k, v in s.kwargs.items() if k == "bias"}) for s in _mm_samples()]
)
def convert_all_to_all_matmul(
    x1: ge.Tensor,
    x2: ge.Tensor,
    hcom: str,
    world_size: int,
    bias: ge.Tensor | None = None,
    all2all_axes: Any = None,
    all2all_out_flag: bool = True,
    comm_mode: str | None = None,
    *,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_all_to_all_matmul(Tensor x1, Tensor x2, str hcom, int world_size, Tensor? bias=None, int[]? all2all_axes=None, bool all2all_out_flag=True, str? comm_mode=None) -> (Tensor, Tensor)"""
    _check_a2a_dtypes(x1, x2, bias)
    attrs = {**_a2a_attrs(hcom, world_size, all2all_axes or [-2, -1], x1, comm_mode), "alltoall_out_flag": bool(all2all_out_flag)}
    defaults = {k: v for k, v in A2A_DEFAULTS.items() if k != "comm_mode"}
    # comm_mode None is left out of the attrs (no value to write), as the wrapper does.
    attrs = {k: v for k, v in attrs.items() if v is not None}
    return compact_op(
        "AlltoAllMatmul", {"x1": x1, "x2": x2, "bias": bias}, attrs, {**defaults, "comm_mode": "ai_cpu"}, outputs=("y", "all2all_out")
    )


@npu_converter(
    "npu_matmul_all_to_all.default", lambda: [Sample(s.args, {k: v for k, v in s.kwargs.items() if k == "bias"}) for s in _mm_samples()]
)
def convert_matmul_all_to_all(
    x1: ge.Tensor,
    x2: ge.Tensor,
    hcom: str,
    world_size: int,
    bias: ge.Tensor | None = None,
    all2all_axes: Any = None,
    comm_mode: str | None = None,
    *,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """npu_matmul_all_to_all(Tensor x1, Tensor x2, str hcom, int world_size, Tensor? bias=None, int[]? all2all_axes=None, str? comm_mode=None) -> Tensor"""
    _check_a2a_dtypes(x1, x2, bias)
    attrs = _a2a_attrs(hcom, world_size, all2all_axes or [-1, -2], x1, comm_mode)
    del attrs["x1_quant_dtype"], attrs["alltoall_out_flag"]
    attrs = {k: v for k, v in attrs.items() if v is not None}
    defaults = {**A2A_DEFAULTS, "all2all_axes": [-1, -2]}
    return compact_op("MatmulAlltoAll", {"x1": x1, "x2": x2, "bias": bias}, attrs, defaults)[0]
