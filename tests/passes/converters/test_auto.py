"""TorchAir's auto converter for custom ops: the verdict and its reasons, the GE op it
builds (CamelCase type, schema-order inputs, attrs, ref outputs), and the reference
kernel that runs the torch op for it."""
from __future__ import annotations

from typing import Any

import pytest
import torch

from tests.functional_graphs import functional_graph
from fxlab.ir.execute import execute
from fxlab.ir.model import IrGraph
from fxlab.passes.conversion_result import Status
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.converters import auto
from fxlab.passes.converters.auto import GePrototype, auto_converter_verdict, ge_type_of, prototype_from_schema
from tests.passes.converters import custom_ops
from tests.passes.converters.custom_ops import define_test_op as _define


def _combine(x: torch.Tensor, y: torch.Tensor | None, z: list[torch.Tensor], attr1: float, attr2: int) -> torch.Tensor:
    out = x * attr1 + attr2
    if y is not None:
        out = out + y
    for t in z:
        out = out - t
    return out


def _combine_fake(x: torch.Tensor, y: Any, z: Any, attr1: float, attr2: int) -> torch.Tensor:
    return torch.empty_like(x)


def _update(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x.mul_(y)
    return y - 1


COMBINE = _define("auto_combine(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor", _combine, _combine_fake)
UPDATE = _define("auto_update(Tensor(a!) x, Tensor y) -> Tensor z", _update, lambda x, y: torch.empty_like(y))
UPDATE_FUNCTIONAL = _define("auto_update_functional(Tensor x, Tensor y) -> Tensor", lambda x, y: x + y, lambda x, y: torch.empty_like(x))
SCALAR = _define("auto_scalar(Tensor x, Scalar alpha) -> Tensor", lambda x, a: x * a, lambda x, a: torch.empty_like(x))
PRIMARY = _define("primary_gate(Tensor x) -> Tensor", lambda x: x.clone(), lambda x: torch.empty_like(x))


def test_ge_type_is_camel_case_of_the_op_name_without_functional() -> None:
    assert ge_type_of(UPDATE) == "AutoUpdate"
    assert ge_type_of(UPDATE_FUNCTIONAL) == "AutoUpdate"
    assert ge_type_of(COMBINE) == "AutoCombine"


def test_prototype_from_schema_puts_a_ref_output_per_mutated_input_first() -> None:
    proto = prototype_from_schema(UPDATE)
    assert proto == GePrototype("AutoUpdate", (("x", "required"), ("y", "required")), (("x", "required"), ("z", "required")), ())
    combine = prototype_from_schema(COMBINE)
    assert combine.inputs == (("x", "required"), ("y", "optional"), ("z", "dynamic"))
    assert combine.attrs == ("attr1", "attr2")
    assert combine.outputs == (("y_out", "required"),)  # an unnamed return never takes an input's name


def test_verdict_accepts_well_formed_ops() -> None:
    assert auto_converter_verdict(UPDATE) == (True, "AutoUpdate", "")
    assert auto_converter_verdict(COMBINE) == (True, "AutoCombine", "")


@pytest.mark.parametrize(
    "op,fragment",
    [
        (SCALAR, "Scalar argument 'alpha'"),
        (torch.ops.aten.add.Tensor, "built-in"),
        (PRIMARY, "built-in"),  # TorchAir's substring test: the name contains "prim"
    ],
)
def test_verdict_refuses_with_the_reason(op: Any, fragment: str) -> None:
    ok, _, reason = auto_converter_verdict(op)
    assert not ok
    assert fragment in reason


@pytest.mark.parametrize(
    "proto,fragment",
    [
        (GePrototype("AutoUpdateV2", (("x", "required"), ("y", "required")), (("x", "required"), ("z", "required")), ()), "no Ascend IR AutoUpdate"),
        (GePrototype("AutoUpdate", (("x", "required"),), (("x", "required"), ("z", "required")), ()), "2 tensor inputs"),
        (GePrototype("AutoUpdate", (("x", "required"), ("y", "required")), (("z", "required"),), ()), "2 outputs"),
        (GePrototype("AutoUpdate", (("x", "required"), ("y", "required")), (("out", "required"), ("z", "required")), ()), "same-named output"),
    ],
)
def test_verdict_against_a_prototype_names_the_mismatch(proto: GePrototype, fragment: str) -> None:
    ok, ge_type, reason = auto_converter_verdict(UPDATE, proto)
    assert (ok, ge_type) == (False, "AutoUpdate")
    assert fragment in reason


def test_prototype_lookup_gives_the_input_and_output_names() -> None:
    proto = GePrototype.from_msopgen({
        "op": "AutoUpdate",
        "input_desc": [{"name": "x", "param_type": "required"}, {"name": "other", "param_type": "required"}],
        "output_desc": [{"name": "x", "param_type": "required"}, {"name": "result", "param_type": "required"}],
    })
    auto.PROTOTYPE_LOOKUPS.append(lambda op: proto if op is UPDATE else None)
    try:
        graph = convert_to_ascend_ir(functional_graph(update_and_read, torch.randn(3), torch.randn(3))).graph
    finally:
        auto.PROTOTYPE_LOOKUPS.pop()
    (op,) = graph.ops_of_type("AutoUpdate")
    assert [d.name for d in op.input_desc] == ["x", "other"]
    assert [d.name for d in op.output_desc] == ["x", "result"]


def combine_call(x: torch.Tensor, y: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.ops.fxlabtest.auto_combine(x, y, [a, b], 1.5, 2)


def test_functional_custom_op_converts_automatically_and_runs() -> None:
    inputs = [torch.randn(2, 3) for _ in range(4)]
    result = convert_to_ascend_ir(functional_graph(combine_call, *inputs))
    statuses = {r.target: r.status for r in result.nodes}
    assert statuses["fxlabtest.auto_combine.default"] is Status.AUTO
    (op,) = result.graph.ops_of_type("AutoCombine")
    assert op.inputs == ["arg0_1:0", "arg1_1:0", "arg2_1:0", "arg3_1:0"]
    assert [d.name for d in op.input_desc] == ["x", "y", "z0", "z1"]
    assert (op.attr_value("attr1"), op.attr_value("attr2")) == (1.5, 2)
    torch.testing.assert_close(execute(result.graph, inputs)[0], combine_call(*inputs))


def combine_without_optional(x: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    return torch.ops.fxlabtest.auto_combine(x, None, [a], 0.5, -1)


def test_absent_optional_input_is_an_empty_input() -> None:
    inputs = [torch.randn(4), torch.randn(4)]
    graph = convert_to_ascend_ir(functional_graph(combine_without_optional, *inputs)).graph
    (op,) = graph.ops_of_type("AutoCombine")
    assert op.inputs == ["arg0_1:0", "", "arg1_1:0"]
    torch.testing.assert_close(execute(graph, inputs)[0], combine_without_optional(*inputs))


def update_and_read(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    z = torch.ops.fxlabtest.auto_update(x, y)
    return z, x + 0


def test_auto_converted_inplace_op_mutates_like_eager_after_a_json_round_trip() -> None:
    graph = convert_to_ascend_ir(functional_graph(update_and_read, torch.randn(3), torch.randn(3))).graph
    (op,) = graph.ops_of_type("AutoUpdate")
    assert op.attr_value(auto.TORCH_OP_ATTR) == "fxlabtest.auto_update.default"
    reread = IrGraph.from_json(graph.to_json())
    x, y = torch.randn(3), torch.randn(3)
    eager_x = x.clone()
    expected = update_and_read(eager_x, y)
    ir_x = x.clone()
    actual = execute(reread, [ir_x, y])
    for got, want in zip(actual, expected):
        torch.testing.assert_close(got, want)
    torch.testing.assert_close(ir_x, eager_x)


@pytest.mark.parametrize("op", ["_c10d_functional.all_reduce.default", "quantized.linear.default"])
def test_verdict_refuses_ops_of_torchs_own_namespaces(op: str) -> None:
    import torch.distributed._functional_collectives  # noqa: F401 - defines _c10d_functional

    namespace, name, overload = op.split(".")
    ok, _, reason = auto_converter_verdict(getattr(getattr(getattr(torch.ops, namespace), name), overload))
    assert not ok and reason == f"{op} is an operator of torch or torch_npu, not a custom op: TorchAir converts it only with a registered converter, and fxlab assumes no GE op for it"


# A custom op an installed library defines (as transformers defines grouped_mm_fallback)
# against the same op defined by the user: the library's module lives in a folder that
# counts as installed packages.
LIBRARY_MODULE = '''
import torch

@torch.library.custom_op("fxlablib::gather_rows", mutates_args=())
def gather_rows(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    return x[index]

@gather_rows.register_fake
def _(x, index):
    return x.new_empty((index.shape[0], *x.shape[1:]))

def _halve(x):
    x.mul_(0.5)

LIB = torch.library.Library("fxlablib", "FRAGMENT")
LIB.define("halve_(Tensor(a!) x) -> ()")
LIB.impl("halve_", _halve, "CompositeExplicitAutograd")
'''
LIBRARY_REASON = (
    "a custom op defined by an installed library (fxlabfakelib/__init__.py:{line}), not by the user's code, and no Ascend C "
    "prototype of it is known: TorchAir's auto converter would look for an Ascend IR op {ge_type} registered in CANN, and a "
    "library's Python op has none, so graph mode fails on it on the NPU machine; there is no GE op to convert it to"
)
USER_GATHER_ROWS = _define(
    "user_gather_rows(Tensor x, Tensor index) -> Tensor", lambda x, i: x[i], lambda x, i: x.new_empty((i.shape[0], *x.shape[1:]))
)


@pytest.fixture(scope="module")
def installed_library(tmp_path_factory: pytest.TempPathFactory) -> Any:
    import importlib
    import sys

    from fxlab import source_lines

    packages = tmp_path_factory.mktemp("site-packages")
    (packages / "fxlabfakelib").mkdir()
    (packages / "fxlabfakelib" / "__init__.py").write_text(LIBRARY_MODULE)
    roots = source_lines._library_roots()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(source_lines, "_library_roots", lambda: (*roots, f"{packages}{'/'}"))
        patch.syspath_prepend(str(packages))
        if "fxlabfakelib" not in sys.modules:
            importlib.import_module("fxlabfakelib")
        yield torch.ops.fxlablib


def _gather(op: Any) -> Any:
    return lambda x, index: op(x, index) * 2


def test_a_librarys_custom_op_without_a_prototype_is_refused_and_a_users_is_auto_converted(installed_library: Any) -> None:
    x, index = torch.randn(4, 3), torch.tensor([2, 0])
    library = convert_to_ascend_ir(functional_graph(_gather(installed_library.gather_rows), x, index), convert_refused=True)
    (record,) = [r for r in library.nodes if r.target == "fxlablib.gather_rows.default"]
    assert record.status is Status.REFUSED
    reason = LIBRARY_REASON.format(line=4, ge_type="GatherRows")
    assert record.message == f"TorchAir has no converter for fxlablib.gather_rows.default: it is {reason}"
    assert "GatherRows" not in library.graph.types and library.partial
    assert auto_converter_verdict(installed_library.gather_rows.default) == (False, "GatherRows", f"fxlablib.gather_rows.default is {reason}")
    user = convert_to_ascend_ir(functional_graph(_gather(USER_GATHER_ROWS), x, index))
    (record,) = [r for r in user.nodes if r.target == "fxlabtest.user_gather_rows.default"]
    assert (record.status, record.message) == (Status.AUTO, "")
    assert user.graph.types.count("UserGatherRows") == 1 and not user.partial
    assert auto.op_definition(USER_GATHER_ROWS) == auto.OpDefinition(f"{custom_ops.__file__}:8", False)  # where its Library was made
    torch.testing.assert_close(execute(user.graph, [x, index])[0], USER_GATHER_ROWS(x, index) * 2)


def test_a_librarys_custom_op_with_its_prototype_is_auto_converted(installed_library: Any) -> None:
    op = installed_library.gather_rows.default
    proto = GePrototype("GatherRows", (("x", "required"), ("index", "required")), (("y", "required"),), ())
    auto.PROTOTYPE_LOOKUPS.append(lambda target: proto if target is op else None)
    try:
        result = convert_to_ascend_ir(functional_graph(_gather(installed_library.gather_rows), torch.randn(4, 3), torch.tensor([1])))
    finally:
        auto.PROTOTYPE_LOOKUPS.pop()
    assert {r.target: r.status for r in result.nodes}["fxlablib.gather_rows.default"] is Status.AUTO
    assert result.graph.types.count("GatherRows") == 1


def test_a_librarys_in_place_custom_op_is_refused_inside_auto_functionalized(installed_library: Any) -> None:
    def halve_then_add(x: torch.Tensor) -> torch.Tensor:
        installed_library.halve_(x)
        return x + 1

    result = convert_to_ascend_ir(functional_graph(halve_then_add, torch.randn(3)))
    (record,) = [r for r in result.nodes if r.status is Status.REFUSED]
    assert record.target == "auto_functionalized_v2"
    assert record.message == f"TorchAir has no converter for fxlablib.halve_.default: it is {LIBRARY_REASON.format(line=15, ge_type='Halve')}"
    assert auto.op_definition(installed_library.halve_.default) == auto.OpDefinition("fxlabfakelib/__init__.py:15", True)  # where its Library was made
