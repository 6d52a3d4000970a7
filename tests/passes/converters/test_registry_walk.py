"""Walk the whole converter registry: every converter, every sample, checked against eager.

For each sample a one-node FX graph calling the converter's overload is built (graph
tensors as placeholders, fake ``val`` meta as the functional stage has it), converted to
Ascend IR, run by the CPU reference executor and compared with the ATen op run eagerly:
same values (``assert_close``: dtype and shape included), and inputs the op mutates
mutated the same way. A converter without samples fails.
"""
from __future__ import annotations

import operator
from typing import Any

import pytest
import torch
import torch.fx as fx
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import ShapeEnv
from torch.utils import _pytree as pytree

from fxlab.ir.execute import execute
from fxlab.ir.host_outputs import converter_fx_outputs
from fxlab.passes import converters  # noqa: F401 - registers the shipped converters
from fxlab.passes.conversion_result import UNSUPPORTED_OP_TYPE
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.converters.registry import CONVERTERS, Converter, Sample

# Ops whose output values are undefined (uninitialised memory): only dtype and shape count.
VALUES_UNDEFINED = {"aten.empty.memory_format", "aten.empty_like.default", "aten.empty_strided.default", "aten.new_empty.default", "aten.new_empty_strided.default"}
# Outputs that are a kernel's scratch (only its backward reads them, and the NPU backward
# does not): their values differ by design, dtype and shape must still match.
SCRATCH_OUTPUTS = {"aten.log_sigmoid_forward.default": {1}, "aten.log_sigmoid_forward.output": {1}}
# In-place overloads whose TorchAir converter returns the result and writes nothing back
# (a functional graph never holds them): their self argument is not compared afterwards.
# Ops torch has no CPU (or Meta) kernel for: what they compute, written out.
def _per_channel(v: torch.Tensor) -> torch.Tensor:
    return v.reshape(1, -1, 1, 1)


def _batch_norm_elemt(x, weight, bias, mean, invstd, eps):
    return (x - _per_channel(mean)) * _per_channel(invstd) * _per_channel(weight) + _per_channel(bias)


def _batch_norm_backward_reduce(grad, x, mean, invstd, weight, *_):
    sum_dy = grad.sum((0, 2, 3))
    sum_dy_xmu = (grad * (x - _per_channel(mean))).sum((0, 2, 3))
    return sum_dy, sum_dy_xmu, sum_dy_xmu * invstd, sum_dy


def _batch_norm_backward_elemt(grad, x, mean, invstd, weight, sum_dy, sum_dy_xmu, count):
    total = count.sum()
    mean_dy, mean_dy_xmu = sum_dy / total, sum_dy_xmu / total
    centred = (x - _per_channel(mean)) * _per_channel(invstd * invstd * mean_dy_xmu)
    return (grad - _per_channel(mean_dy) - centred) * _per_channel(invstd * weight)


REFERENCES = {
    "aten.matmul_backward.default": lambda grad, a, b, mask: (grad @ b.transpose(-1, -2), a.transpose(-1, -2) @ grad),
    # SyncBatchNorm's pieces have CUDA kernels only: ATen's formulas (torch/csrc Normalization).
    "aten.batch_norm_elemt.default": _batch_norm_elemt,
    "aten.batch_norm_backward_reduce.default": _batch_norm_backward_reduce,
    "aten.batch_norm_backward_elemt.default": _batch_norm_backward_elemt,
}


def _waited(name: str) -> Any:
    """A functional collective run eagerly: its result is ready once waited on."""

    def run(*args: Any, **kwargs: Any) -> Any:
        target = getattr(getattr(torch.ops, name.split(".")[0]), name.split(".")[1]).default
        return torch.ops._c10d_functional.wait_tensor(target(*args, **kwargs))

    return run


REFERENCES.update(
    {
        f"{ns}.{op}.default": _waited(f"{ns}.{op}")
        for ns, ops in (("_c10d_functional", ("all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor", "broadcast")), ("c10d_functional", ("all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor")))
        for op in ops
    }
)
# Converters whose outputs TorchAir returns in another order than ATen (graph output i is
# eager output ORDER[i]): shown as TorchAir builds them, checked in that order.
OUTPUT_ORDER = {"aten._native_batch_norm_legit_functional.default": [0, 3, 4, 1, 2]}
NOT_WRITTEN_BACK = {"aten.masked_fill_.Scalar", "aten.bitwise_right_shift_.Tensor"}


