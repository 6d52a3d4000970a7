"""Every converter's samples through fxlab's built-in conversion and TorchAir's own.

Each sample becomes a one-node functional graph; the built-in side converts its
``pre_ge`` graph, the bridge the functional graph (TorchAir runs its own passes), and
``diff_ir`` compares the two GE graphs: op types, attrs, wiring, output dtypes and order
of creation. A converter passes when every sample gives TorchAir's graph, up to the
differences docs/torchair-differences.md lists as impossible to remove on a CPU machine.

Not compared, each with its reason in the skip message:

- a sample TorchAir cannot convert here (the bridge's run of TorchAir fails, or
  TorchAir's converter raises or is missing for it): there is no graph to compare with;
  the converter's other samples are still compared, and it is skipped when none can be;
- an ``out=`` overload: the node's value is its ``out`` argument, a graph input, so
  TorchAir returns that input and keeps no op to compare.

Both sides run TorchAir's GE graph passes after conversion (the built-in its own copies:
:mod:`fxlab.passes.ge_passes`), so a sample argument that only lends its shape is dropped
on both sides and the comparison is exact.

The converters of torch_npu's operators exist only while the operators are defined (the
TorchAir session defines them from its torch_npu copy); they are named from their table
and skipped when the session has no such operator.

``STILL_DIFFERENT`` lists the converters whose graphs do not match TorchAir's yet; it is
empty now. Any listed one is an expected failure that must fail: when it starts to match,
the test says so, so the list only shrinks (apart from newly added converters that
differ). To regenerate it after converters are added or fixed, print the names of
every converter whose samples still differ::

    PYTHONPATH=. python -m tests.compat.test_bridge_converters

and paste the printed set over ``STILL_DIFFERENT``.
"""
from __future__ import annotations

from tests.conftest import torchair_path_or_skip, torchair_session_or_skip

from dataclasses import dataclass, field
from typing import Any

import pytest

from fxlab.compat.bridge import TorchAirConversionError, run_torchair_conversion
from fxlab.compat.native_standins.torch_npu_runtime import DEFAULT_SOC
from fxlab.diff.ir_diff import diff_ir
from fxlab.passes import converters  # noqa: F401 - registers the shipped converters
from fxlab.passes.convert_to_ascend_ir import Status, convert_to_ascend_ir
from fxlab.passes.converters.npu import NPU_CONVERTERS
from fxlab.passes.converters.registry import CONVERTERS, ORIGIN_FXLAB
from fxlab.passes.ge_passes import ge_graph_passes
from fxlab.passes.pre_ge import pre_ge_graph
from tests.compat.test_bridge_examples import Classifier, listed_differences
from tests.passes.converters.test_registry_walk import _samples_of, one_node_graph

pytestmark = pytest.mark.filterwarnings("ignore:Failed to import torchair")

STILL_DIFFERENT: set[str] = set()

# Converters TorchAir has only in its arch35 form (its is_arch35(): on Atlas A2/A3 they
# raise): their samples are converted on a stand-in machine with an arch35 SoC.
ARCH35_ONLY = {"aten._native_batch_norm_legit.default", "aten._native_batch_norm_legit.no_stats"}
ARCH35_SOC = "Ascend950PR"

OUT_VARIANT = "an out= node's value is its out argument, a graph input: TorchAir returns that input and keeps no op to compare"


def _shipped() -> list[Any]:
    return sorted((c for c in CONVERTERS if c.origin == ORIGIN_FXLAB and c.samples is not None), key=lambda c: str(c.target))


def _names() -> list[str]:
    """The shipped converters with samples, by target name. Those of torch_npu's operators
    are registered only while the operators are defined (in the TorchAir session, from
    its torch_npu copy), so they are named from their table."""
    npu = {f"npu.{name}" for name, (_, samples) in NPU_CONVERTERS.items() if samples is not None}
    return sorted({str(c.target) for c in _shipped()} | npu)


