"""Regenerate the tables fxlab ships from TorchAir's sources: which ops its converters
convert or refuse (``fxlab/passes/torchair_converters.json``) and the names its
``ge_apis`` offers (``fxlab/passes/torchair_ge_apis.json``).

    python scripts/scan_torchair_converters.py [TORCHAIR_DIR]

TORCHAIR_DIR: a TorchAir source tree (default: the copy ``--converter torchair`` finds,
e.g. the one ``fxlab torchair fetch`` extracts). A developer script: it is not installed
with fxlab; ``tests/compat/test_torchair_converter_scan.py`` fails when the shipped tables
differ from a fresh scan.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fxlab.compat.torchair_converter_scan import REFUSES, builders_text, scan_converters, scan_ge_op_builders, table_text
from fxlab.compat.torchair_copies import find_torchair
from fxlab.compat.torchair_versions import read_torchair_version
from fxlab.passes.inference_rule import GE_APIS_PATH
from fxlab.passes.torchair_refusals import TABLE_PATH


def torchair_dir(given: str | None) -> Path:
    where = find_torchair(given)
    if where is None:
        import torchair  # the installed one

        where = Path(torchair.__file__).parent
    return where


def main(argv: list[str], table_path: Path = TABLE_PATH, ge_apis_path: Path = GE_APIS_PATH) -> int:
    where = torchair_dir(argv[0] if argv else None)
    origin = f"TorchAir of torch_npu {read_torchair_version(where).torch_npu or 'an unknown torch_npu release'}"
    registrations = scan_converters(where)
    table_path.write_text(table_text(registrations, origin), encoding="utf-8")
    builders = scan_ge_op_builders(where)
    ge_apis_path.write_text(builders_text(builders, origin), encoding="utf-8")
    print(f"{len(builders)} ge_apis names -> {ge_apis_path}")
    refused = sum(r.verdict == REFUSES for r in registrations)
    print(f"{len(registrations)} registrations ({len(registrations) - refused} convert, {refused} refuse) -> {table_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
