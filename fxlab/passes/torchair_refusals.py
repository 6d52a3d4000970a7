"""What TorchAir's own converters do with each op, from the table generated from its
sources (:mod:`fxlab.compat.torchair_converter_scan`): convert it, refuse it (the
converter only raises), or have no converter at all.

The conversion pass asks :func:`refusal` before running fxlab's converter of an op: an
op TorchAir refuses, or an op of torch's or torch_npu's own namespaces TorchAir has no
converter for, fails on an NPU machine, so fxlab does not say "ok" for it either (unless
asked to convert such ops). For those namespaces fxlab never assumes a GE op
(:func:`is_protected`): an op without a built-in converter is reported with TorchAir's
own verdict (:func:`not_converted_reason`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.fx as fx
from torch._higher_order_ops.auto_functionalize import get_mutable_args, read_view_information_from_args

from fxlab.passes.conversion_result import target_text

TABLE_PATH = Path(__file__).with_name("torchair_converters.json")
# How a pass's note begins when it names a rewrite that may make the graph compute other
# values than the model (fxlab's pass does what TorchAir's does, to give TorchAir's
# graph): the aclgraph check quotes these notes beside a mismatch they may cause.
HAZARD = "hazard"
# How the aclgraph check begins a mismatch TorchAir's own backend, run end to end on the
# same model, is shown to make: only then is a fault said to be TorchAir's.
TORCHAIR_FAULT = "TorchAir fault"
# What TorchAir's _valid_graph (npu_fx_compiler.py) raises, before converting a graph, for a
# scope marker without its pair in that graph (the start of each message).
UNCLOSED_SCOPE_ERROR = (
    "After you call the torch.ops.air.scope_enter operator, there is no paired call to the torch.ops.air.scope_exit operator"
)
UNOPENED_SCOPE_ERROR = "you must first call the torch.ops.air.scope_enter operator, as they must be called in pairs"
CONVERTS, REFUSES, NO_CONVERTER = "converts", "refuses", "no converter"
# torch's own operator namespaces. TorchAir converts their ops only with a registered
# converter: its auto converter is for users' custom ops, and fxlab never makes up a GE
# op for one of these (no GE op is named after an ATen or collective op).
TORCH_NAMESPACES = frozenset(
    {
        "aten", "prims", "prim", "rngprims", "debugprims", "higher_order",
        "_c10d_functional", "c10d_functional", "_c10d_functional_autograd", "c10d", "_dtensor", "symm_mem",
        "quantized", "_quantized", "quantized_decomposed", "quantization",
        "mkldnn", "mkldnn_prepacked", "onednn", "mkl", "sparse",
        "inductor", "inductor_prims", "_inductor_test", "profiler", "export", "static_runtime", "debug_mode_ops", "_native", "_test",
    }
)  # fmt: skip
# torch_npu's: every op of ``npu_define`` is TorchAir's own; ``npu`` holds torch_npu's
# operators and, as TorchAir's documentation writes them, users' custom ops too.
TORCH_NPU_NAMESPACES = ("npu", "npu_define")
# Names of torch_npu's own ``npu`` operators (``npu_rms_norm``), added by whoever defines
# them (fxlab.compat, from a torch_npu copy's schemas); those TorchAir registers a
# converter for count too.
TORCH_NPU_OPERATORS: set[str] = set()


# The rewrite Ascend users apply for refused ops they commonly meet, by op (no overload):
# TorchAir's refusals, and custom ops of libraries that have no GE op.
REWRITES = {
    "aten.index_copy": (
        "on Ascend, write the KV cache with torch_npu.scatter_update_(cache, positions, new, axis), "
        "torch_npu.npu_scatter_nd_update_(cache, indices, new) or a slice assignment (cache[:, :, start:end] = new), which TorchAir converts"
    ),
    "aten.index_put": "index with a slice assignment or torch.scatter / scatter_update_, which TorchAir converts",
    "aten.roll": "write the roll as torch.cat of two slices, which TorchAir converts",
    # nn.TransformerEncoderLayer / nn.MultiheadAttention in eval mode without grad take torch's
    # fused fast path (allowed on the NPU too), whose ops TorchAir has no converter for.
    "aten._transformer_encoder_layer_fwd": (
        "turn torch's fused fast path off with torch.backends.mha.set_fastpath_enabled(False) before compiling: "
        "the layer then runs as its matmuls, softmax and layer norms, which TorchAir converts"
    ),
    "aten._native_multi_head_attention": (
        "turn torch's fused fast path off with torch.backends.mha.set_fastpath_enabled(False) before compiling: "
        "the attention then runs as its matmuls and softmax, which TorchAir converts"
    ),
    "transformers.grouped_mm_fallback": (
        'run the experts as batched matmuls (config._experts_implementation = "batched_mm", or '
        'experts_implementation="batched_mm" in from_pretrained), which TorchAir converts'
    ),
}


@dataclass(frozen=True)
class TorchAirVerdict:
    """TorchAir's verdict on one op: ``converts``, ``refuses`` or ``no converter``."""

    op: str
    verdict: str
    reason: str = ""
    where: str = ""

    @property
    def fails(self) -> bool:
        return self.verdict != CONVERTS

    def message(self) -> str:
        if self.verdict == REFUSES:
            said = f"TorchAir refuses {self.op}: its converter only raises {self.reason} (ge_converter/{self.where})"
        elif self.verdict == NO_CONVERTER and self.reason:  # why its auto converter finds no GE op for it
            said = f"TorchAir has no converter for {self.op}: {self.reason}"
        elif self.verdict == NO_CONVERTER and self.op.split(".")[0] in TORCH_NPU_NAMESPACES:
            said = (
                f"TorchAir has no converter for {self.op}: its auto converter would need CANN to register an Ascend IR "
                "named after the operator, which fxlab does not assume"
            )
        elif self.verdict == NO_CONVERTER:
            said = f"TorchAir has no converter for {self.op}, so its conversion fails on it"
        else:
            return f"TorchAir converts {self.op} (ge_converter/{self.where})"
        rewrite = REWRITES.get(self.op.rsplit(".", 1)[0])
        return f"{said}. Fix: {rewrite}" if rewrite else said


