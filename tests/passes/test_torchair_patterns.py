"""TorchAir's pattern fusion in the ``pre_ge`` stage: which torch_npu combinations become
one fused operator, which do not, and that TorchAir's own pass fuses the same ones."""
from __future__ import annotations

import pytest
import torch

from tests.functional_graphs import functional_graph
from fxlab.passes.torchair_patterns import fuse_torchair_patterns
from fxlab.passes.pre_ge import pre_ge_graph
from tests.passes.planned import planned_passes
from fxlab.passes.torchair_options import TorchAirOptions
from tests.conftest import torchair_session
from tests.passes.converters.npu_fixtures import npu_ops  # noqa: F401 - the fixture

pytestmark = pytest.mark.filterwarnings("ignore:Failed to import torchair")
HALF = dict(dtype=torch.float16)


def norm(x1, x2, gamma, *eps):
    return torch.ops.npu.npu_add_rms_norm.default(x1, x2, gamma, *eps)


def cast_model(x1, x2, gamma):
    y, _, total = norm(x1, x2, gamma)
    return y, total, y.float()


def cast_view_model(x1, x2, gamma):
    y, _, total = norm(x1, x2, gamma, 1e-5)
    return y, total, y.view(-1, y.size(-1)).float()


def cast_wrong_view_model(x1, x2, gamma):
    y, _, total = norm(x1, x2, gamma)
    return y, total, y.view(-1, 2 * y.size(-1)).float()


def cast_only_model(x1, x2, gamma):
    y, _, total = norm(x1, x2, gamma)  # y read by the cast alone: it is a pattern output, so fused
    return total, y.float()


def quant_model(x1, x2, gamma, smooth):
    y, _, total = norm(x1, x2, gamma)
    q, scale = torch.ops.npu.npu_dynamic_quant.default(y, smooth_scales=smooth)
    return q, total, scale


def quant_no_total_model(x1, x2, gamma, smooth):
    y, _, _ = norm(x1, x2, gamma, 1e-5)
    return torch.ops.npu.npu_dynamic_quant.default(y, smooth_scales=smooth)


def quant_unsmoothed_model(x1, x2, gamma, smooth):
    y, _, total = norm(x1, x2, gamma)
    q, scale = torch.ops.npu.npu_dynamic_quant.default(y)
    return q, total, scale


def quant_y_kept_model(x1, x2, gamma, smooth):
    y, _, total = norm(x1, x2, gamma)  # y read by another op too: not fused
    q, scale = torch.ops.npu.npu_dynamic_quant.default(y, smooth_scales=smooth)
    return q, total, scale, y * 2


def flat_quant_model(x1, x2, gamma, smooth):
    y, _, total = norm(x1, x2, gamma)
    q, scale = torch.ops.npu.npu_dynamic_quant.default(y.flatten(0, 1))
    return q, scale.view(-1, 1), total


def half_inputs(count: int) -> tuple[torch.Tensor, ...]:
    return (torch.randn(2, 4, 8, **HALF), torch.randn(2, 4, 8, **HALF), *(torch.randn(8, **HALF) for _ in range(count - 2)))


MODELS = {
    "cast": (cast_model, 3),
    "cast_view": (cast_view_model, 3),
    "cast_wrong_view": (cast_wrong_view_model, 3),
    "cast_only": (cast_only_model, 3),
    "quant": (quant_model, 4),
    "quant_no_total": (quant_no_total_model, 4),
    "quant_unsmoothed": (quant_unsmoothed_model, 4),
    "quant_y_kept": (quant_y_kept_model, 4),
    "flat_quant": (flat_quant_model, 4),
}


def npu_targets(gm) -> list[str]:
    return [str(n.target).removeprefix("npu.").removesuffix(".default") for n in gm.graph.nodes if str(n.target).startswith("npu.")]


def fused(name: str):
    fn, count = MODELS[name]
    gm = functional_graph(fn, *half_inputs(count))
    changed = fuse_torchair_patterns(gm)
    return changed, gm


def test_runs_in_the_pattern_pass_after_optimize_sym_input_and_before_view_to_reshape() -> None:
    names = [p.name for p in planned_passes(TorchAirOptions())]
    assert names.index("optimize_sym_input") + 1 == names.index("apply_pattern_passes") == names.index("view_to_reshape") - 1
    assert "apply_pattern_passes" not in [p.name for p in planned_passes(TorchAirOptions(pattern_fusion_pass=False))]


