"""Which ops of torch's and torch_npu's own namespaces (ATen, prims, torch_npu's ``npu``
operators, the collectives ...) TorchAir converts, refuses or has no converter for, and
whether fxlab's built-in conversion agrees: the table users look for in TorchAir's "supported ATen API"
list, from TorchAir's converter verdicts (a fresh scan of its sources, or the table
fxlab ships) and fxlab's converter registry.

fxlab's side for one op: ``converts`` (a converter runs, as TorchAir's does), ``refuses``
(it marks the op as one TorchAir fails on; ``own converter`` says fxlab could convert it
with ``--convert-refused``) or ``no converter``. It agrees with TorchAir when both convert
or both fail.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any
from collections.abc import Iterable, Mapping

from fxlab.passes.torchair_refusals import CONVERTS, FAILS_WHEN_RUN, NO_CONVERTER, REFUSES, TorchAirVerdict, is_protected

FXLAB_CONVERTS, FXLAB_REFUSES, FXLAB_NONE = "converts", "refuses", "no converter"


@dataclass
class CoverageRow:
    op: str
    torchair: str  # converts | refuses | no converter
    fxlab: str  # converts | refuses | no converter
    agrees: bool
    own_converter: bool = False  # fxlab has a converter it runs only with --convert-refused
    count: int | None = None  # nodes of the op in the model, when a model was given
    reason: str = ""  # TorchAir's reason when it fails


@dataclass
class Coverage:
    rows: list[CoverageRow]
    origin: str  # where TorchAir's verdicts came from
    summary: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"origin": self.origin, "summary": dict(self.summary), "ops": [asdict(r) for r in self.rows]}


def fxlab_verdict(op: str, torchair: str, fxlab_ops: set[str]) -> tuple[str, bool]:
    """fxlab's side for ``op`` and whether it has its own converter for it."""
    own = op in fxlab_ops
    if torchair != CONVERTS:
        return FXLAB_REFUSES, own
    return (FXLAB_CONVERTS if own else FXLAB_NONE), False


def coverage(
    verdicts: Mapping[str, TorchAirVerdict],
    fxlab_ops: Iterable[str],
    origin: str,
    model_ops: Mapping[str, int] | None = None,
) -> Coverage:
    """One row per op of torch's and torch_npu's own namespaces (aten, prims, npu, the
    collectives ...) TorchAir or fxlab knows (or per op of the model, with its node count,
    when ``model_ops`` is given); a user's custom op has no row."""
    fxlab_set, table = set(fxlab_ops), dict(verdicts)
    if model_ops is not None:
        names = sorted(model_ops)
    else:
        names = sorted({op for op in (*verdicts, *fxlab_set) if is_protected(op, table)})
    rows = []
    for op in names:
        verdict = verdicts.get(op)
        failure = FAILS_WHEN_RUN.get(op)
        if failure is not None:  # its converter does more than raise, yet fails when run
            verdict = TorchAirVerdict(op, REFUSES, *failure)
        if verdict is None and not is_protected(op, table):
            continue  # custom ops: TorchAir's auto converter decides, see `fxlab ops check`
        torchair = verdict.verdict if verdict is not None else NO_CONVERTER
        fxlab, own = fxlab_verdict(op, torchair, fxlab_set)
        agrees = (torchair == CONVERTS) == (fxlab == FXLAB_CONVERTS)
        reason = verdict.reason if verdict is not None else ""
        rows.append(CoverageRow(op, torchair, fxlab, agrees, own, None if model_ops is None else model_ops[op], reason))
    return Coverage(rows, origin, _summary(rows))


def _summary(rows: list[CoverageRow]) -> dict[str, int]:
    torchair_converts = [r for r in rows if r.torchair == CONVERTS]
    return {
        "ops": len(rows),
        "torchair_converts": len(torchair_converts),
        "torchair_refuses": sum(r.torchair == REFUSES for r in rows),
        "torchair_no_converter": sum(r.torchair == NO_CONVERTER for r in rows),
        "fxlab_converts_of_torchair_converts": sum(r.fxlab == FXLAB_CONVERTS for r in torchair_converts),
        "fxlab_own_converter_of_torchair_failures": sum(r.own_converter for r in rows if r.torchair != CONVERTS),
        "disagree": sum(not r.agrees for r in rows),
    }