@functools.cache
def load_table(path: Path = TABLE_PATH) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


@functools.cache
def registrations(path: Path = TABLE_PATH) -> dict[str, TorchAirVerdict]:
    """``{"aten.x.overload": verdict}`` for every op TorchAir registers a converter for."""
    table = load_table(path)
    return {row[0]: TorchAirVerdict(**dict(zip(table["fields"], row))) for row in table["registrations"]}


def op_name(target: Any) -> str:
    """``aten.add.Tensor`` for an OpOverload (its ``str``), as the table names ops."""
    return str(target)


def is_protected(name: str, table: dict[str, TorchAirVerdict] | None = None) -> bool:
    """Whether op ``name`` (``ns.op.overload``, or an OpOverload's ``str``) is torch's or
    torch_npu's own: an op TorchAir converts only with a registered converter, for which
    no GE op may be assumed from its name."""
    namespace, _, rest = name.partition(".")
    if namespace in TORCH_NAMESPACES or namespace == "npu_define":
        return True
    if namespace != "npu":
        return False
    return rest.split(".")[0] in TORCH_NPU_OPERATORS or name in (registrations() if table is None else table)


def verdict_of(target: Any, table: dict[str, TorchAirVerdict] | None = None) -> TorchAirVerdict | None:
    """TorchAir's verdict on ``target``; ``None`` for a user's custom op TorchAir does
    not register (its auto converter decides)."""
    name = op_name(target)
    known = (registrations() if table is None else table).get(name)
    if known is not None:
        return known
    return TorchAirVerdict(name, NO_CONVERTER, NO_CONVERTER_REASONS.get(name, "")) if is_protected(name, table) else None


