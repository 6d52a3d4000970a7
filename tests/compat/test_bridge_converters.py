"""Every converter's samples through fxlab's built-in conversion and TorchAir's own.

Each sample becomes a one-node functional graph; the built-in side converts its
``pre_ge`` graph, the bridge the functional graph (TorchAir runs its own passes), and
``diff_ir`` compares the two GE graphs: op types, attrs, wiring, output dtypes and order
of creation. A converter passes when every sample gives TorchAir's graph, up to the
differences docs/torchair-differences.md lists as impossible to remove on a CPU machine.

Every converter's samples also have a dynamic variant
(:mod:`tests.passes.converters.dynamic_graph`: the sample traced with every dim and every
size argument dynamic, so the converter sees symbolic sizes, ``Pack`` s of them and
``Shape``/``Gather`` of dims, as in a model compiled with ``dynamic=True``), compared the same
way; a sample with nothing to mark dynamic is not compared.

Not compared, each with its reason in the skip message:

- a sample TorchAir cannot convert here (the bridge's run of TorchAir fails, or
  TorchAir's converter raises or is missing for it): there is no graph to compare with;
  the converter's other samples are still compared, and it is skipped when none can be;
- an ``out=`` overload: the node's value is its ``out`` argument, a graph input, so
  TorchAir returns that input and keeps no op to compare;
- fxlab's own nodes for TorchAir's view optimisation (``view_reshape``, ``view_sizes``):
  TorchAir makes their ops inside its walk, so they are compared through the views.

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

and paste the printed set over ``STILL_DIFFERENT``. ``STILL_DIFFERENT_DYNAMIC`` is the same
for the dynamic variants (each with its reason; the same command prints its names), and may
hold at most 5% of the converters.
"""
from __future__ import annotations

from tests.conftest import torchair_session

from dataclasses import dataclass, field
from typing import Any

import pytest

from fxlab.compat.bridge import TorchAirConversionError, run_torchair_conversion
from fxlab.compat.native_standins.torch_npu_runtime import DEFAULT_SOC
from fxlab.diff.ir_diff import diff_ir
from fxlab.passes import converters  # noqa: F401 - registers the shipped converters
from fxlab.passes.conversion_result import Status
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.converters.collectives import NPU_DEFINE_CONVERTERS
from fxlab.passes.converters.npu import NPU_CONVERTERS
from fxlab.passes.converters.registry import CONVERTERS, ORIGIN_FXLAB
from fxlab.passes.ge_passes import ge_graph_passes
from fxlab.passes.pre_ge import pre_ge_graph
from fxlab.passes.torchair_refusals import REFUSES, refusal, registrations
from tests.compat.test_bridge_examples import Classifier, listed_differences
from fxlab.passes.optimize_views import view_reshape, view_sizes
from tests.passes.converters.dynamic_graph import NotDynamic, dynamic_one_node_graph
from tests.passes.converters.test_registry_walk import _samples_of, one_node_graph

pytestmark = pytest.mark.filterwarnings("ignore:Failed to import torchair")

STILL_DIFFERENT: set[str] = set()
# The same for the dynamic variants of the samples, each with why it differs.
STILL_DIFFERENT_DYNAMIC: dict[str, str] = {}
# fxlab's own nodes for TorchAir's view optimisation (made by optimize_views): TorchAir makes
# their ops inside its walk, so they are compared through the views' converters.
FXLAB_NODES = {view_reshape, view_sizes}
FXLAB_NODE = "an fxlab node for TorchAir's view optimisation, which TorchAir does inside its walk (compared through the views)"

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
    npu_define = {f"npu_define.{name}" for name in NPU_DEFINE_CONVERTERS}
    return sorted({str(c.target) for c in _shipped()} | npu | npu_define)


def _params(expected_failures: Any = None) -> list[Any]:
    failing = STILL_DIFFERENT if expected_failures is None else expected_failures
    params = []
    for name in _names():
        reason = failing.get(name, "") if isinstance(failing, dict) else "graph still differs from TorchAir's"
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if name in failing else []
        params.append(pytest.param(name, id=name, marks=marks))
    return params


def _live_converter(name: str) -> Any:
    found = [c for c in _shipped() if str(c.target) == name]
    if not found:
        pytest.skip(f"{name} is not defined in this TorchAir session")
    return found[0]


@pytest.fixture(scope="module")
def torchair(torchair_path):
    """The TorchAir session, with a process group for the collectives (the fake one, of
    four ranks) and fxlab's collective layer opened inside it (TorchAir's npu_define
    operators get fxlab's converters registered)."""
    from fxlab.compat.collective_capture import torchair_collectives
    from tests.conftest import process_group

    for session in torchair_session(torchair_path):
        with process_group("fake", world_size=4), torchair_collectives():
            yield session


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
    refused: int = 0  # of the compared: samples both conversions refuse


