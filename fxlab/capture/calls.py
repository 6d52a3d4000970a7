"""What happened on each call of the compiled model, as plain data: which input set it got,
which Dynamo graphs ran, which were compiled on it and why (the guards that failed, in
Dynamo's words and in plain words), and how it compared with eager.

A model file may give several input sets (a serving warm-up over batch sizes; see
:mod:`fxlab.capture.input_sets`); a model with a dynamic graph and one input set gets a
second call at sizes derived from the first. The first call's checks are the trace's own
(``Trace.check``, ``Trace.ir_check``); each later call carries its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fxlab.capture.trace import CheckResult, check_from_json, check_to_json


@dataclass
class Recompile:
    """One graph compiled on a call after the first: Dynamo's reasons (the guards of the
    graphs it had that failed) and the same in plain words. No reason: Dynamo met code it
    had not compiled before (a new frame or path), not a failed guard."""

    graph: int
    reasons: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"graph": self.graph, "reasons": list(self.reasons), "words": list(self.words)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Recompile:
        return cls(int(data["graph"]), list(data.get("reasons", [])), list(data.get("words", [])))


@dataclass
class CallRecord:
    """One call of the compiled model."""

    index: int
    inputs: str  # the input set's shapes and dtypes, e.g. "x: f32[4, 8]"
    origin: str = "given"  # "given", or how fxlab derived it ("dim 0 of x: 2 -> 4")
    graphs: list[int] = field(default_factory=list)  # the graphs that ran, in order (each once)
    compiled: list[int] = field(default_factory=list)  # those compiled on this call
    recompiles: list[Recompile] = field(default_factory=list)
    check: CheckResult | None = None  # eager vs compiled on this call's inputs
    ir_check: CheckResult | None = None  # the Ascend IR of the graphs that ran, on this call's inputs

    @property
    def reused(self) -> list[int]:
        return [g for g in self.graphs if g not in self.compiled]

    @property
    def failed(self) -> bool:
        return any(c is not None and c.failed for c in (self.check, self.ir_check))

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "inputs": self.inputs,
            "origin": self.origin,
            "graphs": list(self.graphs),
            "compiled": list(self.compiled),
            "reused": self.reused,
            "recompiles": [r.to_json() for r in self.recompiles],
            "check": check_to_json(self.check),
            "ir_check": check_to_json(self.ir_check),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CallRecord:
        return cls(
            index=int(data["index"]),
            inputs=str(data.get("inputs", "")),
            origin=str(data.get("origin", "given")),
            graphs=list(data.get("graphs", [])),
            compiled=list(data.get("compiled", [])),
            recompiles=[Recompile.from_json(r) for r in data.get("recompiles", [])],
            check=check_from_json(data.get("check")),
            ir_check=check_from_json(data.get("ir_check")),
        )