# Ops whose TorchAir converter does more than raise (the scan counts it as converting),
# yet fails when run on the machine fxlab's built-in conversion stands for (an Atlas
# A2/A3 SoC): why, and where. Found by running them through the bridge.
_OUTPUTS_SHORT = "AssertionError: The length of ge_outputs must be equal to meta_outputs"
_BEFORE_ARCH35 = "on SoCs before arch35 (Atlas A2/A3; TorchAir builds BatchNormV3 only on arch35 SoCs)"
FAILS_WHEN_RUN = {
    "aten._native_batch_norm_legit.default": (
        "NotImplementedError: torch.ops.aten._native_batch_norm_legit ge_converter is not implemented! "
        f"{_BEFORE_ARCH35}, and on arch35 AssertionError: The length of ge_outputs must be equal to meta_outputs "
        "(it returns five outputs for the schema's three)",
        "aten/_native_batch_norm_legit.py:13",
    ),
    "aten._native_batch_norm_legit.no_stats": (
        f"NotImplementedError: torch.ops.aten._native_batch_norm_legit.no_stats ge_converter is not implemented! {_BEFORE_ARCH35}",
        "aten/_native_batch_norm_legit.py:84",
    ),
    # Its converter calls the MoeGatingTopKSoftmax builder with the v2 op's attrs, which
    # that builder does not take.
    "npu.npu_moe_gating_top_k_softmax_v2.default": (
        "TypeError: got an unexpected keyword argument 'renorm' (MoeGatingTopKSoftmax's builder has no renorm or output_softmax)",
        "custom/npu_moe_gating_top_k_softmax_v2.py:22",
    ),
    "npu.npu_fusion_attention_grad.default": (
        f"{_OUTPUTS_SHORT} (its converter returns FlashAttentionScoreGrad's four outputs, dq, dk, dv and dpse, for the "
        "schema's five, which end with dsink)",
        "custom/npu_fusion_attention.py:76",
    ),
    # In-place ops whose converter returns every output of the GE op: on an NPU machine
    # torch_npu's functionalization turns them into their functional forms, which convert.
    "npu.npu_mla_prolog_v3.default": (
        f"{_OUTPUTS_SHORT} (its converter returns MlaPrologV3's seven outputs, the caches too, for the schema's five); "
        "functionalized, the op becomes npu_mla_prolog_v3_functional, which TorchAir converts",
        "custom/flash_attention.py:282",
    ),
    "npu.npu_qkv_rms_norm_rope_cache.default": (
        f"{_OUTPUTS_SHORT} (its converter returns QkvRmsNormRopeCache's six outputs, q_out and the caches too, for the "
        "schema's three); functionalized, the op becomes npu_qkv_rms_norm_rope_cache_functional, which TorchAir converts",
        "custom/npu_qkv_rms_norm_rope_cache.py:5",
    ),
    "npu.npu_recurrent_gated_delta_rule.default": (
        "AssertionError: meta_outputs must be list or a tuple (its converter returns RecurrentGatedDeltaRule's two outputs, "
        "the state too, for the schema's one); functionalized, the op becomes npu_recurrent_gated_delta_rule_functional, "
        "which TorchAir converts",
        "custom/recurrent_gated_delta_rule.py:6",
    ),
}


# torch_npu operators TorchAir has no converter for, where more is known than that its
# auto converter would need an Ascend IR named after the operator: why it fails.
_NO_NPU_FORMAT_CAST = "its auto converter looks for the GE op NpuFormatCast, which GE does not register; cast formats outside the graph"
NO_CONVERTER_REASONS = {
    "npu.npu_format_cast.default": _NO_NPU_FORMAT_CAST,
    "npu.npu_format_cast.Tensor": _NO_NPU_FORMAT_CAST,
    "npu._npu_format_cast.default": _NO_NPU_FORMAT_CAST,
    "npu._npu_format_cast.aclnn": _NO_NPU_FORMAT_CAST,
    "npu._npu_format_cast.input_dtype": _NO_NPU_FORMAT_CAST,
    # TorchAir's pattern fusion makes this op for the aclgraph path; its GE path has no converter for it.
    "npu.npu_add_rms_norm_quant.default": "its auto converter looks for the GE op NpuAddRmsNormQuant, which GE does not register",
    "aten._assert_scalar.default": (
        "it is the runtime check of a size (a torch._check on a size, or the check torch adds after an op whose output size "
        "depends on the data), and TorchAir registers no converter for it: keep such checks out of the code TorchAir compiles"
    ),
}


