"""Every model of examples/models/ traced as ``fxlab trace`` traces it, with fxlab's
built-in conversion and with TorchAir's own (``--converter torchair --verify``): the
status, eager against compiled, and the Ascend IR run on CPU against compiled.

Skipped only when the ``models`` extra (transformers) is not installed, or, for the
TorchAir side (marked ``torchair`` through its fixture), when no TorchAir copy is found.
torch_npu's operators, which the Ascend examples call, come from the files fxlab ships.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any
from collections.abc import Iterator

import pytest

from fxlab.capture.request import TraceRequest
from fxlab.session import CaptureSession
from tests.conftest import torchair_session

NO_TORCHAIR = object()  # the built-in conversion (None is a torchair_path: the importable TorchAir)

pytest.importorskip("transformers", reason="the models extra is not installed (pip install fxlab[models])")

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"
# (file, entry): each traces ok both ways.
OK = [("gpt2", None), ("bert", None), ("qwen2", None), ("mixtral_moe", None), ("t5", None), ("vit", None), ("resnet18", None), ("ascend_decoder_layer", None), ("ascend_paged_attention", None),
      ("llama_static_cache", None), ("llama_static_cache", "decode_step"), ("llama_dynamic_prefill", None)]
STOCK_STATIC_CACHE = ("llama_static_cache", "decode_step_stock")


def _capture_of(name: str, entry: str | None, torchair_path: Any = NO_TORCHAIR) -> Any:
    """The capture of a model as ``fxlab trace --verify`` makes it; with ``torchair_path``,
    as ``--converter torchair`` (TorchAir's own conversion, from that copy) makes it."""
    converter = {} if torchair_path is NO_TORCHAIR else {"converter": "torchair", "torchair_path": torchair_path}
    request = TraceRequest(MODELS / f"{name}.py", entry=entry, stages=("dynamo", "aten", "functional", "ascend_ir"), verify=True, **converter)
    with CaptureSession(request) as session:
        # `fxlab trace` runs in a fresh process, where transformers imports torch_npu (fxlab's
        # stand-in, which defines torch_npu's operators) when it first loads. It asks only
        # once per process, so every capture after the first imports it here as that did.
        import torch_npu  # noqa: F401

        return session.capture()


def _capture(name: str, entry: str | None, torchair_path: Any = NO_TORCHAIR) -> Any:
    return _capture_of(name, entry, torchair_path).trace


@pytest.fixture
def torchair(torchair_path: Any) -> Iterator[Any]:
    """TorchAir's session for one test (a capture with ``--converter torchair`` opens its own)."""
    yield from torchair_session(torchair_path)


def _ok(trace: Any) -> None:
    assert trace.status == "ok", (trace.check, trace.ir_check, [g.error for g in trace.graphs])
    assert trace.check.ok and not trace.check.skipped and trace.check.compared > 0
    assert trace.ir_check.ok and not trace.ir_check.skipped and trace.ir_check.compared > 0
    assert len(trace.graphs) == 1 and not any(op.type == "FxlabUnsupported" for op in trace.graphs[0].ir.ops)


IDS = [n if e is None else f"{n}-{e}" for n, e in OK]


@pytest.mark.parametrize("name,entry", OK, ids=IDS)
def test_traces_ok_with_the_builtin_conversion(name: str, entry: str | None) -> None:
    _ok(_capture(name, entry))


@pytest.mark.parametrize("name,entry", OK, ids=IDS)
def test_traces_ok_with_torchairs_conversion(torchair_path: Any, name: str, entry: str | None) -> None:
    _ok(_capture(name, entry, torchair_path))


def test_vits_exact_gelu_matches_with_the_note_of_ges_tanh_form() -> None:
    trace = _capture("vit", None)
    # GE's Gelu is the tanh form, ViT's GELU the exact one: the IR as GE computes it
    # differs by this much, and matches once Gelu runs the exact form.
    assert trace.status == "ok" and trace.ir_check.ok
    (note,) = trace.ir_check.approximations
    assert note.startswith("graph 0: GE's Gelu (2 ops) is the tanh approximation of gelu(approximate='none'), the erf form")
    ge_diff = float(note.split("max |diff| ")[1].split(",")[0])
    assert 1e-6 < ge_diff < 1e-4 and trace.ir_check.max_abs_diff < 1e-6


def test_attention_is_captured_as_on_an_npu_machine() -> None:
    trace = _capture("gpt2", None)
    assert trace.graphs[0].stages["functional"].targets().count("npu.npu_fusion_attention.default") == 2
    assert [op.type for op in trace.graphs[0].ir.ops].count("FlashAttentionScore") == 2
    assert any("F.scaled_dot_product_attention (2 call(s)) -> torch_npu.npu_fusion_attention" in n for n in trace.notes)


@pytest.mark.parametrize("entry", [None, "decode_step"])
def test_the_static_cache_writes_as_on_ascend_through_scatter_nd_update(entry: str | None) -> None:
    trace = _capture("llama_static_cache", entry)
    graph = trace.graphs[0]
    assert graph.stages["aten"].targets().count("npu.npu_scatter_nd_update_.default") == 4  # keys and values of 2 layers
    assert graph.stages["functional"].targets().count("npu.npu_scatter_nd_update.default") == 4
    assert len([m for m in graph.mutated_inputs if "cache" in m]) == 6  # k, v and the filled length per layer
    assert [op.type for op in graph.ir.ops].count("ScatterNdUpdate") == 4
    assert trace.ir_check.ok and trace.ir_check.compared > 0


def test_transformers_static_cache_writes_with_index_copy_which_torchair_does_not_convert() -> None:
    captured = _capture_of(*STOCK_STATIC_CACHE)
    trace = captured.trace
    assert trace.status == "partial"
    assert trace.check.ok and trace.check.compared > 0
    graph = trace.graphs[0]
    assert graph.stages["aten"].targets().count("aten.index_copy_.default") == 4
    assert graph.stages["functional"].targets().count("aten.index_copy.default") == 4
    unsupported = [op for op in graph.ir.ops if op.type == "FxlabUnsupported"]
    assert {op.attr_value("_fxlab_unsupported") for op in unsupported} == {"aten.index_copy.default"}
    (record,) = {n.message for n in captured.graphs[0].conversion.nodes if n.target == "aten.index_copy.default"}
    assert record.startswith("TorchAir refuses aten.index_copy.default: its converter only raises NotImplementedError")
    assert "Fix: on Ascend, write the KV cache with torch_npu.scatter_update_" in record


def test_transformers_static_cache_is_refused_by_torchair_itself(torchair_path: Any) -> None:
    captured = _capture_of(*STOCK_STATIC_CACHE, torchair_path)
    trace = captured.trace
    assert trace.status == "partial" and trace.check.ok
    assert trace.ir_check.verdict == "not run: graph 0: not every op converted (aten.index_copy.default)"
    records = [n.message for n in captured.graphs[0].conversion.nodes if n.target == "aten.index_copy.default"]
    assert len(records) == 4
    for record in records:
        assert "NotImplementedError: torch.ops.aten.index_copy.default ge_converter is not implemented!" in record
        assert record.endswith(". Fix: on Ascend, write the KV cache with torch_npu.scatter_update_(cache, positions, new, axis), "
                               "torch_npu.npu_scatter_nd_update_(cache, indices, new) or a slice assignment (cache[:, :, start:end] = new), which TorchAir converts")


def test_the_dynamic_llama_prefill_converts_its_causal_mask_from_the_symbolic_length() -> None:
    trace = _capture("llama_dynamic_prefill", None)
    (graph,) = trace.graphs
    data = [op for op in graph.ir.ops if op.type == "Data"]
    assert data[0].output_desc[0].shape == (1, -1)  # the input ids: their length is a symbol
    masks = [op for op in graph.ir.ops if op.fx_node and op.fx_node.startswith("ones")]
    assert [op.type for op in masks] == ["Pack", "Const", "Fill"] * 2  # the causal mask of each layer
    second = trace.calls[1]
    assert second.origin == "derived (+1): dim 1 of input_ids: 8 -> 9" and second.graphs == [0] and second.compiled == []
    assert second.ir_check.ok and second.ir_check.compared > 0


# Models whose graph with dynamic shapes still differs from TorchAir's, with why.
DYNAMIC_DIFFERENT = {
    "t5": "TorchAir's view optimisation compares a view's symbolic sizes with static ones with ==, which fixes the "
    "decoder length (4) to its traced value where it meets the 4 heads; its later views convert as static, fxlab's stay "
    "symbolic (docs/torchair-differences.md)",
}
MODEL_FILES = sorted({name for name, _ in OK})


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=[pytest.mark.xfail(strict=True, reason=DYNAMIC_DIFFERENT[n])] if n in DYNAMIC_DIFFERENT else []) for n in MODEL_FILES]
)
def test_compiled_with_dynamic_shapes_every_model_gives_torchairs_graph(torchair: Any, name: str) -> None:
    from tests.compat.test_bridge_examples import compare_example, listed_differences

    rows = listed_differences()
    comparisons = compare_example(torchair, f"models/{name}", dynamic=True)
    unexplained = [f"graph {c.graph}: {i.kind} {i.op_type} [{i.detail}] at {i.where}" for c in comparisons for i in c.issues if not any(r.explains(i) for r in rows)]
    assert comparisons and not unexplained, "\n".join(unexplained[:20])


