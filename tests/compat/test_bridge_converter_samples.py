"""Every built-in converter's samples, converted by fxlab and by TorchAir's own converter
through the bridge: the GE graphs must be identical in op types, attrs, wiring and order
of creation. Output descs are not compared: fxlab gives every op the dtype and shape it
computes, TorchAir only the values of FX nodes.

Each sample becomes the one-node functional graph the registry walk builds
(tests/passes/converters/test_registry_walk.py). Where TorchAir cannot convert the sample
on a CPU machine (its converter raises, or the bridge lacks an NPU-only piece), the test
says why and skips; the converters listed in ``KNOWN_DIFFERENCES`` differ for the reason
given there.
"""
from __future__ import annotations

from tests.conftest import torchair_session_or_skip
from tests.passes.converters.test_registry_walk import _samples_of, one_node_graph

from typing import Any

import pytest

from fxlab.compat.bridge import TorchAirConversionError, run_torchair_conversion
from fxlab.diff.ir_diff import diff_ir
from fxlab.passes import converters  # noqa: F401 - registers the shipped converters
from fxlab.passes.convert_to_ascend_ir import Status, convert_to_ascend_ir
from fxlab.passes.converters.registry import CONVERTERS, ORIGIN_FXLAB
from fxlab.passes.output_reuse import map_assign_to_graph_output

pytestmark = pytest.mark.filterwarnings("ignore:Failed to import torchair")

# Converters whose graphs differ from TorchAir's, by qualified overload name, with why.
_VIEWS = "TorchAir's view optimisation converts nothing at a view node (fxlab converts the view where it stands)"
_DT = "the bridge reads TorchAir's `dt` attrs with the proto numbering (9 reads as DT_UINT32)"
KNOWN_DIFFERENCES: dict[str, str] = {
    **{
        f"aten.{name}": _VIEWS
        for name in (
            "_unsafe_view.default", "alias.default", "as_strided.default", "detach.default", "expand.default",
            "permute.default", "reshape.default", "select.int", "slice.Tensor", "squeeze.default", "squeeze.dim",
            "t.default", "transpose.int", "unsqueeze.default", "view.default", "view.dtype", "_to_copy.default",
            "baddbmm.default", "sym_numel.default", "sym_size.int", "split.Tensor", "split_with_sizes.default", "unbind.int",
        )
    },
    **{f"aten.{name}": _DT for name in ("argmax.default", "argmin.default", "mean.dim", "searchsorted.Tensor")},
    **{
        f"aten.{name}": "the node's value aliases its input (a view, or an in-place op TorchAir converts out of place): "
        "in a one-node graph TorchAir returns the graph input and keeps none of the ops"
        for name in ("view_as_real.default", "view_as_complex.default", "masked_fill_.Scalar", "bitwise_right_shift_.Tensor")
    },
}


def _name(target: Any) -> str:
    schema = target._schema
    return f"{schema.name.replace('::', '.')}.{schema.overload_name or 'default'}"


def _cases() -> list[Any]:
    cases = []
    for converter in sorted(CONVERTERS, key=lambda c: str(c.target)):
        if converter.origin != ORIGIN_FXLAB or not hasattr(converter.target, "_schema"):
            continue
        for i in range(len(_samples_of(converter))):
            reason = KNOWN_DIFFERENCES.get(_name(converter.target))
            # Not strict: a sample may not touch the difference (and other work removes them).
            marks = [pytest.mark.xfail(reason=reason, strict=False)] if reason else []
            cases.append(pytest.param(converter.target, i, id=f"{converter.target}-{i}", marks=marks))
    return cases


@pytest.fixture(scope="module")
def torchair():
    yield from torchair_session_or_skip()


def differences(diff: Any, unread_inputs: set[str]) -> list[str]:
    """What differs in types, attrs, wiring or order, one line per op (output descs aside).

    TorchAir makes no ``Data`` for a graph input nothing reads (a sample's argument that
    only lends its static shape); fxlab makes one per input. That is the conversion
    pass's business, not a converter's, so such a lone ``Data`` is not counted here."""
    lines = []
    for node in diff.nodes:
        if node.moved and node.fx_node not in unread_inputs:
            lines.append(f"{node.fx_node}: converted at another place")
        for op in node.ops:
            if op.kind == "only_left" and op.left_type == "Data" and node.fx_node in unread_inputs:
                continue
            if unread_inputs and op.left_type == "Data" == op.right_type and set(op.attrs) == {"index"} and not op.inputs:
                continue  # numbered after the inputs TorchAir left out
            if op.kind in ("only_left", "only_right") or op.left_type != op.right_type or op.attrs or op.inputs or op.moved:
                lines.append(f"{node.fx_node}: {op.kind} {op.left_type}/{op.right_type} attrs={op.to_json()['attrs']} inputs={op.inputs} moved={op.moved}")
    if diff.outputs[0] != diff.outputs[1]:
        lines.append(f"graph outputs {diff.outputs[0]} vs {diff.outputs[1]}")
    return lines


@pytest.mark.parametrize("target,index", _cases())
def test_builtin_converter_gives_torchair_graph(torchair, target, index):
    sample = _samples_of(CONVERTERS.get(target))[index]
    if any(a.kwarg_only and a.alias_info is not None and a.alias_info.is_write for a in target._schema.arguments):
        pytest.skip("an out= node's value is its out argument, a graph input: TorchAir returns that input and no op is left to compare")
    gm, _ = one_node_graph(target, sample)
    try:
        theirs = run_torchair_conversion(gm, "g", torchair)
    except TorchAirConversionError as exc:
        pytest.skip(f"the bridge cannot run TorchAir on this sample: {str(exc).splitlines()[0]}")
    failed = [r for r in theirs.nodes if r.status in (Status.RAISED, Status.UNSUPPORTED)]
    if failed:
        pytest.skip(f"TorchAir does not convert this sample here: {failed[0].status.value}: {(failed[0].message or '').splitlines()[:1]}")
    ours = convert_to_ascend_ir(gm, "g").graph
    map_assign_to_graph_output(ours)
    diff = diff_ir(ours, theirs.graph, left_label="fxlab", right_label="torchair")
    read = {ref.rpartition(":")[0] for op in ours.ops for ref in op.inputs}
    unread = {op.fx_node for op in ours.ops if op.type == "Data" and op.name not in read}
    found = differences(diff, unread)
    assert not found, "\n".join(found)