# Ops TorchAir converts into a graph whose results are not ATen's: what goes wrong. fxlab
# builds the same graph (it shows what TorchAir hands to GE), and its IR check, which runs
# that graph on CPU, names the cause beside the mismatch it finds.
WRONG_RESULTS = {
    "aten._native_batch_norm_legit_functional.default": (
        "TorchAir's converter returns BatchNormV3's outputs in GE's order (y, running mean, running var, batch mean, batch rstd) "
        "where ATen's are y, batch mean, batch rstd, running mean, running var, so the graph TorchAir builds writes the batch "
        "statistics into the running statistics (the layer's output is right)"
    ),
    "aten._embedding_bag.default": (
        "TorchAir's converter defaults mode to 1 (mean) where ATen's schema defaults it to 0 (sum), so a call that leaves mode "
        "out (nn.EmbeddingBag(mode='sum'), whose mode Dynamo's graph drops as the default) averages each bag in the graph "
        "TorchAir builds"
    ),
    "aten._embedding_bag_forward_only.default": (
        "TorchAir's converter defaults mode to 1 (mean) where ATen's schema defaults it to 0 (sum), so a call that leaves mode "
        "out averages each bag in the graph TorchAir builds"
    ),
    "npu.npu_group_norm_silu.default": (
        "TorchAir's converter defaults eps to 1e-4 where torch_npu's schema defaults it to 1e-5, so a call that leaves eps out "
        "gets eps=1e-4 in the graph TorchAir builds (pass eps explicitly)"
    ),
    "npu.npu_quant_scatter_.default": (
        "TorchAir's converter of the in-place form defaults axis to 0 and quant_axis to 1 where torch_npu's schema defaults them "
        "to -2 and -1, so a call that leaves them out writes along other axes in the graph TorchAir builds (pass them explicitly)"
    ),
    "npu.npu_fusion_attention.default": (
        "TorchAir's converter does not pass the position bias on (FlashAttentionScore's real_shift is left empty), so with a "
        "pse the graph it builds attends without it"
    ),
    "npu.npu_rotary_mul.default": (
        "without a rotate matrix, TorchAir's converter builds RotaryMul, which rotates halves, whatever rotary_mode says: "
        "with rotary_mode='interleave' the graph it builds rotates halves"
    ),
    "npu.npu_rope_quant_kvcache.default": (
        "TorchAir's converter does not pass cache_mode on (DequantRopeQuantKvcache has no such attr), so with "
        "cache_mode='page' the graph it builds writes the caches as contiguous"
    ),
    "npu.npu_dequant_rope_quant_kvcache.default": (
        "TorchAir's converter does not pass cache_mode on (DequantRopeQuantKvcache has no such attr), so with "
        "cache_mode='page' the graph it builds writes the caches as contiguous"
    ),
    "aten.std.correction": (
        "TorchAir's converter (but on Ascend 910_95/950, where it builds ReduceStdV2) gives the mean back its reduced dim "
        "for every dim but dim=[-1] without keepdim: it Expands the mean of a [..., M, N] input to the input's shape along "
        "the last axis, which fails unless the sizes line up and takes each row's deviation from other rows' means where "
        "they do (write x.std(x.dim() - 1) or keepdim=True)"
    ),
}


class RefusedLikeTorchAir(NotImplementedError):
    """Raised by a built-in converter for the arguments TorchAir's own converter raises
    on (an option it does not support, a branch for other SoCs): the node is refused, as
    on an NPU machine, with TorchAir's exception and where its converter raises it (by
    default, where TorchAir registers the op's converter)."""

    def __init__(self, reason: str, where: str | None = None) -> None:
        super().__init__(reason)
        self.reason, self.where = reason, where

    def message(self, target: Any) -> str:
        where = self.where or _converter_file(target)
        return f"TorchAir refuses {op_name(target)} with these arguments: its converter raises {self.reason} (ge_converter/{where})"


class NotBuiltIn(NotImplementedError):
    """Raised by a built-in converter for arguments TorchAir converts but the built-in
    conversion does not build (torch_npu's own low-precision dtypes): the node is not
    converted, and the message points at TorchAir's converter."""

    def message(self, target: Any) -> str:
        return f"{op_name(target)} with {self}: {not_converted_reason(target)}"