def test_add_rms_norm_then_float_cast_becomes_add_rms_norm_cast(npu_ops) -> None:
    changed, gm = fused("cast")
    assert changed and npu_targets(gm) == ["npu_add_rms_norm_cast"]
    (fused_op,) = [n for n in gm.graph.nodes if str(n.target) == "npu.npu_add_rms_norm_cast.default"]
    # y, the sum and the cast come from the fused op's outputs 1, 3 and 0
    outputs = gm.graph.output_node().args[0]
    assert [(o.args[0], o.args[1]) for o in outputs] == [(fused_op, 1), (fused_op, 3), (fused_op, 0)]
    x1, x2, gamma = half_inputs(3)
    y, total, cast = gm(x1, x2, gamma)
    summed = (x1 + x2).float()  # the sum, as the op returns it
    normed = summed * torch.rsqrt(summed.pow(2).mean(-1, keepdim=True) + 1e-6) * gamma.float()
    assert cast.dtype == torch.float32 and torch.allclose(cast, normed, atol=1e-5)  # the float32 result itself
    assert y.dtype == torch.float16 and torch.equal(y, normed.half()) and torch.equal(total, x1 + x2)


def test_a_cast_of_y_alone_fuses_too(npu_ops) -> None:
    changed, gm = fused("cast_only")
    assert changed and npu_targets(gm) == ["npu_add_rms_norm_cast"]


def test_cast_through_a_view_keeping_the_last_dim_fuses_with_its_epsilon(npu_ops) -> None:
    changed, gm = fused("cast_view")
    (fused_op,) = [n for n in gm.graph.nodes if str(n.target) == "npu.npu_add_rms_norm_cast.default"]
    assert changed and fused_op.args[3] == 1e-5
    assert [n.target for n in gm.graph.nodes if n.op == "call_function" and "view" in str(n.target)] == [torch.ops.aten.view.default]


def test_no_fusion_where_torchairs_patterns_do_not_match(npu_ops) -> None:
    # the view's last dim is not x1's; y quantised and read by another op
    for name in ("cast_wrong_view", "quant_y_kept"):
        changed, gm = fused(name)
        assert not changed and "npu_add_rms_norm" in npu_targets(gm), name


def test_add_rms_norm_then_dynamic_quant_becomes_the_fused_quant(npu_ops) -> None:
    for name in ("quant", "quant_unsmoothed", "quant_no_total"):
        changed, gm = fused(name)
        assert changed and npu_targets(gm) == ["npu_add_rms_norm_dynamic_quant"], name
        (op,) = [n for n in gm.graph.nodes if n.op == "call_function" and str(n.target).startswith("npu.")]
        smooth = op.kwargs.get("smooth_scale1")
        assert op.kwargs["output_mask"] == [True, False] and (smooth is None) == (name == "quant_unsmoothed")
    assert op.kwargs["epsilon"] == 1e-5


def test_flattened_dynamic_quant_fuses_and_keeps_both_views(npu_ops) -> None:
    changed, gm = fused("flat_quant")
    assert changed and npu_targets(gm) == ["npu_add_rms_norm_dynamic_quant"]
    views = [n.args[1] for n in gm.graph.nodes if n.target is torch.ops.aten.view.default]
    assert views == [[8, 8], [-1, 1]]


def test_a_graph_without_torch_npu_operators_is_left_alone() -> None:
    gm = functional_graph(lambda x: (x.float() + 1,), torch.randn(2, 3, **HALF))
    assert not fuse_torchair_patterns(gm)


# -- the same matches as TorchAir's own pass --------------------------------------------------
@pytest.fixture(scope="module")
def torchair(torchair_path):
    yield from torchair_session(torchair_path)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_fuses_where_torchair_fuses(torchair, name) -> None:
    from fxlab.compat.bridge import run_torchair_conversion

    fn, count = MODELS[name]
    functional = functional_graph(fn, *half_inputs(count))
    ours = pre_ge_graph(functional).gm
    theirs = run_torchair_conversion(functional, "graph", torchair).fx_graph
    assert npu_targets(ours) == npu_targets(theirs)
    # the fused nodes carry TorchAir's names (the same matcher makes them)
    assert [n.name for n in ours.graph.nodes if str(n.target).startswith("npu.")] == [
        n.name for n in theirs.graph.nodes if str(n.target).startswith("npu.")
    ]
