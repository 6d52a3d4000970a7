"""Regenerate the table of TorchAir's ``CompilerConfig`` tree fxlab ships
(``fxlab/compat/torchair_configs.json``) from TorchAir's sources.

    python scripts/scan_torchair_configs.py [TORCHAIR_DIR]

TORCHAIR_DIR: a TorchAir source tree (default: the copy ``--converter torchair`` finds,
e.g. the one ``fxlab torchair fetch`` extracts). A developer script: it is not installed
with fxlab; ``tests/compat/test_torchair_config_scan.py`` fails when the shipped table
differs from a fresh scan.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fxlab.compat.torchair_config_scan import CONFIGS_PATH, configs_text, scan_configs
from fxlab.compat.torchair_copies import find_torchair
from fxlab.compat.torchair_versions import read_torchair_version


def main(argv: list[str], path: Path = CONFIGS_PATH) -> int:
    where = find_torchair(argv[0] if argv else None)
    if where is None:
        import torchair  # the installed one

        where = Path(torchair.__file__).parent
    origin = f"TorchAir of torch_npu {read_torchair_version(where).torch_npu or 'an unknown torch_npu release'}"
    path.write_text(configs_text(scan_configs(where), origin), encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
