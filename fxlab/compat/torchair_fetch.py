"""Fetch TorchAir's Python sources for the installed torch, without installing torch_npu
(``fxlab torchair fetch``).

TorchAir ships inside the torch_npu wheel. pip lists the torch_npu releases; the one built
for the installed torch is the newest ``.postN`` of the same X.Y.Z (else the closest lower
release). That wheel is downloaded with ``pip download --no-deps --only-binary=:all:`` and
only ``torch_npu/dynamo/torchair/**`` (and the standalone ``npugraph_ex`` backend beside it)
is extracted into ``<cache>/<version>/``, beside a
``torchair-source.json`` naming the release and the torch it requires. torch_npu is never
installed: without CANN it breaks ``import torch``.

The cache is the user's: ``$FXLAB_CACHE_DIR``, else ``$XDG_CACHE_HOME/fxlab``, else
``~/.cache/fxlab`` (TorchAir in its ``torchair/`` folder), where :func:`torchair_cache_roots`
lets the bridge find it again.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from fxlab.compat.torchair_versions import SOURCE_FILE, release_of
from fxlab.errors import FxlabError

PACKAGE = "torch_npu"
MEMBER_PREFIX = "torch_npu/dynamo/torchair/"
# torch_npu's standalone aclgraph backend, beside TorchAir in the wheel: ``--mode npugraph_ex
# --converter torchair`` runs its passes (fxlab/compat/aclgraph_bridge.py).
NPUGRAPH_EX_PREFIX = "torch_npu/dynamo/npugraph_ex/"
# torch_npu's operator schemas and Meta functions: read (never imported) to define
# torch_npu's operators on a machine without it (fxlab/compat/torch_npu_ops.py, which
# prefers these to the copy fxlab ships when they are built for the installed torch).
OPERATOR_FILES = (
    "torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml",
    "torch_npu/op_plugin/meta/_meta_registrations.py",
)
CACHE_ENV_VAR = "FXLAB_CACHE_DIR"
T = TypeVar("T")


class TorchAirFetchError(FxlabError):
    """TorchAir's sources could not be fetched (network, pip, or a bad wheel)."""

    exit_code = 1


def user_cache_dir() -> Path:
    """Where fxlab keeps downloads: ``$FXLAB_CACHE_DIR``, ``$XDG_CACHE_HOME/fxlab`` or ``~/.cache/fxlab``."""
    if os.environ.get(CACHE_ENV_VAR):
        return Path(os.environ[CACHE_ENV_VAR]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "fxlab"


def torchair_cache_dir() -> Path:
    return user_cache_dir() / "torchair"


def _sort_key(version: str) -> tuple[tuple[int, ...], int]:
    post = re.search(r"\.post(\d+)", version)
    return release_of(version), int(post.group(1)) if post else -1


def choose_release(available: list[str], torch_version: str) -> str | None:
    """The newest release of the torch's X.Y.Z, else the newest below it (no pre-releases)."""
    wanted = release_of(torch_version)
    stable = [v for v in available if re.fullmatch(r"\d+(\.\d+)*(\.post\d+)?", v)]
    pool = [v for v in stable if release_of(v) == wanted] or [v for v in stable if release_of(v) < wanted]
    return max(pool, key=_sort_key) if pool else None


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, check=False)
    except OSError as exc:
        raise TorchAirFetchError(f"pip could not be run ({exc}). Install pip into this Python, or pass --wheel FILE.") from exc


def available_releases() -> list[str]:
    done = _pip("index", "versions", PACKAGE, "--only-binary=:all:")
    found = re.search(r"Available versions:\s*(.+)", done.stdout)
    if not found:
        tail = (done.stderr or done.stdout).strip()[-300:]
        raise TorchAirFetchError(
            f"pip could not list the {PACKAGE} releases ({tail or 'no output'}). Check the network and pip's index "
            f"settings, or download a {PACKAGE} wheel yourself and pass it with --wheel FILE."
        )
    return [v.strip() for v in found.group(1).split(",") if v.strip()]


def download_wheel(version: str, into: Path) -> Path:
    done = _pip("download", f"{PACKAGE}=={version}", "--no-deps", "--only-binary=:all:", "-d", str(into), "-q")
    wheels = sorted(into.glob(f"{PACKAGE}-*.whl"))
    if done.returncode != 0 or not wheels:
        tail = (done.stderr or done.stdout).strip()[-300:]
        raise TorchAirFetchError(
            f"pip could not download {PACKAGE}=={version} ({tail or 'no wheel left behind'}). Check the network, "
            f"or download the wheel yourself and pass it with --wheel FILE."
        )
    return wheels[0]