# Ops that draw random numbers: the reference kernels draw their own (seeded from the
# graph's seed and offsets), so values cannot equal eager's. Dtype and shape are compared
# with eager, and the values are checked to be draws of the right kind.
def _within(low: float, high: float) -> Any:
    return lambda sample, got, want: bool(((got[0] >= low) & (got[0] < high)).all()) if got[0].numel() else True


def _uniform_range(sample: Sample, got: list[torch.Tensor], want: list[torch.Tensor]) -> bool:
    low, high = (list(sample.args[1:]) + [0.0, 1.0][len(sample.args) - 1:])[:2]
    return bool(((got[0] >= low) & (got[0] <= high)).all())


def _zeros_and_ones(sample: Sample, got: list[torch.Tensor], want: list[torch.Tensor]) -> bool:
    return bool(((got[0] == 0) | (got[0] == 1)).all())


def _permutation(sample: Sample, got: list[torch.Tensor], want: list[torch.Tensor]) -> bool:
    return torch.equal(got[0].sort().values.long(), torch.arange(sample.args[0]))


def _below_high(sample: Sample, got: list[torch.Tensor], want: list[torch.Tensor]) -> bool:
    if got[0].dtype == torch.bool:  # TorchAir fills with True whenever high > 0, unlike eager
        return bool(got[0].all())
    return bool(((got[0] >= 0) & (got[0] < sample.args[0])).all())


def _categories(sample: Sample, got: list[torch.Tensor], want: list[torch.Tensor]) -> bool:
    return bool(((got[0] >= 0) & (got[0] < sample.args[0].shape[-1])).all())


def _dropped_or_scaled(sample: Sample, got: list[torch.Tensor], want: list[torch.Tensor]) -> bool:
    """Each output is 0 or input / (1 - p); GE's mask (bit-packed, padded to 128 elements)
    keeps exactly the elements the output kept."""
    from fxlab.ir.kernels.rng import unpack_mask

    x, p, train = sample.args
    if not train:
        return torch.equal(got[0], x) and bool(got[1].all())
    kept = unpack_mask(got[1], x.numel()).reshape(x.shape)
    scaled = (x.float() / (1 - p)).to(x.dtype)
    tol = 1e-2 if x.dtype == torch.float16 else 1e-5
    return got[1].numel() == (x.numel() + 127) // 128 * 16 and torch.allclose(got[0].float(), torch.where(kept, scaled, 0).float(), rtol=tol, atol=tol) and 0 < int(kept.sum()) < x.numel()


RANDOM_DRAWS = {
    "aten.rand.default": _within(0.0, 1.0),
    "aten.randn.default": lambda sample, got, want: bool(got[0].isfinite().all()) and float(got[0].float().std()) > 0.5,
    "aten.randn.generator": lambda sample, got, want: bool(got[0].isfinite().all()) and float(got[0].float().std()) > 0.5,
    "aten.uniform.default": _uniform_range,
    "aten.bernoulli.default": _zeros_and_ones,
    "aten.bernoulli.p": _zeros_and_ones,
    "aten.bernoulli.Tensor": _zeros_and_ones,
    "aten.randperm.default": _permutation,
    "aten.randint.default": _below_high,
    "aten.multinomial.default": _categories,
    "aten.native_dropout.default": _dropped_or_scaled,
}
# Outputs whose dtype and shape are GE's, not ATen's: native_dropout's mask is GE's
# bit-packed uint8 mask (TorchAir returns it as the node's second output).
GE_SHAPED_OUTPUTS = {"aten.native_dropout.default": {1}}
SEED = 0


def _samples_of(converter: Converter) -> list[Sample]:
    torch.manual_seed(SEED)
    return list(converter.samples()) if converter.samples is not None else []