def compare_samples(torchair: Any, converter: Any) -> Outcome:
    """Each sample as a one-node graph, converted both ways."""
    outcome = Outcome()
    for index, sample in enumerate(_samples_of(converter)):
        gm, _ = one_node_graph(converter.target, sample)
        _compare_graph(torchair, converter, gm, f"sample {index}", outcome)
    return outcome


def compare_dynamic_samples(torchair: Any, converter: Any) -> Outcome:
    """Each sample's dynamic variant (:mod:`tests.passes.converters.dynamic_graph`: its dims
    and size arguments symbolic), converted both ways."""
    outcome = Outcome()
    for index, sample in enumerate(_samples_of(converter)):
        try:
            dynamic = dynamic_one_node_graph(converter.target, sample)
        except NotDynamic as exc:
            outcome.skipped.append(f"sample {index}: {exc}")
            continue
        _compare_graph(torchair, converter, dynamic.gm, f"dynamic sample {index}", outcome)
    return outcome


def _compare_graph(torchair: Any, converter: Any, gm: Any, label: str, outcome: Outcome) -> None:
    """Convert ``gm`` both ways (the built-in first: TorchAir's walk may settle symbols of
    the shared shape environment) and add what differs, or why it was not compared."""
    views = set(torchair.module("_ge_concrete_graph.continguous_utils").view_white_list)
    soc = ARCH35_SOC if str(converter.target) in ARCH35_ONLY else DEFAULT_SOC
    # The built-in conversion refuses arch35-only ops (as TorchAir fails on them on
    # Atlas A2/A3); against an arch35 machine, fxlab's converter runs as asked.
    converted = convert_to_ascend_ir(pre_ge_graph(gm).gm, "sample", convert_refused=soc == ARCH35_SOC)
    try:
        theirs = run_torchair_conversion(gm, "sample", torchair, soc=soc)
    except TorchAirConversionError as exc:
        outcome.skipped.append(f"{label}: the bridge cannot run TorchAir on it: {str(exc).splitlines()[0]}")
        return
    failed = [r for r in theirs.nodes if r.status in (Status.RAISED, Status.UNSUPPORTED)]
    if failed and not _refused_by_torchair(failed[0].message or ""):
        first_line = (failed[0].message or "").splitlines()[:1]
        outcome.skipped.append(f"{label}: TorchAir does not convert it here ({failed[0].status.value}: {first_line})")
        return
    outcome.compared += 1
    if failed:  # TorchAir's converter refuses these arguments: so must the built-in one
        outcome.refused += 1
        if not any(r.status is Status.REFUSED for r in converted.nodes):
            outcome.differences.append(f"{label}: TorchAir refuses it ({(failed[0].message or '').splitlines()[0]}), the built-in converts it")
        return
    builtin = converted.graph
    ge_graph_passes(builtin)
    targets = {n.name: str(n.target) for g in (gm, theirs.fx_graph) for n in g.graph.nodes if n.op == "call_function"}
    issues = Classifier(builtin, theirs.graph, targets, views).issues(diff_ir(builtin, theirs.graph))
    rows = listed_differences()
    outcome.differences += [f"{label}: {i.kind} {i.op_type} [{i.detail}] at {i.where}" for i in issues if not any(r.explains(i) for r in rows)]


def _refused_by_torchair(message: str) -> bool:
    """Whether TorchAir's own converter refused a torch_npu operator's arguments (rather
    than the bridge lacking something TorchAir reads: fxlab's stand-ins say so)."""
    return "npu." in message.split(" raised at node")[0] and "fxlab's stand-in" not in message


def _live_comparable(name: str) -> Any:
    converter = _live_converter(name)
    if writes_out_argument(converter.target):
        pytest.skip(OUT_VARIANT)
    if converter.target in FXLAB_NODES:
        pytest.skip(FXLAB_NODE)
    return converter


@pytest.fixture(scope="module")
def outcomes() -> dict[str, Outcome]:
    """Each converter's outcome as :func:`test_samples_convert_to_torchairs_graph` found
    it, by target name (the coverage test below recomputes those it did not run)."""
    return {}


@pytest.mark.parametrize("name", _params())
def test_samples_convert_to_torchairs_graph(torchair, outcomes, name):
    outcome = outcomes[name] = compare_samples(torchair, _live_comparable(name))
    if not outcome.compared:
        pytest.skip("; ".join(outcome.skipped))
    assert not outcome.differences, "\n".join(outcome.differences)


