"""Device-dependent choices made as on an NPU machine, while the tensors stay on CPU.

``F.scaled_dot_product_attention`` is the one that changes what a model's graph is. Torch
picks its SDPA backend by device; captured on CPU it becomes
``aten._scaled_dot_product_flash_attention_for_cpu``, an op that exists only on CPU.
On an NPU machine torch_npu owns the choice: it registers its own NPU kernel for
``aten::scaled_dot_product_attention`` (its ``npu_native_functions`` yaml), which runs
the fused ``FlashAttentionScore`` (``npu_fusion_attention``) when the mask is boolean
or absent and falls back to the small-op math otherwise (the case transformers' SDPA
integration converts masks to boolean to avoid on NPU); dropout needs the math path too.

:func:`resolve_sdpa_as_on_npu` rewrites each SDPA call of a Dynamo graph into that
choice before aot_autograd traces it: ``torch.ops.npu.npu_fusion_attention`` in BNSD
layout (boolean mask inverted: torch_npu masks where True, SDPA keeps where True; a
causal flag becomes the upper-triangle mask), or torch's math decomposition. The fused
form needs torch_npu's operators to be defined (``fxlab.compat.torch_npu_ops`` defines them
when a model imports torch_npu under the compat layer); without them every call takes the
math form. Each
choice is returned as a sentence for the trace's notes.
"""

from __future__ import annotations

import contextlib
import math
from collections import Counter
from collections.abc import Iterator
from typing import Any

import torch
import torch.fx as fx
from torch.overrides import TorchFunctionMode

SDPA_TARGETS = (torch._C._nn.scaled_dot_product_attention, torch.nn.functional.scaled_dot_product_attention)
FUSED = "torch_npu.npu_fusion_attention (BNSD; GE FlashAttentionScore), as torch_npu's NPU kernel for SDPA runs a boolean or absent mask"
MATH = "torch's math decomposition (matmul, softmax, matmul), torch_npu's fallback for {why}"


def _fused_op() -> Any:
    try:
        return torch.ops.npu.npu_fusion_attention.default
    except (AttributeError, RuntimeError):
        return None


