"""List the public names of TorchAir, npugraph_ex and torch_npu from a torch_npu wheel,
for fxlab's stand-ins (``fxlab/compat/torch_npu_files/public_names.json``).

The wheel's Python sources are read, never imported (see ``fxlab/compat/public_names.py``
for the rule that makes a name public). Run from the repository's root, with fxlab
importable::

    python scripts/list_public_names.py --version 2.13.0   # pip downloads the wheel
    python scripts/list_public_names.py --wheel torch_npu-2.13.0-...whl

A developer script, not installed with fxlab; ``tests/compat/test_public_names.py``
compares the stand-ins with the list it writes.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from fxlab.compat.public_names import SHIPPED_NAMES_FILE, scan
from fxlab.compat.torchair_fetch import wheel_facts, wheel_parser, with_wheel

SCRIPT = "scripts/list_public_names.py"
# Where each package's sources sit in the wheel. torch_npu's own list leaves out the two
# packages under its ``dynamo`` folder, listed under their own names.
PACKAGE_FOLDERS = {"torchair": "torch_npu/dynamo/torchair", "npugraph_ex": "torch_npu/dynamo/npugraph_ex", "torch_npu": "torch_npu"}
NESTED = ("torch_npu.dynamo.torchair", "torch_npu.dynamo.npugraph_ex")


def list_names(wheel_path: Path) -> dict[str, Any]:
    """The lists made from ``wheel_path``, with the wheel they were made from."""
    sha256 = hashlib.sha256(wheel_path.read_bytes()).hexdigest()
    with tempfile.TemporaryDirectory(prefix="torch-npu-sources-") as tmp, zipfile.ZipFile(wheel_path) as wheel:
        version, _ = wheel_facts(wheel)
        members = [m for m in wheel.namelist() if m.startswith("torch_npu/") and m.endswith(".py")]
        wheel.extractall(tmp, members)
        roots = {package: Path(tmp) / folder for package, folder in PACKAGE_FOLDERS.items() if (Path(tmp) / folder).is_dir()}
        found = scan(roots)
    if "torch_npu" in found["modules"]:
        found["modules"]["torch_npu"] = [m for m in found["modules"]["torch_npu"] if not m.startswith(tuple(f"{n}." for n in NESTED))]
    return {"torch_npu": version, "wheel": wheel_path.name, "sha256": sha256, "made_by": SCRIPT, **found}


def main(argv: list[str] | None = None) -> int:
    parser = wheel_parser(__doc__.splitlines()[0], SHIPPED_NAMES_FILE, "the file to write")
    args = parser.parse_args(argv)
    names = with_wheel(args.wheel, args.version, list_names)
    args.out.write_text(json.dumps(names, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"the public names of torch_npu {names['torch_npu']} are in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
