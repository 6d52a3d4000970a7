"""Template replay in the conversion pass: the IR and the per-node records are exactly
those of converting every node, on every example, a multi-layer decoder, scopes, and the
keys' edge cases; converters that are not pure functions of the key are not replayed."""
from __future__ import annotations

import importlib.util
import json
import itertools
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.fx as fx

from fxlab import scope
from fxlab.capture.stages import functional_graph
from fxlab.ir import ge
from fxlab.ir.builder import current_builder
from fxlab.passes.convert_to_ascend_ir import AscendIrConverter, ConversionResult
from fxlab.passes.converters.registry import CONVERTERS, ORIGIN_FXLAB, Converter, ConverterRegistry, register_converter

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.py"))
aten = torch.ops.aten


def convert(gm: fx.GraphModule, replay: bool, registry: ConverterRegistry | None = None) -> tuple[ConversionResult, dict[str, Any], AscendIrConverter]:
    """One conversion, and each node's meta after it (the pass leaves meta as it was)."""
    from fxlab.passes import converters  # noqa: F401 - registers fxlab's converters

    before = {n.name: dict(n.meta) for n in gm.graph.nodes}
    converter = AscendIrConverter(gm, "graph", registry, replay=replay)
    result = converter.run()
    metas = {n.name: dict(n.meta) for n in gm.graph.nodes}
    assert metas == before  # the same keys and value objects
    return result, metas, converter


def assert_replay_changes_nothing(gm: fx.GraphModule, registry: ConverterRegistry | None = None) -> AscendIrConverter:
    """Convert with replay off, then on, and compare everything the pass produces."""
    plain, plain_metas, _ = convert(gm, replay=False, registry=registry)
    replayed, replayed_metas, converter = convert(gm, replay=True, registry=registry)
    # As text: NaN constants make equal JSON values compare unequal.
    assert json.dumps(replayed.graph.to_json()) == json.dumps(plain.graph.to_json())
    assert replayed.graph.ops == plain.graph.ops  # provenance and attr kinds too
    assert replayed.nodes == plain.nodes  # status, GE op names, message, source per node
    assert replayed_metas == plain_metas
    assert replayed.warnings == plain.warnings
    return converter


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_converts_the_same_with_replay(example: str) -> None:
    from fxlab.capture import capture_trace, load_model
    from fxlab.compat.layer import compat_layer

    with compat_layer():  # as `fxlab trace` runs them: torchair stand-ins, custom op converters
        trace = capture_trace(load_model(ROOT / "examples" / f"{example}.py"), stages=("functional",), verify=False)
        graphs = [g.modules["functional"] for g in trace.graphs]
        assert graphs, f"{example}: no functional graph"
        for gm in graphs:
            assert_replay_changes_nothing(gm)


