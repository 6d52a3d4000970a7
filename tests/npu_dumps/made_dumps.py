"""The GE dumps ``ge_dump_maker`` makes from the saved ``superkernel_scopes`` trace in
``tests/data/golden`` (its sources read ``/tmp/fxlab-golden/examples/...``), shared by the
tests of every room that reads them."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ROOT
from tests.npu_dumps.ge_dump_maker import make_dumps

GOLDEN_TRACE = ROOT / "tests" / "data" / "golden" / "superkernel_scopes"
SOURCE = "/tmp/fxlab-golden/examples/superkernel_scopes.py"


def made_dumps(folder: Path) -> Path:
    make_dumps(GOLDEN_TRACE, folder)
    return folder


def line(number: int) -> str:
    return f"{SOURCE}:{number}"