# TorchAir's converter of auto_functionalized_v2 (not under ge_converter/): one copy-back
# per mutated argument, where the graph node has one output per base.
AUTO_FUNCTIONALIZED_V2_CONVERTER = "_ge_concrete_graph/auto_functionalized_v2.py:242"
_SHARED_BASE_ERROR = "AssertionError: The length of ge_outputs must be equal to meta_outputs"


class MutatedViewsOfOneBase(RefusedLikeTorchAir):
    """A custom in-place op whose mutated arguments include two views of one tensor:
    TorchAir's ``auto_functionalized_v2`` converter returns one output too many and its
    walk raises. ``views`` names the arguments, by base."""

    def __init__(self, op: str, views: list[list[str]]) -> None:
        super().__init__(_SHARED_BASE_ERROR, AUTO_FUNCTIONALIZED_V2_CONVERTER)
        self.op, self.views = op, views

    def message(self, target: Any = None) -> str:
        groups = "; ".join(" and ".join(names) for names in self.views)
        first = self.views[0]
        copies = "; ".join(f"{name} = {name}.clone()" for name in first)
        return (
            f"TorchAir fails on {self.op} here: its mutated arguments {groups} are views of one tensor. TorchAir's "
            f"auto_functionalized_v2 converter ({AUTO_FUNCTIONALIZED_V2_CONVERTER}) copies each mutated argument back into "
            "its base and returns one value per mutated argument, where the graph has one per base, so it returns one "
            f"output too many and raises {_SHARED_BASE_ERROR}. Fix: pass the op the tensor they are views of and let it "
            f"write both parts, or pass the op copies ({copies}) and read the results from them"
        )


def mutated_views_of_one_base(mutable_op: Any, kwargs: Any) -> MutatedViewsOfOneBase | None:
    """The refusal of an ``auto_functionalized_v2`` call (its ``kwargs``, FX nodes or
    values) whose mutated arguments include two views of one base, else ``None``."""
    names, types = get_mutable_args(mutable_op)
    bases = list(kwargs.get("_all_bases", []))
    views = read_view_information_from_args(names, types, dict(kwargs), bases)
    by_base: dict[int, list[str]] = {}
    for name in names:
        info = views.get(name)
        if info is not None and not isinstance(info, list):
            by_base.setdefault(info.base_index, []).append(name)
    shared = [group for group in by_base.values() if len(group) > 1]
    return MutatedViewsOfOneBase(str(mutable_op), shared) if shared else None


# Python's operators TorchAir's walk over the graph converts (its ``_is_binary_operator``);
# it evaluates every other builtin itself, on its own packed graph values
# (npu_fx_compiler.py:208), which have no comparisons.
WALK_CONVERTS = frozenset(
    {"operator.add", "operator.sub", "operator.mul", "operator.truediv", "operator.floordiv", "operator.pow"}
    | {"operator.mod", "operator.neg", "math.floor", "math.ceil"}
)
SYMBOLIC_COMPARISONS = {
    "operator.ge": ">=",
    "operator.gt": ">",
    "operator.le": "<=",
    "operator.lt": "<",
    "operator.eq": "==",
    "operator.ne": "!=",
}
_WALK_EVALUATES = "npu_fx_compiler.py:208"
SIZE_CHECK_FIX = (
    "keep size checks out of the code TorchAir compiles (a torch._check on a size, or the check torch adds after an op "
    "whose output size depends on the data: give that size statically)"
)


def symbolic_comparison(node: Any) -> str | None:
    """``a symbolic size comparison `u0 >= 4` (operator.ge)`` for a node comparing sizes
    (SymInts) with Python's operators, else ``None``."""
    name = target_text(node.target)
    if name not in SYMBOLIC_COMPARISONS:
        return None
    value = node.meta.get("val")
    expression = (
        value.node.expr
        if isinstance(value, torch.SymBool)
        else " ".join(map(_operand, (node.args[0], SYMBOLIC_COMPARISONS[name], node.args[1])))
    )
    return f"a symbolic size comparison `{expression}` ({name})"


def _operand(value: Any) -> str:
    meta = value.meta.get("val", value.name) if hasattr(value, "meta") else value
    return str(meta.node.expr) if isinstance(meta, (torch.SymInt, torch.SymBool)) else str(meta)