def sdpa_as_fused(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attn_mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> torch.Tensor:
    """SDPA as torch_npu computes it on an NPU: ``npu_fusion_attention`` in BNSD layout."""
    masked = None if attn_mask is None else torch.logical_not(attn_mask)
    if is_causal:
        causal = torch.ones(query.shape[-2], key.shape[-2], dtype=torch.bool, device=query.device).triu(1)
        masked = causal if masked is None else torch.logical_or(masked, causal)
    scale = scale if scale is not None else 1.0 / math.sqrt(query.shape[-1])
    return _fused_op()(query, key, value, query.shape[1], "BNSD", atten_mask=masked, scale=scale)[0]


def sdpa_as_math(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attn_mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> torch.Tensor:
    """SDPA by torch's math decomposition (what runs where no fused kernel is chosen)."""
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        # As torch's SDPA does before its math path: keep -> 0, masked -> -inf.
        attn_mask = torch.zeros_like(attn_mask, dtype=query.dtype).masked_fill(attn_mask.logical_not(), float("-inf"))
    return torch.ops.aten._scaled_dot_product_attention_math.default(
        query, key, value, attn_mask, dropout_p, is_causal, None, scale=scale, enable_gqa=enable_gqa
    )[0]


def _arg(node: fx.Node, index: int, name: str, default: Any) -> Any:
    return node.args[index] if len(node.args) > index else node.kwargs.get(name, default)


def _value(arg: Any) -> Any:
    return arg.meta.get("example_value") if isinstance(arg, fx.Node) else arg


def _choice(node: fx.Node, fused_available: bool) -> str | None:
    """Why this call takes the math form; None when it takes the fused one."""
    query = _value(node.args[0]) if node.args else None
    return _why_math(query, _value(_arg(node, 3, "attn_mask", None)), _value(_arg(node, 4, "dropout_p", 0.0)), fused_available)


def _why_math(query: Any, mask: Any, dropout: Any, fused_available: bool) -> str | None:
    """Why an SDPA call with these values takes the math form; None: the fused one."""
    if not fused_available:
        return "every call here: no torch_npu operators defined (torch_npu was not imported under fxlab's compat layer)"
    if isinstance(dropout, (int, float)) and dropout > 0:
        return "dropout"
    if isinstance(mask, torch.Tensor) and mask.dtype != torch.bool:
        return "a float mask"
    if not isinstance(query, torch.Tensor) or query.dim() != 4:
        return "inputs that are not 4-D (BNSD)"
    return None


def resolve_sdpa_as_on_npu(gm: fx.GraphModule) -> list[str]:
    """Rewrite ``gm``'s SDPA calls as on an NPU machine; one note per kind of choice made.
    The SDPA call inside ``F.multi_head_attention_forward`` (``nn.MultiheadAttention``,
    which Dynamo keeps as one call) is made when aot_autograd traces it: its note joins the
    returned list then."""
    fused_available = _fused_op() is not None
    made: Counter[str] = Counter()
    notes: list[str] = []
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        if node.target is MULTI_HEAD_ATTENTION:
            node.target = _multi_head_attention_as_on_npu(node.name, notes, fused_available)
            made["inside"] += 1
        elif node.target in SDPA_TARGETS:
            why = _choice(node, fused_available)
            node.target = sdpa_as_math if why else sdpa_as_fused
            made[MATH.format(why=why) if why else FUSED] += 1
    if made:
        gm.recompile()
    made.pop("inside", None)
    notes += [f"as on an NPU machine: F.scaled_dot_product_attention ({count} call(s)) -> {choice}" for choice, count in made.items()]
    return notes


MULTI_HEAD_ATTENTION = torch.nn.functional.multi_head_attention_forward


def _multi_head_attention_as_on_npu(name: str, notes: list[str], fused_available: bool) -> Any:
    """``F.multi_head_attention_forward`` with its SDPA call made as on an NPU machine (it
    calls ``F.scaled_dot_product_attention`` by its module's name); the choice is noted
    once per call node."""

    def sdpa(
        query: Any, key: Any, value: Any, attn_mask: Any = None, dropout_p: float = 0.0, is_causal: bool = False, **kwargs: Any
    ) -> Any:
        why = _why_math(query, attn_mask, dropout_p, fused_available)
        note = f"as on an NPU machine: F.scaled_dot_product_attention in F.multi_head_attention_forward ({name}) -> {MATH.format(why=why) if why else FUSED}"
        if note not in notes:  # aot_autograd traces the graph more than once
            notes.append(note)
        return (sdpa_as_math if why else sdpa_as_fused)(query, key, value, attn_mask, dropout_p, is_causal, **kwargs)

    def multi_head_attention_forward(*args: Any, **kwargs: Any) -> Any:
        functional = torch.nn.functional
        real = functional.scaled_dot_product_attention
        functional.scaled_dot_product_attention = sdpa  # type: ignore[assignment]
        try:
            return MULTI_HEAD_ATTENTION(*args, **kwargs)
        finally:
            functional.scaled_dot_product_attention = real

    return multi_head_attention_forward


LSTM_NOTE = (
    "as on an NPU machine: torch.lstm decomposed without oneDNN's mkldnn_rnn_layer, which torch's decomposition picks only for CPU tensors"
)


@contextlib.contextmanager
def decomposed_as_on_npu(gm: fx.GraphModule) -> Iterator[list[str]]:
    """For the block (aot_autograd tracing ``gm``), torch's decompositions choose as for
    NPU tensors: ``torch.lstm``'s takes oneDNN's CPU-only ``mkldnn_rnn_layer`` for CPU
    tensors while oneDNN is on, so it is off. Yields the note to give (none when the
    graph has no LSTM)."""
    lstm = any(node.op == "call_function" and node.target is torch.lstm for node in gm.graph.nodes)
    enabled = torch._C._get_mkldnn_enabled()
    torch._C._set_mkldnn_enabled(False)
    try:
        yield [LSTM_NOTE] if lstm else []
    finally:
        torch._C._set_mkldnn_enabled(enabled)


class SdpaAsOnNpu(TorchFunctionMode):
    """Eager SDPA calls made as the compiled graph makes them (and as eager makes them on an
    NPU machine, where torch_npu's kernel is the fused one): ``fused`` counts the calls that
    took ``npu_fusion_attention``."""

    def __init__(self) -> None:
        super().__init__()
        self.fused = 0

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        if func not in SDPA_TARGETS:
            return func(*args, **kwargs)
        mask = args[3] if len(args) > 3 else kwargs.get("attn_mask")
        dropout = args[4] if len(args) > 4 else kwargs.get("dropout_p", 0.0)
        if _why_math(args[0] if args else None, mask, dropout, _fused_op() is not None):
            return func(*args, **kwargs)
        self.fused += 1
        return sdpa_as_fused(*args, **kwargs)
