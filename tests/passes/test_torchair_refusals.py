"""No GE op is ever assumed for an op of torch's or torch_npu's own namespaces: the
registry and the auto converter are scanned for violations."""
from __future__ import annotations

import operator
from collections.abc import Iterator

import pytest
import torch

import fxlab.ops  # noqa: F401 - the seed custom ops (npu::my_op ...) and their converters
import fxlab.passes.converters  # noqa: F401 - registers fxlab's converters
from tests.passes.converters.npu_fixtures import npu_ops  # noqa: F401 - the fixture
from fxlab.passes.converters.auto import auto_converter
from fxlab.passes.converters.npu import NPU_CONVERTERS
from fxlab.passes.converters.registry import CONVERTERS, ORIGIN_FXLAB
from fxlab.passes.torchair_refusals import TORCH_NAMESPACES, is_protected, not_converted_reason, registrations, verdict_of


def _defined_overloads(namespaces: set[str]) -> list[torch._ops.OpOverload]:
    """Every overload torch has defined now in ``namespaces``."""
    found = []
    for qualified in torch._C._dispatch_get_all_op_names():
        namespace, _, rest = qualified.partition("::")
        if namespace not in namespaces:
            continue
        name, _, overload = rest.partition(".")
        try:
            found.append(getattr(getattr(getattr(torch.ops, namespace), name), overload or "default"))
        except (AttributeError, RuntimeError):
            continue
    return found


def test_no_op_of_torchs_namespaces_is_auto_converted():
    import torch.distributed._functional_collectives  # noqa: F401 - defines _c10d_functional

    ops = _defined_overloads(set(TORCH_NAMESPACES))
    assert len(ops) > 2000 and any(op.namespace == "_c10d_functional" for op in ops)
    assert [str(op) for op in ops if auto_converter(op) is not None] == []


@pytest.fixture(scope="module")
def torch_npu_names() -> Iterator[set[str]]:
    """torch_npu's operators, defined from a torch_npu copy for the module's tests."""
    from fxlab.compat.torch_npu_ops import find_torch_npu_copy, torch_npu_definitions

    copy = find_torch_npu_copy()
    if copy is None or not copy.complete:
        pytest.skip("no torch_npu copy (`fxlab torchair fetch` extracts one)")
    with torch_npu_definitions(copy) as definitions:
        yield {qualified.split(".")[0] for qualified in definitions.defined}


def test_no_torch_npu_operator_is_auto_converted(torch_npu_names):
    ops = [op for op in _defined_overloads({"npu"}) if op.name().split("::")[1].split(".")[0] in torch_npu_names]
    assert len(ops) > 300
    assert [str(op) for op in ops if auto_converter(op) is not None] == []


def test_a_users_custom_op_in_the_npu_namespace_is_still_auto_converted():
    # TorchAir's documentation defines custom ops in the npu namespace: they are not torch_npu's.
    assert not is_protected("npu.my_inplace.default") and not is_protected("npu.npu_add_custom.default")
    assert is_protected("npu.npu_rms_norm.default") and is_protected("npu_define.broadcast.default")
    assert is_protected("_c10d_functional.all_reduce.default") and not is_protected("mylib.scale.default")


def test_every_builtin_converter_of_a_protected_op_is_one_torchair_converts_or_refuses():
    table = registrations()
    targets = [str(c.target) for c in CONVERTERS if c.origin == ORIGIN_FXLAB and isinstance(c.target, torch._ops.OpOverload)]
    targets += [f"npu.{name}" for name in NPU_CONVERTERS]
    protected = [t for t in targets if is_protected(t)]
    assert len(protected) > 300
    assert [t for t in protected if t not in table] == []
    # fxlab's converters of torch_npu's operators build TorchAir's graph: it converts each.
    assert {t for t in targets if t.startswith("npu.") and is_protected(t) and table[t].verdict != "converts"} == set()


def test_the_reason_names_torchairs_verdict_and_where_its_converter_is():
    assert not_converted_reason(torch.ops.aten.add.Tensor).startswith("not converted by the built-in conversion; TorchAir converts it (ge_converter/aten/add.py:")
    assert not_converted_reason(torch.ops.aten.add.Tensor).endswith("); use --converter torchair")
    assert verdict_of(torch.ops.aten.roll.default).verdict == "refuses"
    assert not_converted_reason(torch.ops.aten.roll.default).startswith("TorchAir refuses aten.roll.default: its converter only raises")


def test_torchs_fused_attention_fast_path_is_refused_with_the_switch_that_turns_it_off():
    for op in (torch.ops.aten._transformer_encoder_layer_fwd.default, torch.ops.aten._native_multi_head_attention.default):
        reason = not_converted_reason(op)
        assert reason.startswith(f"TorchAir has no converter for {op}") and "Fix: turn torch's fused fast path off with torch.backends.mha.set_fastpath_enabled(False)" in reason


# -- comparisons of sizes ---------------------------------------------------------------------
def _checked_rows(x: torch.Tensor) -> torch.Tensor:
    torch._check(x.shape[0] >= 4)
    return x * 2


def _functional_with_unbacked_rows():
    from tests.passes.dynamic_functional import captured_functional

    x = torch.randn(6, 3)
    torch._dynamo.decorators.mark_unbacked(x, 0)
    return captured_functional(_checked_rows, x)


def test_a_size_comparison_is_named_as_written_and_refused_as_torchairs_walk_fails_on_it():
    from fxlab.passes.conversion_result import Status
    from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
    from fxlab.passes.torchair_refusals import symbolic_comparison

    gm = _functional_with_unbacked_rows()
    (ge,) = [n for n in gm.graph.nodes if n.op == "call_function" and n.target is operator.ge]
    assert symbolic_comparison(ge) == "a symbolic size comparison `u0 >= 4` (operator.ge)"
    result = convert_to_ascend_ir(gm, "g")
    (record,) = [r for r in result.nodes if r.node == "ge"]
    assert (record.target, record.status) == ("operator.ge", Status.REFUSED)
    assert record.message == (
        "TorchAir does not convert a symbolic size comparison `u0 >= 4` (operator.ge): its walk over the graph evaluates "
        "Python's comparisons itself, on its own packed graph values (npu_fx_compiler.py:208), and raises TypeError: '>=' "
        "not supported between instances of 'ValuePack' and 'int'. Fix: keep size checks out of the code TorchAir compiles "
        "(a torch._check on a size, or the check torch adds after an op whose output size depends on the data: give that "
        "size statically)"
    )
    (check,) = [r for r in result.nodes if r.target == "aten._assert_scalar.default"]
    assert check.status is Status.REFUSED and "the runtime check of a size" in check.message


def test_an_op_torchair_converts_wrongly_only_with_some_arguments_is_blamed_only_with_them(npu_ops):
    # TorchAir's npu_fusion_attention drops the position bias: a call without one is right.
    import torch.fx as fx

    from fxlab.passes.torchair_refusals import wrong_result

    graph = fx.Graph()
    q, k, v, pse = (graph.placeholder(name) for name in ("q", "k", "v", "pse"))
    attention = torch.ops.npu.npu_fusion_attention.default
    without = graph.call_function(attention, (q, k, v, 4, "BNSD", None, None, None, 0.25))
    positional = graph.call_function(attention, (q, k, v, 4, "BNSD", pse))
    keyword = graph.call_function(attention, (q, k, v, 4, "BNSD"), {"pse": pse, "scale": 0.25})
    assert wrong_result(without) is None
    assert "does not pass the position bias on" in wrong_result(positional) and wrong_result(keyword) == wrong_result(positional)
