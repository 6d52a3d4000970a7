"""Real GE dumps from the public record, parsed strictly, and GE's facts checked on them.

The files are not committed (the project commits no third-party data): put them in a
folder and name it in ``FXLAB_GE_DUMPS``. Every ``ge_proto_*.txt`` there must parse with
protobuf's text parser against fxlab's ``ge_ir.proto`` with no field skipped, and:

- ops with no originals are exactly the ops GE inserted (an empty
  ``_datadump_original_op_names``, or a name GE gives the ops it inserts), and an op GE
  inserted never carries the name of an op that was original in an earlier phase;
- every original name, and every op that survived unfused, of a later phase is found in
  an earlier phase of the same graph (its names or originals). Phases are joined as the
  tool joins them (graph id, else graph name); ``FXLAB_GE_DUMPS_SEQUENCE`` may list the
  files of one graph's phases in order (comma-separated, each a part of a file's name)
  when their names carry no graph id.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fxlab.npu_dumps.dump_model import DumpGraph
from fxlab.npu_dumps.phases import phase_chains
from fxlab.npu_dumps.read import read_dumps

FOLDER = os.environ.get("FXLAB_GE_DUMPS")
pytestmark = pytest.mark.skipif(not FOLDER, reason="set FXLAB_GE_DUMPS to a folder of real GE dumps (ge_proto_*.txt) to run these")


def _dumps():
    return read_dumps([Path(FOLDER or ".")])


def _sequences(graphs: list[DumpGraph]) -> list[list[DumpGraph]]:
    listed = [n.strip() for n in os.environ.get("FXLAB_GE_DUMPS_SEQUENCE", "").split(",") if n.strip()]
    if listed:  # each item names one file, in full or by a part of its name ("00017")
        roots = [g for g in graphs if g.parent is None]
        return [[next(g for g in roots if item in Path(g.file).name) for item in listed]]
    return list(phase_chains(graphs).values())


def test_every_file_parses_strictly():
    dumps = _dumps()
    assert dumps.graphs
    for graph in dumps.graphs:
        assert graph.ops, f"{graph.file}: {graph.name} has no ops"


def test_ops_with_no_originals_are_the_inserted_ones():
    for graph in _dumps().graphs:
        for op in graph.ops:
            assert op.inserted == (op.originals == []), f"{graph.file}: {op.name}"


def test_later_phases_come_from_earlier_ones():
    checked = 0
    for chain in _sequences(_dumps().graphs):
        earlier: set[str] = set()  # names and originals of the earlier phases
        original: set[str] = set()  # ops that were not inserted there
        for graph in chain:
            if earlier:
                for op in graph.ops:
                    if op.inserted:
                        assert op.name not in original, f"{graph.file}: inserted {op.name} was an original op earlier"
                        continue
                    missing = [name for name in op.originals if name not in earlier]
                    assert not missing, f"{graph.file}: {op.name}'s originals {missing} are in no earlier phase"
                    checked += 1
            earlier |= {op.name for op in graph.ops} | {name for op in graph.ops for name in op.originals}
            original |= {op.name for op in graph.ops if not op.inserted}
    print(f"checked {checked} ops against earlier phases")