def _params() -> list[Any]:
    marks = [pytest.mark.xfail(strict=True, reason="graph still differs from TorchAir's")]
    return [pytest.param(name, id=name, marks=marks if name in STILL_DIFFERENT else []) for name in _names()]


def _live_converter(name: str) -> Any:
    found = [c for c in _shipped() if str(c.target) == name]
    if not found:
        pytest.skip(f"{name} is not defined in this TorchAir session (torch_npu's operators come from a torch_npu copy)")
    return found[0]


@pytest.fixture(scope="module")
def torchair():
    yield from torchair_session_or_skip()


def writes_out_argument(target: Any) -> bool:
    schema = getattr(target, "_schema", None)
    return schema is not None and any(a.kwarg_only and a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)


@dataclass
class Outcome:
    """What comparing a converter's samples found: unlisted differences, and why samples
    were left out."""

    differences: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    compared: int = 0


def compare_samples(torchair: Any, converter: Any) -> Outcome:
    views = set(torchair.module("_ge_concrete_graph.continguous_utils").view_white_list)
    rows = listed_differences()
    outcome = Outcome()
    for index, sample in enumerate(_samples_of(converter)):
        gm, _ = one_node_graph(converter.target, sample)
        try:
            soc = ARCH35_SOC if str(converter.target) in ARCH35_ONLY else DEFAULT_SOC
            theirs = run_torchair_conversion(gm, "sample", torchair, soc=soc)
        except TorchAirConversionError as exc:
            outcome.skipped.append(f"sample {index}: the bridge cannot run TorchAir on it: {str(exc).splitlines()[0]}")
            continue
        failed = [r for r in theirs.nodes if r.status in (Status.RAISED, Status.UNSUPPORTED)]
        if failed:
            first_line = (failed[0].message or "").splitlines()[:1]
            outcome.skipped.append(f"sample {index}: TorchAir does not convert it here ({failed[0].status.value}: {first_line})")
            continue
        # The built-in conversion refuses arch35-only ops (as TorchAir fails on them on
        # Atlas A2/A3); against an arch35 machine, fxlab's converter runs as asked.
        builtin = convert_to_ascend_ir(pre_ge_graph(gm).gm, "sample", convert_refused=soc == ARCH35_SOC).graph
        ge_graph_passes(builtin)
        outcome.compared += 1
        targets = {n.name: str(n.target) for g in (gm, theirs.fx_graph) for n in g.graph.nodes if n.op == "call_function"}
        issues = Classifier(builtin, theirs.graph, targets, views).issues(diff_ir(builtin, theirs.graph))
        outcome.differences += [
            f"sample {index}: {i.kind} {i.op_type} [{i.detail}] at {i.where}"
            for i in issues
            if not any(r.explains(i) for r in rows)
        ]
    return outcome


@pytest.mark.parametrize("name", _params())
def test_samples_convert_to_torchairs_graph(torchair, name):
    converter = _live_converter(name)
    if writes_out_argument(converter.target):
        pytest.skip(OUT_VARIANT)
    outcome = compare_samples(torchair, converter)
    if not outcome.compared:
        pytest.skip("; ".join(outcome.skipped))
    assert not outcome.differences, "\n".join(outcome.differences)


def test_still_different_names_only_shipped_converters():
    assert STILL_DIFFERENT <= set(_names())


def still_different(torchair: Any) -> list[str]:
    """The converters whose compared samples still differ from TorchAir's: ``STILL_DIFFERENT``."""
    return [
        str(c.target)
        for c in _shipped()
        if not writes_out_argument(c.target) and compare_samples(torchair, c).differences
    ]


if __name__ == "__main__":
    import warnings

    from fxlab.compat.bridge import open_torchair

    warnings.filterwarnings("ignore", "Failed to import torchair")
    with open_torchair(torchair_path_or_skip()) as session:
        print("STILL_DIFFERENT = {\n" + "".join(f'    "{name}",\n' for name in still_different(session)) + "}")
