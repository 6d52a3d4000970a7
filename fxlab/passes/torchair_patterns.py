"""TorchAir's pattern fusion before conversion (``experimental_config.pattern_fusion_pass``,
on by default): combinations of torch_npu operators rewritten into one fused operator, so
the GE graph has the fused op.

The combinations TorchAir fuses in its GE graph mode (``max-autotune``):

- ``npu_add_rms_norm`` whose normalised output ``y`` is also cast to float32
  (``aten._to_copy(dtype=float32)`` or ``npu._npu_dtype_cast``), directly or through
  ``y.view(-1, h)`` with ``h`` its last dimension, → ``npu_add_rms_norm_cast`` (the cast
  output comes from the fused op, ``y`` and the sum stay graph values);
- ``npu_add_rms_norm`` whose ``y`` is quantised by ``npu_dynamic_quant(y,
  smooth_scales=s)`` → ``npu_add_rms_norm_dynamic_quant(..., smooth_scale1=s,
  output_mask=[True, False])``, with or without the sum used;
- ``npu_add_rms_norm`` whose ``y``, its first two dimensions merged by a view, is
  quantised by ``npu_dynamic_quant`` and the scale viewed as ``(-1, 1)`` →
  ``npu_add_rms_norm_dynamic_quant`` then the same views of its outputs.

Matching uses torch's pattern matcher (the engine TorchAir uses), so a pattern matches
exactly where TorchAir's does: the same operator forms, argument counts and user counts.
Without torch_npu's operators defined there is nothing to match. TorchAir's
``reduce-overhead`` mode adds patterns of its own (``npu_add_rms_norm_quant``, batch
matmul + transpose) that this GE-graph stage does not run.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

import torch
import torch.fx as fx
from torch._subclasses.fake_tensor import FakeTensorMode

NORM = "npu_add_rms_norm"
PATTERN_OPS = (NORM, "npu_add_rms_norm_cast", "npu_add_rms_norm_dynamic_quant", "npu_dynamic_quant", "_npu_dtype_cast")


def fuse_torchair_patterns(gm: fx.GraphModule) -> bool:
    """Rewrite the fusible torch_npu combinations of ``gm`` in place; True if any was."""
    ops = _npu_ops()
    if ops is None or not any(n.target is ops[NORM] for n in gm.graph.nodes):
        return False
    matcher = _matcher(tuple(ops[name] for name in PATTERN_OPS))
    count = matcher.apply(gm.graph)
    if count:
        gm.graph.lint()
        gm.recompile()
    return bool(count)


def _npu_ops() -> dict[str, Any] | None:
    """The ``default`` overloads of the operators the patterns name (None if one is missing)."""
    namespace = torch.ops.npu
    ops = {}
    for name in PATTERN_OPS:
        try:
            ops[name] = getattr(namespace, name).default
        except (AttributeError, RuntimeError):
            return None
    return ops


# The operator objects change whenever torch_npu's operators are defined anew (each fxlab
# session defines them), so the matcher is built per set of operator objects.
@functools.lru_cache(maxsize=4)
def _matcher(ops: tuple[Any, ...]) -> Any:
    from torch._inductor.pattern_matcher import PatternMatcherPass  # lazy: Inductor takes over a second to import

    named = dict(zip(PATTERN_OPS, ops))
    matcher = PatternMatcherPass(pass_name="fxlab_torchair_pattern_fusion")
    _register_dynamic_quant_patterns(matcher, named)
    _register_flattened_dynamic_quant_patterns(matcher, named)
    _register_cast_patterns(matcher, named)
    return matcher


def _examples(count: int) -> tuple[torch.Tensor, ...]:
    """Inputs for the patterns' first trace (TorchAir's: half tensors, x1 and x2 3-D)."""
    with FakeTensorMode():
        shapes = [(1, 1, 2), (1, 1, 2)] + [(2,)] * (count - 2)
        return tuple(torch.empty(shape, dtype=torch.float16) for shape in shapes)


def _norm_call(norm: Any, with_epsilon: bool, users: int) -> Any:
    from torch._inductor.pattern_matcher import CallFunction, KeywordArg  # lazy: Inductor takes over a second to import

    args = [KeywordArg("x1"), KeywordArg("x2"), KeywordArg("gamma")] + ([KeywordArg("epsilon")] if with_epsilon else [])
    return CallFunction(norm, *args, _users=users)


def _register(matcher: Any, search: Callable[..., Any], replace: Callable[..., Any], inputs: int, **options: Any) -> None:
    from torch._inductor.pattern_matcher import fwd_only, register_replacement  # lazy: Inductor takes over a second to import

    register_replacement(search, replace, _examples(inputs), fwd_only, matcher, **options)


# -- npu_add_rms_norm + cast to float32 -------------------------------------------------------
def _register_cast_patterns(matcher: Any, ops: dict[str, Any]) -> None:
    for with_epsilon in (False, True):
        for through_view in (True, False):
            for aten_cast in (True, False):
                search = _cast_search_pattern(ops, with_epsilon, through_view, aten_cast)
                replace = _cast_replacement(ops["npu_add_rms_norm_cast"], with_epsilon, through_view)
                check = functools.partial(_view_keeps_last_dim, ops[NORM]) if through_view else _always
                options = {"scalar_workaround": {"epsilon": 2e-6}} if with_epsilon else {}
                _register(matcher, _no_search(with_epsilon), replace, 3, search_fn_pattern=search, extra_check=check, **options)


def _cast_search_pattern(ops: dict[str, Any], with_epsilon: bool, through_view: bool, aten_cast: bool) -> Any:
    from torch._inductor.pattern_matcher import CallFunction, Ignored, MultiOutputPattern  # lazy: Inductor takes over a second to import

    norm = _norm_call(ops[NORM], with_epsilon, users=2)
    y = CallFunction(operator.getitem, norm, 0, _users=2)
    total = CallFunction(operator.getitem, norm, 2)
    source = CallFunction(torch.ops.aten.view.default, y, [-1, Ignored()]) if through_view else y
    if aten_cast:
        cast = CallFunction(torch.ops.aten._to_copy.default, source, dtype=torch.float32)
    else:
        cast = CallFunction(ops["_npu_dtype_cast"], source, torch.float32)
    return MultiOutputPattern([y, total, cast])


def _no_search(with_epsilon: bool) -> Callable[..., Any]:
    """The search function stands only for the argument names (the pattern is given)."""

    def search(x1: Any, x2: Any, gamma: Any) -> None:
        return None

    def search_with_epsilon(x1: Any, x2: Any, gamma: Any, epsilon: Any) -> None:
        return None

    return search_with_epsilon if with_epsilon else search


def _cast_replacement(fused: Any, with_epsilon: bool, through_view: bool) -> Callable[..., Any]:
    def outputs(y_cast: torch.Tensor, y: torch.Tensor, total: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return y, total, (y_cast.view(-1, y.size(-1)) if through_view else y_cast)

    def replace(x1: Any, x2: Any, gamma: Any) -> tuple[torch.Tensor, ...]:
        y_cast, y, _, total = fused(x1, x2, gamma)
        return outputs(y_cast, y, total)

    def replace_with_epsilon(x1: Any, x2: Any, gamma: Any, epsilon: Any) -> tuple[torch.Tensor, ...]:
        y_cast, y, _, total = fused(x1, x2, gamma, epsilon)
        return outputs(y_cast, y, total)

    return replace_with_epsilon if with_epsilon else replace


def _view_keeps_last_dim(norm_op: Any, match: Any) -> bool:
    """``y.view(-1, h)`` fuses only when ``h`` is the last dimension of ``x1``."""
    norm = next((n for n in match.nodes if n.target is norm_op), None)
    view = next((n for n in match.nodes if n.target is torch.ops.aten.view.default), None)
    if norm is None or view is None or not isinstance(view.args[1], (list, tuple)):
        return False
    x1 = norm.args[0].meta.get("val") if isinstance(norm.args[0], fx.Node) else None
    if x1 is None or x1.dim() < 1:
        return False
    wanted = view.args[1][1]
    wanted = wanted.meta.get("val") if isinstance(wanted, fx.Node) else wanted
    return bool(wanted) and str(wanted) == str(x1.shape[-1])


def _always(match: Any) -> bool:
    return True


# -- npu_add_rms_norm + npu_dynamic_quant -----------------------------------------------------
def _register_dynamic_quant_patterns(matcher: Any, ops: dict[str, Any]) -> None:
    norm, quant, fused = ops[NORM], ops["npu_dynamic_quant"], ops["npu_add_rms_norm_dynamic_quant"]

    def fused_outputs(x1: Any, x2: Any, gamma: Any, smooth: Any, epsilon: Any) -> tuple[Any, Any, Any]:
        extra = {} if epsilon is None else {"epsilon": epsilon}
        q, _, total, scale, _ = fused(x1, x2, gamma, smooth_scale1=smooth, output_mask=[True, False], **extra)
        return q, total, scale

    def search(x1: Any, x2: Any, gamma: Any, smooth_scales: Any) -> tuple[Any, ...]:
        y, _, total = norm(x1, x2, gamma)
        q, scale = quant(y, smooth_scales=smooth_scales)
        return q, total, scale

    def search_with_epsilon(x1: Any, x2: Any, gamma: Any, smooth_scales: Any, epsilon: Any) -> tuple[Any, ...]:
        y, _, total = norm(x1, x2, gamma, epsilon)
        q, scale = quant(y, smooth_scales=smooth_scales)
        return q, total, scale

    def search_no_total(x1: Any, x2: Any, gamma: Any, smooth_scales: Any) -> tuple[Any, ...]:
        q, _, scale = search(x1, x2, gamma, smooth_scales)
        return q, scale

    def search_no_total_with_epsilon(x1: Any, x2: Any, gamma: Any, smooth_scales: Any, epsilon: Any) -> tuple[Any, ...]:
        q, _, scale = search_with_epsilon(x1, x2, gamma, smooth_scales, epsilon)
        return q, scale

    def replace(x1: Any, x2: Any, gamma: Any, smooth_scales: Any) -> tuple[Any, ...]:
        return fused_outputs(x1, x2, gamma, smooth_scales, None)

    def replace_with_epsilon(x1: Any, x2: Any, gamma: Any, smooth_scales: Any, epsilon: Any) -> tuple[Any, ...]:
        return fused_outputs(x1, x2, gamma, smooth_scales, epsilon)

    def replace_no_total(x1: Any, x2: Any, gamma: Any, smooth_scales: Any) -> tuple[Any, ...]:
        q, _, scale = fused_outputs(x1, x2, gamma, smooth_scales, None)
        return q, scale

    def replace_no_total_with_epsilon(x1: Any, x2: Any, gamma: Any, smooth_scales: Any, epsilon: Any) -> tuple[Any, ...]:
        q, _, scale = fused_outputs(x1, x2, gamma, smooth_scales, epsilon)
        return q, scale

    epsilon = {"scalar_workaround": {"epsilon": 2e-6}}
    _register(matcher, search, replace, 4)
    _register(matcher, search_with_epsilon, replace_with_epsilon, 4, **epsilon)
    _register(matcher, search_no_total, replace_no_total, 4)
    _register(matcher, search_no_total_with_epsilon, replace_no_total_with_epsilon, 4, **epsilon)


# -- npu_add_rms_norm, flattened, + npu_dynamic_quant ----------------------------------------
def _register_flattened_dynamic_quant_patterns(matcher: Any, ops: dict[str, Any]) -> None:
    from torch._inductor.pattern_matcher import CallFunction, Ignored, MultiOutputPattern  # lazy: Inductor takes over a second to import

    fused = ops["npu_add_rms_norm_dynamic_quant"]
    for with_epsilon in (False, True):
        norm = _norm_call(ops[NORM], with_epsilon, users=2)
        y = CallFunction(operator.getitem, norm, 0)
        total = CallFunction(operator.getitem, norm, 2)
        quant = CallFunction(ops["npu_dynamic_quant"], CallFunction(torch.ops.aten.view.default, y, Ignored()), _users=2)
        q = CallFunction(operator.getitem, quant, 0)
        scale = CallFunction(torch.ops.aten.view.default, CallFunction(operator.getitem, quant, 1), [-1, 1])
        pattern = MultiOutputPattern([q, scale, total])
        options = {"scalar_workaround": {"epsilon": 2e-6}} if with_epsilon else {}
        replace = _flattened_replacement(fused, with_epsilon)
        check = functools.partial(_view_merges_first_two, ops[NORM])
        _register(matcher, _no_search(with_epsilon), replace, 3, search_fn_pattern=pattern, extra_check=check, **options)


def _flattened_replacement(fused: Any, with_epsilon: bool) -> Callable[..., Any]:
    def outputs(x1: Any, x2: Any, gamma: Any, extra: dict[str, Any]) -> tuple[torch.Tensor, ...]:
        q, _, total, scale, _ = fused(x1, x2, gamma, output_mask=[True, False], **extra)
        return q.flatten(0, 1), scale.view(-1, 1), total

    def replace(x1: Any, x2: Any, gamma: Any) -> tuple[torch.Tensor, ...]:
        return outputs(x1, x2, gamma, {})

    def replace_with_epsilon(x1: Any, x2: Any, gamma: Any, epsilon: Any) -> tuple[torch.Tensor, ...]:
        return outputs(x1, x2, gamma, {"epsilon": epsilon})

    return replace_with_epsilon if with_epsilon else replace


def _view_merges_first_two(norm_op: Any, match: Any) -> bool:
    """The view of ``y`` is ``y.flatten(0, 1)``: one dimension fewer than ``x1``, and its
    first the product of ``y``'s first two (a symbolic one made by a ``mul``)."""
    norm = next((n for n in match.nodes if n.target is norm_op), None)
    y = next((n for n in match.nodes if n.target is operator.getitem and n.args == (norm, 0)), None)
    view = next((n for n in match.nodes if n.target is torch.ops.aten.view.default and y is not None and n.args[0] is y), None)
    if norm is None or y is None or view is None or not isinstance(view.args[1], (list, tuple)):
        return False
    x1 = norm.args[0].meta.get("val") if isinstance(norm.args[0], fx.Node) else None
    y_val, size = y.meta.get("val"), view.args[1]
    x1_dim = x1.dim() if x1 is not None else 0
    y_dim = y_val.dim() if y_val is not None else 0
    if x1_dim != y_dim or not size or len(size) != x1_dim - 1:
        return False
    if isinstance(size[0], fx.Node):
        return size[0].name.startswith("mul")
    return y_dim < 2 or size[0] == y_val.shape[0] * y_val.shape[1]