def _op_types(trace: Any) -> list[str]:
    return [op.type for op in trace.graphs[0].ir.ops]


def test_paged_attention_writes_the_cache_through_its_functional_form_and_reads_it_by_block_table(torchair_path: Any) -> None:
    builtin = _capture("ascend_paged_attention", None)
    functional = builtin.graphs[0].stages["functional"].targets()
    assert functional.count("npu.npu_scatter_pa_kv_cache_functional.default") == 1
    assert "npu.npu_scatter_pa_kv_cache.default" not in functional
    ops = {op.type: op for op in builtin.graphs[0].ir.ops}
    attention = ops["FusedInferAttentionScore"]
    names = [d.name for d, ref in zip(attention.input_desc, attention.inputs) if ref]
    assert {"query", "key0", "value0", "actual_seq_lengths_kv", "block_table"} <= set(names)
    assert attention.attr_value("block_size") == 4 and attention.attr_value("input_layout") == "BSH"
    lengths = next(o for o in builtin.graphs[0].ir.ops if f"{o.name}:0" in attention.inputs and o.type == "Const" and o.attr_value("_readable_value") == "[6, 10]")
    assert lengths.output_desc[0].dtype.name == "DT_INT64"
    assert ops["ScatterPaKvCache"].attr_value("cache_mode") is None  # Norm, the prototype's default: left out
    theirs = _capture("ascend_paged_attention", None, torchair_path)
    assert _op_types(builtin) == _op_types(theirs)


