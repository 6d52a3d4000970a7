"""Shared fixtures: example paths and cached traces (capturing is the slow part)."""
from __future__ import annotations

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


@functools.lru_cache(maxsize=None)
def _trace(name: str, entry: str | None = None, stages: tuple[str, ...] | None = None, mode: str | None = None):
    from fxlab.capture import ALL_STAGES, capture_trace, load_model

    loaded = load_model(EXAMPLES / f"{name}.py", entry=entry)
    return capture_trace(loaded, stages=stages or ALL_STAGES, mode=mode)


@pytest.fixture(scope="session")
def example_trace():
    """``example_trace("inplace_ops")``: the full trace of an example, captured once
    (``mode="reduce-overhead"`` for the aclgraph path)."""
    return _trace


@pytest.fixture
def write_model(tmp_path):
    """Write a model file from source text and return its path."""

    def write(source: str, name: str = "model.py") -> Path:
        path = tmp_path / name
        path.write_text(source)
        return path

    return write


def torchair_path_or_skip():
    """The TorchAir copy the bridge would use (CI fetches one); skip the test without one."""
    from fxlab.compat.bridge import TorchAirNotFoundError, find_torchair

    try:
        return find_torchair()
    except TorchAirNotFoundError as exc:
        pytest.skip(f"no TorchAir copy: {exc}")


def torchair_session_or_skip():
    """A TorchAir session for a fixture to yield from; skips without a TorchAir copy."""
    from fxlab.compat.bridge import open_torchair

    with open_torchair(torchair_path_or_skip()) as loaded:
        yield loaded