def _cases() -> list[Any]:
    cases = []
    for converter in sorted(CONVERTERS, key=lambda c: str(c.target)):
        count = len(_samples_of(converter))
        if count == 0:
            cases.append(pytest.param(converter.target, None, id=f"{converter.target}-no-samples"))
        cases.extend(pytest.param(converter.target, i, id=f"{converter.target}-{i}") for i in range(count))
    return cases


def _clone(value: Any) -> Any:
    return pytree.tree_map(lambda x: x.clone() if isinstance(x, torch.Tensor) else x, value)


def one_node_graph(target: Any, sample: Sample) -> tuple[fx.GraphModule, list[torch.Tensor]]:
    """An FX graph ``outputs = target(*args, **kwargs)``: every tensor of the sample is a
    placeholder (in order of appearance), everything else a constant argument; tuple
    outputs are read through ``getitem`` nodes as in a functional graph."""
    graph = fx.Graph()
    tensors: list[torch.Tensor] = []

    def as_placeholder(x: Any) -> Any:
        if not isinstance(x, torch.Tensor):
            return x
        tensors.append(x)
        return graph.placeholder(f"arg{len(tensors) - 1}")

    args, kwargs = pytree.tree_map(as_placeholder, (sample.args, sample.kwargs))
    # A shape env lets data-dependent ops (nonzero, item) get unbacked sizes; the inputs
    # themselves stay static as in a graph compiled without dynamic shapes.
    fake_mode = FakeTensorMode(shape_env=ShapeEnv())
    fakes = [fake_mode.from_tensor(t, static_shapes=True) for t in tensors]
    for node, fake in zip(graph.nodes, fakes):
        node.meta["val"] = fake
    fake_args, fake_kwargs = _bind(sample, fakes)
    compute = REFERENCES.get(str(target), target)
    try:
        with fake_mode:
            val = compute(*fake_args, **fake_kwargs)
    except RuntimeError:
        # A few ops have no fake kernel for some arguments (a _foreach_ op's tensor of
        # scalars): their outputs' fakes come from an eager run.
        eager = target(*_clone(sample.args), **_clone(sample.kwargs))
        val = pytree.tree_map(lambda t: fake_mode.from_tensor(t, static_shapes=True) if isinstance(t, torch.Tensor) else t, eager)
    call = graph.call_function(target, tuple(args), dict(kwargs))
    call.meta["val"] = val
    add_outputs(graph, call, val)
    return fx.GraphModule(torch.nn.Module(), graph), tensors


def add_outputs(graph: fx.Graph, call: fx.Node, val: Any) -> None:
    """The graph's output: the call's value, a tuple read through ``getitem`` nodes."""
    if isinstance(val, (tuple, list)):
        outs = []
        for i, item in enumerate(val):
            getter = graph.call_function(operator.getitem, (call, i))
            getter.meta["val"] = item
            outs.append(getter)
        graph.output(tuple(outs))
    else:
        graph.output((call,))


