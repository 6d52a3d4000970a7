"""Make fxlab's copy of torch_npu's operator schemas and Meta functions from a torch_npu wheel.

fxlab defines torch_npu's operators on machines without torch_npu from two text files of
the torch_npu wheel (``fxlab/compat/torch_npu_ops.py``). This script writes what fxlab
needs of them into ``fxlab/compat/torch_npu_files/``:

- ``npu_native_functions_by_codegen.yaml``: the sections declaring torch_npu's own
  operators (the others name ATen operators torch_npu implements for its device);
- ``_meta_registrations.py.txt``: the Meta file as it is (text, so that it is package
  data and never a module of fxlab);
- ``LICENSE``: torch_npu's licence notice, from the wheel's ``.dist-info``;
- ``source.json``: the wheel the files were made from.

Each text file starts with a header saying where it came from and how to make it again.
Run from the repository's root, with fxlab importable::

    python scripts/extract_torch_npu_operators.py --version 2.13.0   # pip downloads the wheel
    python scripts/extract_torch_npu_operators.py --wheel torch_npu-2.13.0-...whl
"""

from __future__ import annotations

import hashlib
import json
import sys
import zipfile
from pathlib import Path

from fxlab.compat.torch_npu_ops import (
    META_FILE,
    OWN_SECTIONS,
    SCHEMA_FILE,
    SHIPPED_DIR,
    SHIPPED_META_FILE,
    SHIPPED_SCHEMA_FILE,
    SHIPPED_SOURCE_FILE,
)
from fxlab.compat.torchair_fetch import wheel_facts, wheel_parser, with_wheel

SCRIPT = "scripts/extract_torch_npu_operators.py"
LICENSE_NAME = "LICENSE"


def own_sections(yaml_text: str) -> str:
    """The top-level sections of the schema yaml that declare torch_npu's own operators,
    line for line; every other top-level key is left out."""
    kept: list[str] = []
    keeping = False
    for line in yaml_text.splitlines():
        if line and not line[0].isspace() and not line.startswith("-"):  # a top-level key
            key, _, value = line.partition(":")
            keeping = key in OWN_SECTIONS and not value.strip()
        if keeping:
            kept.append(line)
    return "\n".join(kept) + "\n"


def header(version: str, wheel_name: str, sha256: str, member: str, kept: str) -> str:
    """Comment lines (``#``, valid in yaml and Python) naming the file's origin."""
    lines = [
        f"Made by {SCRIPT} from torch_npu {version}",
        f"(wheel {wheel_name}, sha256 {sha256}):",
        f"{member}, {kept}.",
        f"torch_npu's licence notice is in {LICENSE_NAME} beside this file.",
        f"Do not edit; make it again with: python {SCRIPT} --version {version}",
    ]
    return "".join(f"# {line}\n" for line in lines) + "\n"


def licence_text(wheel: zipfile.ZipFile) -> str:
    """The licence file of the wheel's ``.dist-info`` (``licenses/LICENSE`` or ``LICENSE``)."""
    names = [n for n in wheel.namelist() if ".dist-info/" in n and n.rsplit("/", 1)[-1].upper().startswith("LICEN")]
    if not names:
        sys.exit("the wheel's .dist-info holds no licence file: refusing to copy torch_npu's files without it")
    return wheel.read(sorted(names)[0]).decode("utf-8")


def extract(wheel_path: Path, into: Path) -> dict[str, str | None]:
    """Write the shipped files made from ``wheel_path`` into ``into``; returns source.json's data."""
    sha256 = hashlib.sha256(wheel_path.read_bytes()).hexdigest()
    with zipfile.ZipFile(wheel_path) as wheel:
        version, requires = wheel_facts(wheel)
        schema_member, meta_member = f"torch_npu/{SCHEMA_FILE.as_posix()}", f"torch_npu/{META_FILE.as_posix()}"
        schemas = wheel.read(schema_member).decode("utf-8")
        meta = wheel.read(meta_member).decode("utf-8")
        licence = licence_text(wheel)
    sections = " and ".join(f"'{s}'" for s in OWN_SECTIONS)
    into.mkdir(parents=True, exist_ok=True)
    yaml_header = header(version, wheel_path.name, sha256, schema_member, f"only its sections {sections} (torch_npu's own operators)")
    (into / SHIPPED_SCHEMA_FILE.name).write_text(yaml_header + own_sections(schemas), encoding="utf-8")
    (into / SHIPPED_META_FILE.name).write_text(header(version, wheel_path.name, sha256, meta_member, "whole") + meta, encoding="utf-8")
    (into / LICENSE_NAME).write_text(licence, encoding="utf-8")
    source = {"torch_npu": version, "requires_torch": requires, "wheel": wheel_path.name, "sha256": sha256, "made_by": SCRIPT}
    (into / SHIPPED_SOURCE_FILE.name).write_text(json.dumps(source, indent=1) + "\n", encoding="utf-8")
    return source


def main(argv: list[str] | None = None) -> int:
    parser = wheel_parser(__doc__.splitlines()[0], SHIPPED_DIR, "where to write")
    args = parser.parse_args(argv)
    source = with_wheel(args.wheel, args.version, lambda wheel: extract(wheel, args.out))
    print(f"torch_npu {source['torch_npu']}'s operator files are in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