def wheel_parser(description: str, out: Path, out_help: str) -> argparse.ArgumentParser:
    """The command line of the developer scripts that read a torch_npu wheel: ``--wheel
    FILE`` or ``--version X.Y.Z`` (downloaded with pip), and ``--out`` (default ``out``)."""
    parser = argparse.ArgumentParser(description=description)
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument("--wheel", type=Path, help="a torch_npu wheel")
    given.add_argument("--version", help="the torch_npu release to download with pip (e.g. 2.13.0)")
    parser.add_argument("--out", type=Path, default=out, help=f"{out_help} (default {out})")
    return parser


def with_wheel(wheel: Path | None, version: str | None, make: Callable[[Path], T]) -> T:
    """``make(wheel)`` on ``wheel``, or on release ``version`` of the package downloaded
    with pip into a folder removed afterwards (the developer scripts' ``--wheel`` /
    ``--version``)."""
    if wheel is not None:
        return make(wheel)
    with tempfile.TemporaryDirectory(prefix="torch-npu-wheel-") as tmp:
        return make(download_wheel(str(version), Path(tmp)))


def wheel_facts(wheel: zipfile.ZipFile) -> tuple[str, str | None]:
    """(torch_npu version, the torch version pattern it requires)."""
    name = next((n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")), None)
    text = wheel.read(name).decode("utf-8", "replace") if name else ""
    version = re.search(r"^Version:\s*(\S+)", text, re.M)
    requires = re.search(r"^Requires-Dist:\s*torch\s*==\s*([0-9][^\s;,]*)", text, re.M)
    return (version.group(1) if version else "unknown"), (requires.group(1) if requires else None)


def extract_torchair(wheel_path: Path, cache_dir: Path) -> Path:
    """Extract TorchAir from a torch_npu wheel into ``cache_dir/<version>/``; returns its folder."""
    try:
        with zipfile.ZipFile(wheel_path) as wheel:
            version, requires = wheel_facts(wheel)
            if not re.fullmatch(r"[0-9A-Za-z.+_-]+", version):  # it names a folder
                raise TorchAirFetchError(f"{wheel_path} names its version {version!r}, which is not a version. Pass a torch_npu wheel.")
            target = cache_dir / version
            members = [m for m in wheel.namelist() if m.startswith(MEMBER_PREFIX) and not m.endswith("/") and ".." not in m.split("/")]
            if not members:
                raise TorchAirFetchError(f"{wheel_path} holds no {MEMBER_PREFIX}: it is not a torch_npu wheel. Pass a torch_npu wheel.")
            members += [
                m for m in wheel.namelist() if m.startswith(NPUGRAPH_EX_PREFIX) and not m.endswith("/") and ".." not in m.split("/")
            ]
            members += [m for m in OPERATOR_FILES if m in wheel.namelist()]
            for member in members:
                wheel.extract(member, target)
    except (zipfile.BadZipFile, OSError) as exc:
        raise TorchAirFetchError(f"{wheel_path} cannot be read as a wheel ({exc}). Pass a torch_npu .whl file.") from exc
    source = {
        "torch_npu": version,
        "requires_torch": requires,
        "wheel": wheel_path.name,
        "sha256": hashlib.sha256(wheel_path.read_bytes()).hexdigest(),
    }
    (target / SOURCE_FILE).write_text(json.dumps(source, indent=2) + "\n", encoding="utf-8")
    return target / MEMBER_PREFIX.rstrip("/")


def cached(cache_dir: Path, version: str) -> Path | None:
    path = cache_dir / version / MEMBER_PREFIX.rstrip("/")
    complete = all((cache_dir / version / name).is_file() for name in (*OPERATOR_FILES, SOURCE_FILE))
    return path if (path / "__init__.py").is_file() and complete else None


def fetch_torchair(
    torch_version: str, cache_dir: Path, wheel: Path | None = None, progress: Callable[[str], None] = lambda _: None
) -> Path:
    """TorchAir's folder for ``torch_version`` in ``cache_dir``: extracted from ``wheel``,
    or from the matching torch_npu wheel (downloaded unless already there)."""
    if wheel is not None:
        return extract_torchair(wheel, cache_dir)
    version = choose_release(available_releases(), torch_version)
    if version is None:
        raise TorchAirFetchError(
            f"no {PACKAGE} release is built for torch {torch_version} or an older torch. Install a torch that torch_npu supports."
        )
    progress(f"torch {torch_version}: {PACKAGE} {version}")
    hit = cached(cache_dir, version)
    if hit is not None:
        progress(f"already fetched into {hit}")
        return hit
    with tempfile.TemporaryDirectory(prefix="fxlab-torch-npu-") as tmp:
        progress(f"downloading {PACKAGE}=={version} (it is not installed)")
        return extract_torchair(download_wheel(version, Path(tmp)), cache_dir)