def _decoder_graph(layers: int) -> fx.GraphModule:
    from fxlab.capture import LoadedModel, capture_trace

    spec = importlib.util.spec_from_file_location("llama_decoder_for_replay", ROOT / "examples" / "llama_decoder.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model, inputs = module.build(layers)
    loaded = LoadedModel(fn=model, args=inputs, path=ROOT / "examples" / "llama_decoder.py", entry=f"build({layers})")
    trace = capture_trace(loaded, stages=("functional",), verify=False)
    return trace.graphs[0].modules["functional"]


def test_multi_layer_decoder_replays_its_layers_and_converts_the_same() -> None:
    gm = _decoder_graph(4)
    converter = assert_replay_changes_nothing(gm)
    calls = sum(n.op == "call_function" for n in gm.graph.nodes)
    assert converter.replayed > calls // 2, "the repeated layers are replayed, not converted"


def test_identical_nodes_inside_and_outside_scopes_get_their_own_scope_attrs() -> None:
    def model(x, y):
        a = x * 0.5
        with scope.super_kernel("sk", "stream-fusion=1"):
            b = y * 0.5
            with scope.limit_core_num(4, 8):
                c = b * 0.5
            with scope.super_kernel(None):
                d = c * 0.5
        return d * 0.5 + a

    gm = functional_graph(model, torch.randn(3), torch.randn(3))
    converter = assert_replay_changes_nothing(gm)
    assert converter.replayed >= 3
    muls = converter.builder.graph.ops_of_type("Mul")
    scopes = [(op.attr_value("_super_kernel_scope"), op.attr_value("_op_aicore_num")) for op in muls]
    assert scopes == [(None, None), ("sk", None), ("sk", "4"), (None, None), (None, None)]


def test_keys_tell_apart_signed_zeros_bools_ints_floats_and_aliased_arguments() -> None:
    def model(x, y):
        outs = [x * 0.0, x * -0.0, x * 1, x * 1.0, x * True, x * x, x * y, y * x, y * y]
        outs += [x.sum(0, keepdim=True), x.sum(0, keepdim=False), x.sum(-2, keepdim=True)]
        return outs

    gm = functional_graph(model, torch.randn(2, 3), torch.randn(2, 3))
    converter = assert_replay_changes_nothing(gm)
    readable = [op.attr_value("_readable_value") for op in converter.builder.graph.ops_of_type("Const")]
    assert "0.0" in readable and "-0.0" in readable


def test_outputs_that_differ_only_in_strides_share_a_template() -> None:
    """The key holds the fake output's dtype and shape, not its strides: a transposed
    and a contiguous input of one GE desc make the same ops, so the second node is a
    replay (converters that read strides are not replayable)."""

    def model(x, y):
        return [x.t() * 2.0, y * 2.0]

    gm = functional_graph(model, torch.randn(3, 3), torch.randn(3, 3))
    muls = [n for n in gm.graph.nodes if n.target is aten.mul.Tensor]
    assert muls[0].meta["val"].shape == muls[1].meta["val"].shape
    assert muls[0].meta["val"].stride() != muls[1].meta["val"].stride()
    converter = assert_replay_changes_nothing(gm)
    assert converter.replayed == 1


def test_nan_arguments_convert_the_same() -> None:
    gm = functional_graph(lambda x: [x * float("nan"), x * float("nan"), x + 1.0], torch.randn(3))
    assert_replay_changes_nothing(gm)


_COUNTER = itertools.count()


def _impure_mul(self, other, *, meta_outputs=None):
    """mul.Tensor(Tensor self, Tensor other) -> Tensor (tags each op with a global count)"""
    other = other if isinstance(other, ge.Tensor) else ge.const(other, self.dtype)
    return ge.op1("Mul", {"x1": self, "x2": other}, {"_call": next(_COUNTER)})


def _registry_with_mul(fn: Any, origin: str, replayable: bool | None) -> ConverterRegistry:
    registry = ConverterRegistry()
    for converter in CONVERTERS:
        if converter.target is not aten.mul.Tensor:
            registry.register(Converter(converter.target, converter.fn, converter.origin, converter.samples, converter.where))
    register_converter(aten.mul.Tensor, origin=origin, registry=registry, replayable=replayable)(fn)
    return registry


def _repeated_muls(x):
    return [x * 2.0, x * 2.0, x * 2.0]


def _call_tags(converter: AscendIrConverter) -> list[int]:
    return [op.attr_value("_call") for op in converter.builder.graph.ops_of_type("Mul")]


@pytest.mark.parametrize(("origin", "replayable"), [(ORIGIN_FXLAB, False), ("user", None)])
def test_impure_converters_are_not_replayed(origin: str, replayable: bool | None) -> None:
    """A converter marked impure, or a plugin converter (purity unknown), runs per node."""
    gm = functional_graph(_repeated_muls, torch.randn(3))

    def impure(self, other, *, meta_outputs=None):
        return _impure_mul(self, other)

    registry = _registry_with_mul(impure, origin, replayable)
    _, _, converter = convert(gm, replay=True, registry=registry)
    tags = _call_tags(converter)
    assert len(tags) == 3 and len(set(tags)) == 3, "each node ran the converter"
    assert converter.replayed == 0


def test_an_impure_converter_marked_replayable_would_be_replayed() -> None:
    """The flag is what keeps impure converters out: marked pure, its ops are copied."""
    gm = functional_graph(_repeated_muls, torch.randn(3))

    def impure(self, other, *, meta_outputs=None):
        return _impure_mul(self, other)

    _, _, converter = convert(gm, replay=True, registry=_registry_with_mul(impure, ORIGIN_FXLAB, True))
    tags = _call_tags(converter)
    assert converter.replayed == 2 and len(set(tags)) == 1


def test_a_recording_that_reads_a_tensor_it_was_not_given_is_refused() -> None:
    """A converter wiring in a graph tensor that is not its argument cannot be replayed:
    the pass converts such nodes every time and the IR stays the same."""

    def reads_first_op(self, other, *, meta_outputs=None):
        first = current_builder().graph.ops[0]  # the first Data op: not an argument
        return ge.op1("Mul", {"x1": self, "x2": ge.Tensor(first, 0)})

    gm = functional_graph(lambda x, y: [y * 2.0, y * 2.0, y * 2.0], torch.randn(3), torch.randn(3))
    registry = _registry_with_mul(reads_first_op, ORIGIN_FXLAB, True)
    converter = assert_replay_changes_nothing(gm, registry)
    assert converter.replayed == 0
    assert None in converter.replay_cache.templates.values()


def test_auto_functionalized_is_marked_not_replayable() -> None:
    from fxlab.passes.converters.inplace import AUTO_FUNCTIONALIZED_V2

    assert CONVERTERS.get(AUTO_FUNCTIONALIZED_V2).replayable is False
    assert CONVERTERS.get(aten.mul.Tensor).replayable is True


def test_symbolic_shapes_convert_the_same() -> None:
    """Symbolic sizes cannot be keyed (SymInts refuse to hash): such nodes convert every
    time, and the IR keeps its -1 dims and symbols."""
    from torch.fx.experimental.proxy_tensor import make_fx

    def model(x):
        return [x * 2, x * 2, (x * 2).sum(0), (x * 2).sum(0)]

    gm = make_fx(model, tracing_mode="symbolic")(torch.randn(5, 3))
    converter = assert_replay_changes_nothing(gm)
    assert any(-1 in op.output_desc[0].shape for op in converter.builder.graph.ops if op.output_desc)


def _blocks(scales: list[float]):
    """A stack of identical blocks, except for the constants in ``scales``."""

    def model(x, w):
        for scale in scales:
            h = torch.nn.functional.silu(x @ w) * scale
            x = x + h.pow(2).mean(-1, keepdim=True) * h
        return x

    return model


def test_a_block_that_differs_in_one_constant_converts_the_same() -> None:
    gm = functional_graph(_blocks([0.5, 0.5, 0.25, 0.5, 0.5]), torch.randn(2, 4), torch.randn(4, 4))
    converter = assert_replay_changes_nothing(gm)
    assert converter.replayed > 0
    readable = [op.attr_value("_readable_value") for op in converter.builder.graph.ops_of_type("Const")]
    assert "0.25" in readable


def test_a_graph_where_nothing_repeats_converts_the_same() -> None:
    def model(x):
        return [x.sum(0), (x * 3.0).exp(), x.t().mean(1, keepdim=True), torch.relu(x - 1)]

    gm = functional_graph(model, torch.randn(2, 3))
    converter = assert_replay_changes_nothing(gm)
    assert converter.replayed == 0


def test_scopes_that_cross_block_boundaries_convert_the_same() -> None:
    def model(x, w):
        for i in range(4):
            if i == 1:
                scope_cm = scope.super_kernel("sk", "")
                scope_cm.__enter__()
            h = torch.nn.functional.silu(x @ w) * 0.5
            if i == 2:
                scope_cm.__exit__(None, None, None)
            x = x + h
        return x

    gm = functional_graph(model, torch.randn(2, 4), torch.randn(4, 4))
    converter = assert_replay_changes_nothing(gm)
    scoped = [op.attr_value("_super_kernel_scope") for op in converter.builder.graph.ops_of_type("MatMul") + converter.builder.graph.ops_of_type("MatMulV2")]
    assert scoped.count("sk") == 2 and scoped.count(None) == 2


@pytest.mark.parametrize("types", [["Add", "Add", "Mul", "Add"], ["Mul", "Add", "Cast", "Mul", "Mul", "Mul"], ["Add_1", "Mul"]])
def test_names_drawn_per_template_are_the_names_one_at_a_time_would_give(types: list[str]) -> None:
    """The replay draws all of a template's names, then takes them."""
    from fxlab.ir.builder import GraphBuilder

    one_at_a_time, batched = GraphBuilder("g"), GraphBuilder("g")
    for builder in (one_at_a_time, batched):
        for explicit in ("Add_2", "Mul", "Cast_1"):  # explicit names the schemes must skip
            builder.unique_name("Data", name=explicit)
    expected = [one_at_a_time.unique_name(t) for t in types] + [one_at_a_time.unique_name(t) for t in types]
    sources = [batched.name_source(t) for t in types]
    drawn = []
    for _ in range(2):
        names = [next(source) for source in sources]
        batched.taken_names.update(names)
        drawn += names
    assert drawn == expected
    assert len(set(expected)) == len(expected)


def _types_converter(types: list[str]) -> Any:
    def convert_mul(self, other, *, meta_outputs=None):
        out = self
        for op_type in types:
            out = ge.op1(op_type, {"x": out})
        return out

    return convert_mul


@pytest.mark.parametrize("types", [["Add", "Mul", "Add"], ["Add", "Add_1", "Add"], ["Add_1", "Add", "Add_2"], ["Mul_3", "Mul", "Mul", "Mul"]])
def test_templates_of_types_that_look_like_each_others_names_replay_the_same(types: list[str]) -> None:
    """``Add`` and ``Add_1`` in one template: the names drawn at once for a replay are
    still those of one at a time (each type's own name went at the recording)."""

    def model(x, y):
        return [x * 2.0, x * 2.0, x * 2.0, x + y]

    gm = functional_graph(model, torch.randn(3), torch.randn(3))
    converter = assert_replay_changes_nothing(gm, _registry_with_mul(_types_converter(types), ORIGIN_FXLAB, True))
    assert converter.replayed == 2
    names = [op.name for op in converter.builder.graph.ops]
    assert len(set(names)) == len(names)


def test_conversion_moves_its_objects_to_the_old_generation_and_leaves_the_collector_as_it_was() -> None:
    import gc

    gm = functional_graph(lambda x: [x * 2.0, x * 2.0], torch.randn(3))
    assert gc.isenabled()
    result, _, _ = convert(gm, replay=True)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert any(o is result.graph.ops[-1] for o in gc.get_objects(generation=2))
    gc.disable()
    try:
        convert(gm, replay=True)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_conversion_leaves_a_callers_frozen_objects_frozen() -> None:
    import gc

    gm = functional_graph(lambda x: [x * 2.0, x * 2.0], torch.randn(3))
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        convert(gm, replay=True)
        assert gc.get_freeze_count() > frozen // 2, "unfreeze would have thawed them all (some may have been freed)"
    finally:
        gc.unfreeze()


@pytest.mark.parametrize("replayable", [True, False])
def test_converters_run_in_the_callers_torch_function_mode(replayable: bool) -> None:
    """Keys are read without the subclass torch-function check; converters (first of a
    target, new key of a known target, not replayable) never run in that mode."""
    seen: list[bool] = []

    def recording_mul(self, other, *, meta_outputs=None):
        seen.append(torch._C._is_torch_function_enabled())
        other = other if isinstance(other, ge.Tensor) else ge.const(other, self.dtype)
        return ge.op1("Mul", {"x1": self, "x2": other})

    gm = functional_graph(lambda x: [x * 2.0, x * 3.0, x * 2.0, x * 3.0], torch.randn(3))
    converter = assert_replay_changes_nothing(gm, _registry_with_mul(recording_mul, ORIGIN_FXLAB, replayable))
    assert converter.replayed == (2 if replayable else 0)
    assert seen and all(seen)
    assert torch._C._is_torch_function_enabled()


def test_a_converter_that_raises_leaves_the_pass_reading_fast_and_the_caller_s_mode_intact() -> None:
    """After a raising converter, the next converters still run in the caller's mode,
    the rest of the pass still replays, and the caller's mode is restored at the end."""
    seen: list[bool] = []

    def flaky_mul(self, other, *, meta_outputs=None):
        seen.append(torch._C._is_torch_function_enabled())
        if other == 3.0:
            raise ValueError("no Mul by three")
        return ge.op1("Mul", {"x1": self, "x2": ge.const(other, self.dtype)})

    gm = functional_graph(lambda x: [x * 3.0, x * 2.0, x * 2.0, x * 2.0], torch.randn(3))
    result, _, converter = convert(gm, replay=True, registry=_registry_with_mul(flaky_mul, ORIGIN_FXLAB, True))
    assert [n.status.value for n in result.nodes if n.target == "aten.mul.Tensor"] == ["raised", "converted", "converted", "converted"]
    assert converter.replayed == 2 and seen == [True, True]
    assert torch._C._is_torch_function_enabled()
