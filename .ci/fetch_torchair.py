#!/usr/bin/env python3
"""Fetch TorchAir's Python sources for the installed torch, without installing torch_npu.

TorchAir ships inside the torch_npu wheel. This script asks pip which torch_npu releases
exist, picks the one built for the installed torch (the newest ``.postN`` of the same
X.Y.Z; else the closest lower release), downloads that wheel with
``pip download --no-deps --only-binary=:all:``, and extracts only
``torch_npu/dynamo/torchair/**`` (and torch_npu's operator schemas and Meta functions,
which fxlab reads to define torch_npu's operators) into ``.cache/torchair/<version>/`` beside a
``torchair-source.json`` naming the release and the torch it requires. torch_npu is never
installed: without CANN it breaks ``import torch``.

Prints the extracted ``torchair`` directory on stdout (the value for FXLAB_TORCHAIR_PATH);
progress goes to stderr. Exit 1 when no wheel can be had.

    python .ci/fetch_torchair.py [--torch-version 2.13.0] [--cache-dir DIR] [--wheel FILE]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

PACKAGE = "torch_npu"
MEMBER_PREFIX = "torch_npu/dynamo/torchair/"
# torch_npu's operator schemas and Meta functions (read, never imported as torch_npu).
OPERATOR_FILES = (
    "torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml",
    "torch_npu/op_plugin/meta/_meta_registrations.py",
)
SOURCE_FILE = "torchair-source.json"
REPO_ROOT = Path(__file__).resolve().parents[1]


def log(message: str) -> None:
    print(f"fetch_torchair: {message}", file=sys.stderr)


def release_of(version: str) -> tuple[int, ...]:
    found = re.match(r"(\d+(?:\.\d+)*)", version)
    return tuple(int(p) for p in found.group(1).split("."))[:3] if found else ()


def sort_key(version: str) -> tuple[tuple[int, ...], int]:
    post = re.search(r"\.post(\d+)", version)
    return release_of(version), int(post.group(1)) if post else -1


def choose_release(available: list[str], torch_version: str) -> str | None:
    """The newest release of the torch's X.Y.Z, else the newest below it."""
    wanted = release_of(torch_version)
    stable = [v for v in available if re.fullmatch(r"\d+(\.\d+)*(\.post\d+)?", v)]
    same = [v for v in stable if release_of(v) == wanted]
    lower = [v for v in stable if release_of(v) < wanted]
    pool = same or lower
    return max(pool, key=sort_key) if pool else None


def available_releases() -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", PACKAGE, "--only-binary=:all:"],
        capture_output=True, text=True, check=False,
    )
    found = re.search(r"Available versions:\s*(.+)", out.stdout)
    if not found:
        raise RuntimeError(f"pip could not list {PACKAGE} releases: {(out.stderr or out.stdout).strip()[-400:]}")
    return [v.strip() for v in found.group(1).split(",") if v.strip()]


def download_wheel(version: str, into: Path) -> Path:
    log(f"downloading {PACKAGE}=={version} (not installing it)")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", f"{PACKAGE}=={version}", "--no-deps", "--only-binary=:all:", "-d", str(into), "-q"],
        check=True, stdout=sys.stderr,
    )
    wheels = sorted(into.glob(f"{PACKAGE}-*.whl"))
    if not wheels:
        raise RuntimeError(f"pip download left no {PACKAGE} wheel in {into}")
    return wheels[0]


def wheel_facts(wheel: zipfile.ZipFile) -> tuple[str, str | None]:
    """(torch_npu version, the torch version pattern it requires)."""
    name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    text = wheel.read(name).decode("utf-8")
    version = re.search(r"^Version:\s*(\S+)", text, re.M)
    requires = re.search(r"^Requires-Dist:\s*torch\s*==\s*([0-9][^\s;,]*)", text, re.M)
    return (version.group(1) if version else "unknown"), (requires.group(1) if requires else None)


def extract_torchair(wheel_path: Path, cache_dir: Path) -> Path:
    with zipfile.ZipFile(wheel_path) as wheel:
        version, requires = wheel_facts(wheel)
        target = cache_dir / version
        members = [m for m in wheel.namelist() if (m.startswith(MEMBER_PREFIX) and not m.endswith("/")) or m in OPERATOR_FILES]
        if not members:
            raise RuntimeError(f"{wheel_path.name} holds no {MEMBER_PREFIX}")
        for member in members:
            wheel.extract(member, target)
    source = {
        "torch_npu": version,
        "requires_torch": requires,
        "wheel": wheel_path.name,
        "sha256": hashlib.sha256(wheel_path.read_bytes()).hexdigest(),
    }
    (target / SOURCE_FILE).write_text(json.dumps(source, indent=2) + "\n", encoding="utf-8")
    log(f"extracted {len(members)} files of TorchAir from {wheel_path.name} into {target}")
    return target / MEMBER_PREFIX.rstrip("/")


def cached(cache_dir: Path, version: str) -> Path | None:
    path = cache_dir / version / MEMBER_PREFIX.rstrip("/")
    complete = all((cache_dir / version / name).is_file() for name in (*OPERATOR_FILES, SOURCE_FILE))
    return path if (path / "__init__.py").is_file() and complete else None


def fetch(torch_version: str, cache_dir: Path, wheel: Path | None) -> Path:
    if wheel is not None:
        return extract_torchair(wheel, cache_dir)
    version = choose_release(available_releases(), torch_version)
    if version is None:
        raise RuntimeError(f"no {PACKAGE} release at or below torch {torch_version}")
    log(f"torch {torch_version} -> {PACKAGE} {version}")
    hit = cached(cache_dir, version)
    if hit is not None:
        log(f"already in {hit}")
        return hit
    with tempfile.TemporaryDirectory(prefix="fxlab-torch-npu-") as tmp:
        return extract_torchair(download_wheel(version, Path(tmp)), cache_dir)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torch-version", default=None, help="torch version to match (default: the installed one)")
    parser.add_argument("--cache-dir", type=Path, default=REPO_ROOT / ".cache" / "torchair")
    parser.add_argument("--wheel", type=Path, default=None, help="extract from this torch_npu wheel instead of downloading")
    args = parser.parse_args(argv)
    torch_version = args.torch_version or metadata.version("torch")
    try:
        path = fetch(torch_version, args.cache_dir, args.wheel)
    except (RuntimeError, subprocess.CalledProcessError, OSError) as exc:
        log(f"failed: {exc}")
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
