"""Shared fixtures: example paths and cached traces (capturing is the slow part)."""
from __future__ import annotations

import contextlib
import functools
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

os.environ.setdefault("FXLAB_WIDTH", "160")
os.environ.setdefault("FXLAB_DEBUG", "1")  # a bug in fxlab raises in tests instead of becoming exit 70

# Property tests: a few hundred programs by default (CI), thousands with
# `--hypothesis-profile thorough`. Each example compiles a model: no deadline.
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("ci", max_examples=200, deadline=None, print_blob=True)
_hypothesis_settings.register_profile("thorough", max_examples=2000, deadline=None, print_blob=True)
_hypothesis_settings.load_profile(os.environ.get("FXLAB_HYPOTHESIS_PROFILE", "ci"))


@functools.cache
def _capture(
    name: str, entry: str | None = None, stages: tuple[str, ...] | None = None, mode: str | None = None, dynamic: bool = False
):
    from fxlab.stage_names import ALL_STAGES
    from tests.sessions import capture_of

    return capture_of(EXAMPLES / f"{name}.py", entry=entry, stages=stages or ALL_STAGES, mode=mode, dynamic=dynamic)


def _trace(
    name: str, entry: str | None = None, stages: tuple[str, ...] | None = None, mode: str | None = None, dynamic: bool = False
):
    return _capture(name, entry, stages, mode, dynamic).trace


@pytest.fixture(scope="session")
def example_trace():
    """``example_trace("inplace_ops")``: the full trace of an example, captured once
    (``mode="reduce-overhead"`` for the aclgraph path, ``dynamic=True`` as ``--dynamic``)."""
    return _trace


@pytest.fixture(scope="session")
def example_capture():
    """``example_capture("inplace_ops")``: the capture behind :func:`example_trace` (the
    trace, and the live graph modules its checks ran on: ``.graphs[k].modules``)."""
    return _capture


@pytest.fixture
def write_model(tmp_path):
    """Write a model file from source text and return its path."""

    def write(source: str, name: str = "model.py") -> Path:
        path = tmp_path / name
        path.write_text(source)
        return path

    return write


# -- TorchAir's sources ----------------------------------------------------------------------
# Tests that need TorchAir's Python sources (the bridge, `--converter torchair`, TorchAir's
# own files) carry the `torchair` marker: by hand, or by using the `torchair_path` fixture
# directly or through another fixture. Without a TorchAir copy they are skipped with the
# reason; after `fxlab torchair fetch`, `pytest -m torchair` runs exactly them.
TORCHAIR_MARK = "torchair"
TORCHAIR_FIXTURE = "torchair_path"


@functools.cache
def _no_torchair_reason() -> str | None:
    from fxlab.compat.torchair_copies import TorchAirNotFoundError, find_torchair

    try:
        find_torchair()
    except TorchAirNotFoundError as exc:
        return f"needs TorchAir's sources: {exc}"
    return None


@pytest.hookimpl(tryfirst=True)  # before `-m` selects by marker
def pytest_collection_modifyitems(config, items):
    for item in items:
        if TORCHAIR_FIXTURE in getattr(item, "fixturenames", ()):
            item.add_marker(TORCHAIR_MARK)
    marked = [item for item in items if item.get_closest_marker(TORCHAIR_MARK)]
    reason = _no_torchair_reason() if marked else None
    for item in marked if reason else ():
        item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def torchair_path():
    """The TorchAir copy the bridge finds (None: the installed TorchAir is importable)."""
    from fxlab.compat.torchair_copies import find_torchair

    return find_torchair()


def torchair_session(path):
    """A TorchAir session for a fixture (that uses `torchair_path`) to yield from."""
    from fxlab.compat.bridge import open_torchair

    with open_torchair(path) as loaded:
        yield loaded


@contextlib.contextmanager
def process_group(backend: str = "gloo", world_size: int = 1, rank: int = 0):
    """A default process group for the block, in this process, destroyed afterwards: gloo
    over an in-memory store (one rank), or torch's fake group of ``world_size`` ranks."""
    import torch.distributed as dist

    if backend == "fake":
        from torch.testing._internal.distributed.fake_pg import FakeStore

        store = FakeStore()
    else:
        store = dist.HashStore()
    dist.init_process_group(backend, store=store, rank=rank, world_size=world_size)
    try:
        yield dist.group.WORLD
    finally:
        dist.destroy_process_group()
