"""``fxlab ops check``'s checks: the seed ops pass; purpose-built broken ops fail with the
message naming their fault."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

import fxlab.ops  # noqa: F401 - the seed ops
from fxlab.ops.op_check import FAIL, PASS, WARN, check_op
from fxlab.ops.define import define_op
from fxlab.ops.inspect_op import UnknownOpError
from fxlab.ops.prototype import PrototypeError
from fxlab.passes.converters.registry import Sample

DATA = Path(__file__).parents[1] / "data" / "prototypes"
SAMPLES = [Sample((torch.randn(2, 3), torch.randn(2, 3)))]


def _x_like(x, y):
    return torch.empty_like(x)


def _add(x, y):
    return x + y


define_op("fxlabtest::bad_fake(Tensor x, Tensor y) -> Tensor", kernels={"cpu": _add},
          fake=lambda x, y: x.new_empty((x.shape[0],)), samples=SAMPLES)


def _writes_x(x, y):
    x.add_(y)
    return y * 2


define_op("fxlabtest::bad_mutation(Tensor x, Tensor y) -> Tensor", kernels={"cpu": _writes_x}, fake=_x_like, samples=SAMPLES)


def _returns_x(x, y):
    return x.add_(y)


define_op("fxlabtest::bad_return(Tensor(a!) x, Tensor y) -> Tensor(a!)", kernels={"cpu": _returns_x}, fake=lambda x, y: x, samples=SAMPLES)


def _accumulate(x, y):
    x.add_(y)
    return y * y


define_op("fxlabtest::bad_noref(Tensor(a!) x, Tensor y) -> Tensor", kernels={"cpu": _accumulate},
          fake=lambda x, y: torch.empty_like(y), prototype=DATA / "bad_noref.json", samples=SAMPLES)
define_op("fxlabtest::bad_name(Tensor x) -> Tensor", kernels={"cpu": lambda x: x * 2}, fake=lambda x: torch.empty_like(x),
          prototype=DATA / "bad_name.json", samples=[Sample((torch.randn(3),))])
define_op("fxlabtest::no_samples(Tensor x, float alpha=0.5) -> Tensor", kernels={"cpu": lambda x, alpha=0.5: x * alpha},
          fake=lambda x, alpha=0.5: torch.empty_like(x))

_no_fake = torch.library.Library("fxlabtest_nofake", "DEF")  # kept alive: the op lives as long as the library
_no_fake.define("scale_add(Tensor x, Tensor y, float alpha) -> Tensor")
_no_fake.impl("scale_add", lambda x, y, alpha: x + alpha * y, "CPU")


def _by_name(report):
    return {item.name: item for item in report.items}


@pytest.mark.parametrize("op", ["npu::npu_add_custom", "npu::my_op", "npu::my_inplace"])
def test_seed_ops_pass_every_check(op: str) -> None:
    report = check_op(op)
    assert report.ok, [(i.name, i.detail) for i in report.items if i.status == FAIL]
    assert report.samples_source == "registered"
    assert {i.status for i in report.items} == {PASS}
    assert _by_name(report)["converter"].detail.split(";")[0].endswith({"npu::npu_add_custom": "AddCustom", "npu::my_op": "MyOp", "npu::my_inplace": "MyInplace"}[op])
    assert "its IR run on CPU matches the CPU kernel" in _by_name(report)["converter"].detail


def test_wrong_fake_shape_is_caught() -> None:
    report = check_op("fxlabtest::bad_fake")
    item = _by_name(report)["fake vs kernel"]
    assert item.status == FAIL and "fake shape (2,), CPU kernel shape (2, 3)" in item.detail
    assert _by_name(report)["opcheck"].status == FAIL
    assert not report.ok


def test_undeclared_mutation_is_caught() -> None:
    item = _by_name(check_op("fxlabtest::bad_mutation"))["mutations declared"]
    assert item.status == FAIL
    assert "writes input(s) x but the schema does not mark them mutated" in item.detail
    assert "Tensor(a!) x" in item.fix


def test_returning_the_mutated_input_is_caught() -> None:
    by_name = _by_name(check_op("fxlabtest::bad_return"))
    assert by_name["no mutated input returned"].status == FAIL
    assert "Tensor(a!)" in by_name["no mutated input returned"].detail
    assert by_name["mutations declared"].status == FAIL
    assert "output shares memory with input(s) x" in by_name["mutations declared"].detail


def test_prototype_without_ref_output_is_caught() -> None:
    item = _by_name(check_op("fxlabtest::bad_noref"))["prototype outputs"]
    assert item.status == FAIL
    assert "no ref output named x" in item.detail and "['x', '<output 0>']" in item.fix


def test_prototype_name_not_camel_case_is_caught() -> None:
    by_name = _by_name(check_op("fxlabtest::bad_name"))
    assert by_name["prototype name"].status == FAIL
    assert "'BadNameOp' is not 'BadName'" in by_name["prototype name"].detail
    assert by_name["converter"].status == FAIL


def test_prototype_option_overrides_the_registered_one() -> None:
    report = check_op("npu::my_inplace", prototype=DATA / "bad_noref.json")
    by_name = _by_name(report)
    # The registered converter names the GE op itself, so a non-CamelCase name is no fault.
    assert by_name["prototype name"].status == PASS
    assert "BadNoref is not the CamelCase MyInplace" in by_name["prototype name"].detail
    assert by_name["prototype outputs"].status == FAIL
    assert not report.ok


def test_op_without_samples_gets_samples_from_its_schema() -> None:
    report = check_op("fxlabtest::no_samples")
    assert report.samples_source == "derived from the schema"
    assert _by_name(report)["opcheck"].status == PASS
    assert _by_name(report)["prototype"].status == WARN
    # A warning is said at the end: "all checks passed" alone would hide it.
    warned = [item.name for item in report.items if item.status == WARN]
    assert report.ok and report.verdict == f"all checks passed, with {len(warned)} warning(s): {', '.join(warned)}"
    assert report.to_json()["verdict"] == report.verdict


def test_op_without_a_fake_function_is_told_to_register_one() -> None:
    report = check_op("fxlabtest_nofake::scale_add")
    for name in ("fake vs kernel", "converter"):
        item = _by_name(report)[name]
        assert item.status == FAIL and item.detail.startswith("fxlabtest_nofake::scale_add has no fake (Meta) function")
        assert item.fix.startswith('Register one: @torch.library.register_fake("fxlabtest_nofake::scale_add")')
    assert not report.ok


def test_unknown_op_suggests_close_names() -> None:
    with pytest.raises(UnknownOpError, match="Did you mean npu::my_inplace"):
        check_op("my_inplac")


def test_missing_and_malformed_prototype_files() -> None:
    with pytest.raises(PrototypeError, match="does not exist"):
        check_op("npu::my_inplace", prototype=DATA / "nope.json")
    with pytest.raises(PrototypeError, match="not valid JSON: .* line 2"):
        check_op("npu::my_inplace", prototype=DATA / "malformed.json")


def _never_writes_x(x, y):
    return y * 2


define_op("fxlabtest::declared_not_written(Tensor(a!) x, Tensor y) -> Tensor", kernels={"cpu": _never_writes_x},
          fake=lambda x, y: torch.empty_like(y), samples=SAMPLES)


def test_declared_mutation_the_kernel_never_makes_is_caught() -> None:
    # Read from the schema, "the kernel mutates only x, as declared" passed.
    item = _by_name(check_op("fxlabtest::declared_not_written"))["mutations declared"]
    assert item.status == FAIL
    assert "marks x mutated but the kernel left it unchanged on all 1 sample(s)" in item.detail


def _add_custom_converter(returned):
    def convert(x, y, *, meta_outputs=None):
        from fxlab.ir import ge

        out = ge.op("Add", {"x1": x, "x2": y}, outputs=("y",))[0]
        return returned(out)

    return convert


def _wrong_math(x, y, *, meta_outputs=None):
    from fxlab.ir import ge

    return ge.op("Mul", {"x1": x, "x2": y}, outputs=("y",))[0]


@pytest.fixture(scope="module")
def broken_converters():
    """Ops with deliberately broken converters, registered only while these tests run (the
    registry walk must not collect them)."""
    from fxlab.passes.converters.registry import CONVERTERS

    converters = {
        "converter_tuple": _add_custom_converter(lambda out: (out, out, out)),
        "converter_none": _add_custom_converter(lambda out: None),
        "converter_str": _add_custom_converter(lambda out: "Add"),
        "converter_wrong_math": _wrong_math,
    }
    ops = [define_op(f"fxlabtest::{name}(Tensor x, Tensor y) -> Tensor", kernels={"cpu": _add}, fake=_x_like, samples=SAMPLES,
                     converter=fn) for name, fn in converters.items()]
    yield
    for op in ops:
        CONVERTERS.unregister(op.overload)


@pytest.mark.parametrize("op, said", [("converter_tuple", "returned a 3-tuple"), ("converter_none", "returned None"),
                                      ("converter_str", "returned a str ('Add')")])
def test_converter_returning_the_wrong_outputs_fails(op, said, broken_converters) -> None:
    # "returns 1 output(s)" was read from the schema, whatever the converter returned.
    item = _by_name(check_op(f"fxlabtest::{op}"))["converter"]
    assert item.status == FAIL
    assert said in item.detail and "has 1 tensor output" in item.detail


def test_converter_is_run_against_the_kernel(broken_converters) -> None:
    item = _by_name(check_op("fxlabtest::converter_wrong_math"))["converter"]
    assert item.status == FAIL
    assert "the Ascend IR run on CPU differs from the CPU kernel: output 0: values differ" in item.detail


def test_an_output_that_is_the_mutated_input_is_made_on_the_host_in_the_converter_check() -> None:
    # TorchAir's NetOutput leaves out an output sharing memory with a graph input; the
    # IR run re-makes it from the input, so the converter still matches the kernel.
    item = _by_name(check_op("fxlabtest::bad_return"))["converter"]
    assert item.status == PASS, item.detail
    assert item.detail.startswith("the auto converter runs on fake inputs, returns 1 tensor output(s), and emits BadReturn; its IR run on CPU matches")


define_op("fxlabtest::auto_named(Tensor x) -> Tensor", kernels={"cpu": lambda x: x * 3}, fake=lambda x: torch.empty_like(x),
          samples=[Sample((torch.randn(3),))])


def test_a_prototype_given_on_the_command_line_that_rules_out_the_auto_converter_fails_the_converter_too() -> None:
    """With no prototype of its own the op is auto-converted (assumed); the one given
    with --prototype is named otherwise, so the auto converter cannot convert it: the
    converter check must not pass on what the auto converter would emit."""
    assert _by_name(check_op("fxlabtest::auto_named"))["converter"].status != FAIL
    by_name = _by_name(check_op("fxlabtest::auto_named", prototype=DATA / "bad_name.json"))
    assert by_name["auto converter"].status == FAIL
    assert (by_name["converter"].status, by_name["converter"].detail) == (FAIL, "no converter is registered and the auto converter does not apply")