# Ascend-written layers: the built-in conversion builds TorchAir's GE op types, op for op.
ASCEND_LAYERS = {
    "ascend_moe_layer": [
        "MoeGatingTopKSoftmax", "MoeInitRouting", "MoeComputeExpertTokens", "GroupedMatmul", "SwiGlu", "GroupedMatmul", "MoeFinalizeRoutingV2",
    ],
    "ascend_w8a8_linear": ["DynamicQuant", "QuantBatchMatmulV3"],
}
_HELPERS = {"Data", "NetOutput", "Const", "Cast", "Fill", "Transpose", "MatMul", "Add"}


@pytest.mark.parametrize("name", sorted(ASCEND_LAYERS))
def test_ascend_layer_traces_ok_with_the_builtin_conversion(name: str) -> None:
    trace = _capture(name, None)
    _ok(trace)
    assert [op.type for op in trace.graphs[0].ir.ops if op.type not in _HELPERS] == ASCEND_LAYERS[name]


@pytest.mark.parametrize("name", sorted(ASCEND_LAYERS))
def test_ascend_layer_gets_torchairs_own_op_types(torchair_path: Any, name: str) -> None:
    builtin, theirs = _capture(name, None), _capture(name, None, torchair_path)
    _ok(theirs)
    assert _op_types(builtin) == _op_types(theirs)