def _bind(sample: Sample, tensors: list[torch.Tensor]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The sample's arguments with its tensors replaced, in order, by ``tensors``."""
    remaining = iter(tensors)
    return pytree.tree_map(lambda x: next(remaining) if isinstance(x, torch.Tensor) else x, (sample.args, sample.kwargs))


def _flat_outputs(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _check_output(name: str, actual: Any, expected: Any, undefined_values: bool) -> None:
    if not isinstance(expected, torch.Tensor):
        expected = torch.tensor(expected)
        actual = actual.reshape(()) if isinstance(actual, torch.Tensor) else torch.tensor(actual)
    if undefined_values:
        assert (actual.dtype, actual.shape) == (expected.dtype, expected.shape), name
        return
    torch.testing.assert_close(actual, expected, equal_nan=True, msg=lambda m: f"{name}: {m}")


# Collectives run on a process group: one of one rank (gloo) for the walk.
COLLECTIVE_NAMESPACES = ("_c10d_functional", "c10d_functional")


@pytest.mark.parametrize("target,index", _cases())
def test_converter_matches_eager(target: Any, index: int | None) -> None:
    if getattr(target, "namespace", None) in COLLECTIVE_NAMESPACES:
        from tests.conftest import process_group

        with process_group("gloo"):
            _check_converter(target, index)
    else:
        _check_converter(target, index)


def _check_converter(target: Any, index: int | None) -> None:
    converter = CONVERTERS.get(target)
    if index is None:
        pytest.fail(f"converter of {target} ({converter.where}) has no samples")
    sample = _samples_of(converter)[index]
    gm, tensors = one_node_graph(target, sample)
    result = convert_to_ascend_ir(gm, name=f"walk_{index}", convert_refused=True)  # every converter, refused ops too
    placeholders = result.graph.ops_of_type(UNSUPPORTED_OP_TYPE)
    assert not placeholders, [op.attr_value("_fxlab_reason") for op in placeholders]

    check_against_eager(target, sample, result.graph, _clone(tensors), list(range(len(tensors))))


def check_against_eager(target: Any, sample: Sample, graph: Any, ir_inputs: list[Any], positions: list[int]) -> None:
    """Run ``graph`` on ``ir_inputs`` (the sample's tensors at ``positions`` among them)
    and compare its outputs, and the tensors it writes, with the op run eagerly."""
    tensors = [ir_inputs[i] for i in positions]
    eager_tensors = _clone(tensors)
    eager_args, eager_kwargs = _bind(sample, eager_tensors)
    # Outputs an output mask turned off are None in ATen and absent from the graph.
    expected = [e for e in _flat_outputs(REFERENCES.get(str(target), target)(*eager_args, **eager_kwargs)) if e is not None]
    if str(target) in OUTPUT_ORDER:
        expected = [expected[i] for i in OUTPUT_ORDER[str(target)]]
    values: dict[str, Any] = {}
    ge_outputs = execute(graph, ir_inputs, values)
    # What the converter computed for each output, those TorchAir makes on the host too
    # (a view of an input: its GE op is in the graph, read by nothing); no None outputs.
    actual = [a for a in converter_fx_outputs(graph, ir_inputs, ge_outputs, values) if a is not None]

    assert len(actual) == len(expected), f"{len(actual)} graph outputs, eager gave {len(expected)}"
    if str(target) in RANDOM_DRAWS:
        ge_shaped = GE_SHAPED_OUTPUTS.get(str(target), set())
        for i, (got, want) in enumerate(zip(actual, expected)):
            if i not in ge_shaped:
                assert (got.dtype, got.shape) == (want.dtype, want.shape), f"{target} output {i}"
        assert RANDOM_DRAWS[str(target)](sample, actual, expected), f"{target}: not draws of the right kind: {actual}"
        return
    undefined = str(target) in VALUES_UNDEFINED
    scratch = SCRATCH_OUTPUTS.get(str(target), set())
    for i, (got, want) in enumerate(zip(actual, expected)):
        _check_output(f"{target} output {i}", got, want, undefined or i in scratch)
    out_tensors = _out_argument_positions(target, sample, len(tensors))
    if str(target) in NOT_WRITTEN_BACK:
        out_tensors.add(0)
    for i, (got, want) in enumerate(zip(tensors, eager_tensors)):
        if i in out_tensors:
            continue
        torch.testing.assert_close(got, want, equal_nan=True, msg=lambda m: f"{target} input {i} after the op: {m}")


def _out_argument_positions(target: Any, sample: Sample, count: int) -> set[int]:
    """Which of the sample's tensors are ``out=`` arguments (keyword-only and written): a
    converter of an ``.out`` overload returns the result, as TorchAir's do, and never
    writes ``out`` (a functional graph has no such node; the value is what counts)."""
    schema = getattr(target, "_schema", None)  # higher-order ops have none
    arguments = schema.arguments if schema is not None else []
    written = {a.name for a in arguments if a.kwarg_only and a.alias_info is not None and a.alias_info.is_write}
    positions: set[int] = set()
    index = sum(1 for leaf in pytree.tree_leaves(sample.args) if isinstance(leaf, torch.Tensor))
    # Tensors are numbered in order of appearance: the positional ones, then the keywords.
    for name, value in sample.kwargs.items():
        leaves = [leaf for leaf in pytree.tree_leaves(value) if isinstance(leaf, torch.Tensor)]
        if name in written:
            positions.update(range(index, index + len(leaves)))
        index += len(leaves)
    assert index == count
    return positions