@pytest.mark.parametrize("name", _params(STILL_DIFFERENT_DYNAMIC))
def test_dynamic_samples_convert_to_torchairs_graph(torchair, name):
    outcome = compare_dynamic_samples(torchair, _live_comparable(name))
    if not outcome.compared:
        pytest.skip("; ".join(outcome.skipped))
    assert not outcome.differences, "\n".join(outcome.differences)


# What the built-in conversion does with one of TorchAir's torch_npu converters.
IDENTICAL, REFUSED, NOT_DONE = "identical", "refused as TorchAir refuses", "not done"
# The share of TorchAir's torch_npu converters the built-in one must match (issue 30).
NPU_COVERAGE_GOAL = 0.95


def npu_verdict(torchair: Any, name: str, outcomes: dict[str, Outcome]) -> str:
    """:data:`IDENTICAL` when the built-in converter of ``name`` (``npu.x.overload``, a
    TorchAir registration) gives TorchAir's graph on every sample compared (some of them
    refused by both), :data:`REFUSED` when both conversions refuse it, else
    :data:`NOT_DONE` (no built-in converter, no sample TorchAir converts here, or a
    difference)."""
    if name.split(".", 1)[1] not in NPU_CONVERTERS:
        verdict = refusal(name)  # what the built-in conversion reports for an op it cannot convert
        return REFUSED if verdict is not None and verdict.verdict == REFUSES else NOT_DONE
    found = [c for c in _shipped() if str(c.target) == name]
    if not found or writes_out_argument(found[0].target):
        return NOT_DONE
    outcome = outcomes[name] if name in outcomes else compare_samples(torchair, found[0])
    if not outcome.compared or outcome.differences:
        return NOT_DONE
    return REFUSED if outcome.refused == outcome.compared else IDENTICAL


def test_builtin_npu_converters_give_torchairs_graphs(torchair, outcomes):
    """Issue 30's bar: of TorchAir's torch_npu (``npu``) converters, at least 95% have a
    built-in converter whose samples give TorchAir's exact graph, or are refused as
    TorchAir refuses them, judged from the per-converter comparisons above."""
    registered = sorted(name for name in registrations() if name.startswith("npu."))
    tally: dict[str, list[str]] = {IDENTICAL: [], REFUSED: [], NOT_DONE: []}
    for name in registered:
        tally[npu_verdict(torchair, name, outcomes)].append(name)
    done = len(tally[IDENTICAL]) + len(tally[REFUSED])
    figure = (
        f"TorchAir's npu converters: {len(registered)}; built-in identical {len(tally[IDENTICAL])}, "
        f"refused as TorchAir refuses {len(tally[REFUSED])}, not done {len(tally[NOT_DONE])} "
        f"({done / len(registered):.1%} done); refused: {', '.join(tally[REFUSED]) or 'none'}; "
        f"not done: {', '.join(tally[NOT_DONE]) or 'none'}"
    )
    print(figure)
    assert len(registered) > 100 and done >= NPU_COVERAGE_GOAL * len(registered), figure


def test_still_different_names_only_shipped_converters():
    assert STILL_DIFFERENT <= set(_names())
    assert set(STILL_DIFFERENT_DYNAMIC) <= set(_names())


def test_dynamic_expected_failures_stay_under_five_percent():
    """At least 95% of the converters give TorchAir's graph on their dynamic samples: the
    expected failures (kept exact by their strict marks) are at most 5% of the converters."""
    assert len(STILL_DIFFERENT_DYNAMIC) <= 0.05 * len(_names())


def still_different(torchair: Any, compare: Any = compare_samples) -> list[str]:
    """The converters whose compared samples still differ from TorchAir's: ``STILL_DIFFERENT``
    (or, with ``compare_dynamic_samples``, ``STILL_DIFFERENT_DYNAMIC``)."""
    comparable = [c for c in _shipped() if not writes_out_argument(c.target) and c.target not in FXLAB_NODES]
    return [str(c.target) for c in comparable if compare(torchair, c).differences]


if __name__ == "__main__":
    import warnings

    from fxlab.compat.bridge import find_torchair, open_torchair

    warnings.filterwarnings("ignore", "Failed to import torchair")
    with open_torchair(find_torchair()) as session:
        print("STILL_DIFFERENT = {\n" + "".join(f'    "{name}",\n' for name in still_different(session)) + "}")
        dynamic = still_different(session, compare_dynamic_samples)
        print("STILL_DIFFERENT_DYNAMIC (give each its reason):\n" + "".join(f"    {name}\n" for name in dynamic))