def _grouped_mm_fallback_reason() -> str:
    from transformers.integrations import moe

    line = moe._grouped_mm_fallback.__code__.co_firstlineno
    return (
        "TorchAir has no converter for transformers.grouped_mm_fallback.default: it is a custom op defined by an installed "
        f"library (transformers/integrations/moe.py:{line}), not by the user's code, and no Ascend C prototype of it is "
        "known: TorchAir's auto converter would look for an Ascend IR op GroupedMmFallback registered in CANN, and a "
        "library's Python op has none, so graph mode fails on it on the NPU machine; there is no GE op to convert it to. "
        'Fix: run the experts as batched matmuls (config._experts_implementation = "batched_mm", or '
        'experts_implementation="batched_mm" in from_pretrained), which TorchAir converts'
    )


# transformers' DeepSeek-V3 with its defaults: the experts run grouped_mm, which without the
# fused kernel counts tokens with histc, calls transformers' own grouped_mm_fallback op and
# restores the order with index_put: three ops graph mode cannot take on an NPU.
DEFAULT_GAPS = ["aten.histc.default", "aten.index_put.default", "transformers.grouped_mm_fallback.default"]


@pytest.fixture(scope="module")
def deepseek_v3_defaults() -> Any:
    return _capture_of("deepseek_v3", None)


def test_deepseek_v3_with_its_defaults_is_partial_on_transformers_grouped_mm_fallback(deepseek_v3_defaults: Any) -> None:
    trace = deepseek_v3_defaults.trace
    assert trace.status == "partial" and trace.check.ok and trace.check.compared > 0
    assert trace.ir_check.verdict == f"not run: graph 0: not every op converted ({', '.join(DEFAULT_GAPS)})"
    graph = trace.graphs[0]
    assert sorted(entry["op"] for entry in graph.conversion.not_converted) == DEFAULT_GAPS
    fallback = [n for n in deepseek_v3_defaults.graphs[0].conversion.nodes if n.target == "transformers.grouped_mm_fallback.default"]
    assert [n.status.value for n in fallback] == ["refused", "refused"]  # the up and down projections
    assert {n.message for n in fallback} == {_grouped_mm_fallback_reason()}
    assert graph.conversion.auto_converted == [] and "GroupedMmFallback" not in _op_types(trace)


def test_deepseek_v3_with_its_defaults_has_only_ge_op_types_torchair_builds(deepseek_v3_defaults: Any, torchair_path: Any) -> None:
    captured = _capture_of("deepseek_v3", None, torchair_path)
    theirs = captured.trace
    assert theirs.status == "partial"
    assert set(_op_types(deepseek_v3_defaults.trace)) == set(_op_types(theirs))
    assert sorted({n.target for n in captured.graphs[0].conversion.nodes if n.status.value in ("unsupported", "raised")}) == DEFAULT_GAPS
    (record, _) = [n for n in captured.graphs[0].conversion.nodes if n.target == "transformers.grouped_mm_fallback.default"]
    assert record.message.endswith("No AscendIR GroupedMmFallback was found to be registered.")


def test_deepseek_v3_with_batched_mm_experts_traces_ok_with_the_same_ge_ops_both_ways(torchair_path: Any) -> None:
    builtin = _capture("deepseek_v3", "batched_mm")
    theirs = _capture("deepseek_v3", "batched_mm", torchair_path)
    _ok(builtin)
    _ok(theirs)
    assert _op_types(builtin) == _op_types(theirs)
    functional = builtin.graphs[0].stages["functional"].targets()
    assert "transformers.grouped_mm_fallback.default" not in functional and "aten.histc.default" not in functional