def symbolic_comparison_refusal(node: Any) -> str | None:
    """What TorchAir does with a node comparing sizes: its walk fails on it (proven by its
    own backend), with where and why; ``None`` for any other node."""
    described = symbolic_comparison(node)
    if described is None:
        return None
    sign = SYMBOLIC_COMPARISONS[target_text(node.target)]
    left, right = (_walk_type(a) for a in node.args[:2])
    return (
        f"TorchAir does not convert {described}: its walk over the graph evaluates Python's comparisons itself, on its "
        f"own packed graph values ({_WALK_EVALUATES}), and raises TypeError: '{sign}' not supported between instances of "
        f"'{left}' and '{right}'. Fix: {SIZE_CHECK_FIX}"
    )


def _walk_type(value: Any) -> str:
    """The type TorchAir's walk hands a comparison: its value pack for a graph value."""
    return "ValuePack" if hasattr(value, "meta") else type(value).__name__


def _converter_file(target: Any) -> str:
    verdict = verdict_of(target)
    return verdict.where.split(":", 1)[0] if verdict is not None and verdict.where else "custom/"


# The arguments with which each op of WRONG_RESULTS departs (by the schema's argument
# names, those the node passes): a call without them gets ATen's result from TorchAir too.
WRONG_ONLY_WITH: dict[str, Callable[[dict[str, Any]], bool]] = {
    "aten._embedding_bag.default": lambda given: "mode" not in given,
    "aten._embedding_bag_forward_only.default": lambda given: "mode" not in given,
    "npu.npu_group_norm_silu.default": lambda given: "eps" not in given,
    "npu.npu_quant_scatter_.default": lambda given: "axis" not in given or "quant_axis" not in given,
    "npu.npu_fusion_attention.default": lambda given: given.get("pse") is not None,
    "npu.npu_rotary_mul.default": lambda given: given.get("rotary_mode") == "interleave" and given.get("rotate") is None,
    "npu.npu_rope_quant_kvcache.default": lambda given: given.get("cache_mode") == "page",
    "npu.npu_dequant_rope_quant_kvcache.default": lambda given: given.get("cache_mode") == "page",
    "aten.std.correction": lambda given: list(given.get("dim") or []) == [-1] and not given.get("keepdim") and _rank(given["self"]) > 1,
}


def _rank(node: Any) -> int:
    """The number of dims of an FX node's tensor value (0 when it has none)."""
    value = node.meta.get("val") if isinstance(node, fx.Node) else None
    return value.dim() if isinstance(value, torch.Tensor) else 0


def wrong_result(node: fx.Node) -> str | None:
    """How TorchAir's graph of ``node`` departs from ATen's result, when it is known to
    with the arguments the node passes."""
    name = op_name(node.target)
    why = WRONG_RESULTS.get(name)
    only_with = WRONG_ONLY_WITH.get(name)
    if why is None or only_with is None:
        return why
    return why if only_with(given_arguments(node)) else None


def given_arguments(node: fx.Node) -> dict[str, Any]:
    """The arguments ``node`` passes its op, by the schema's names (those it leaves out are absent)."""
    schema = getattr(node.target, "_schema", None)
    names = [argument.name for argument in schema.arguments] if schema is not None else []
    return {**dict(zip(names, node.args)), **node.kwargs}


def refusal(target: Any) -> TorchAirVerdict | None:
    """The verdict of an op TorchAir fails on, else ``None``."""
    failure = FAILS_WHEN_RUN.get(op_name(target))
    if failure is not None:
        return TorchAirVerdict(op_name(target), REFUSES, *failure)
    verdict = verdict_of(target)
    return verdict if verdict is not None and verdict.fails else None


def not_converted_reason(target: Any) -> str:
    """Why a protected op without a built-in converter is not converted, with TorchAir's
    verdict and where its converter is: what to do about it."""
    verdict = verdict_of(target)
    if verdict is not None and verdict.verdict == CONVERTS:
        return f"not converted by the built-in conversion; TorchAir converts it (ge_converter/{verdict.where}); use --converter torchair"
    if verdict is not None:
        return verdict.message()
    return f"no Ascend IR converter for {target}: TorchAir has none either, so graph mode fails on it on the NPU machine too"
