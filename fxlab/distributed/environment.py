"""One rank's process: torchrun's environment and the default process group.

A rank runs with the environment ``torchrun`` gives its workers (``RANK``,
``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``):
set by fxlab's own launch (``--nproc``) or by ``torchrun`` running fxlab. The model file
may call ``dist.init_process_group()`` itself; otherwise fxlab initialises the default
group, gloo on CPU, before the file runs (the file may read the rank and world size as it
builds the model). :func:`default_group` decides which, and destroys the group at the
end either way. A file written for Ascend asks for HCCL (``init_process_group("hccl")``,
``"cpu:gloo,npu:hccl"``, perhaps with an NPU ``device_id``): while the file runs, such a
group is made with gloo instead, as no NPU is there, and the trace says so.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import torch.distributed as dist
from torch.distributed.elastic.utils.distributed import get_free_port

from fxlab.errors import FxlabError

# What a launcher sets for every worker; fxlab needs these four (the local ones default to
# the global ones).
REQUIRED_VARIABLES = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
_INIT_CALL = re.compile(r"\binit_process_group\s*\(")
_USES_DISTRIBUTED = re.compile(r"\btorch\.distributed\b|\bfrom\s+torch\s+import\s+distributed\b")
NPU_BACKEND = "hccl"
GLOO_NOTE = "the model file's process group asks for {asked}: fxlab made it with gloo on CPU (no NPU here)"


class RankSetupError(FxlabError):
    """The rank's environment or process group is unusable."""


@dataclass(frozen=True)
class RankEnvironment:
    rank: int
    local_rank: int
    world_size: int
    local_world_size: int


def launched_rank(environ: dict[str, str] | None = None) -> RankEnvironment | None:
    """This process's rank when a launcher (torchrun, ``--nproc``) started it, else None."""
    env = os.environ if environ is None else environ
    if not all(v in env for v in REQUIRED_VARIABLES):
        return None
    try:
        rank, world = int(env["RANK"]), int(env["WORLD_SIZE"])
        return RankEnvironment(rank, int(env.get("LOCAL_RANK", rank)), world, int(env.get("LOCAL_WORLD_SIZE", world)))
    except ValueError as exc:
        raise RankSetupError(
            f"RANK / WORLD_SIZE in the environment are not integers ({exc}). Start fxlab with torchrun or --nproc N."
        ) from exc


def this_rank() -> RankEnvironment:
    """This process's rank; an error when no launcher started it."""
    env = launched_rank()
    if env is None:
        raise RankSetupError(
            f"this process is no rank: {', '.join(REQUIRED_VARIABLES)} are not all set. Run `fxlab trace --nproc N` or torchrun."
        )
    return env


def calls_init_process_group(model: Path | None) -> bool:
    """Whether the model file calls ``init_process_group`` itself (read, not run; a model
    object given without a file does not)."""
    if model is None:
        return False
    try:
        return bool(_INIT_CALL.search(model.read_text(encoding="utf-8", errors="replace")))
    except OSError:
        return False


def uses_torch_distributed(model: Path) -> bool:
    """Whether the model file imports or names ``torch.distributed`` (read, not run)."""
    try:
        return bool(_USES_DISTRIBUTED.search(model.read_text(encoding="utf-8", errors="replace")))
    except OSError:
        return False


@contextlib.contextmanager
def one_rank(model: Path, timeout: float, notes: list[str]) -> Iterator[None]:
    """This process as the only rank of a world of one, for the block: torchrun's
    environment for rank 0 of 1 (loopback rendezvous at a free port) and the default group
    as a rank's trace makes it (:func:`default_group`); the environment is put back after."""
    world = {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "LOCAL_WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1"}
    world["MASTER_PORT"] = str(get_free_port())
    saved = {name: os.environ.get(name) for name in world}
    os.environ.update(world)
    try:
        with default_group(model, timeout, notes):
            yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def init_default_group(timeout: float) -> None:
    """gloo on CPU, from the launcher's environment, collectives timing out after ``timeout``."""
    missing = [v for v in ("MASTER_ADDR", "MASTER_PORT") if v not in os.environ]
    if missing:
        raise RankSetupError(f"{', '.join(missing)} not set: run the ranks with torchrun or `fxlab trace --nproc N`.")
    dist.init_process_group("gloo", timeout=timedelta(seconds=timeout))


@contextlib.contextmanager
def default_group(model: Path | None, timeout: float, notes: list[str] | None = None) -> Iterator[None]:
    """The default process group for one rank's trace (see the module docstring); a
    group the file asks HCCL for is made with gloo, noted in ``notes``."""
    if not dist.is_initialized() and not calls_init_process_group(model):
        init_default_group(timeout)
    try:
        with npu_backends_on_gloo(notes if notes is not None else []):
            yield
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


@contextlib.contextmanager
def npu_backends_on_gloo(notes: list[str]) -> Iterator[None]:
    """``dist.init_process_group`` with HCCL asked for makes a gloo group instead."""
    original = dist.init_process_group

    def init_process_group(backend: str | None = None, *args: object, **kwargs: object) -> None:
        if backend is not None and NPU_BACKEND in str(backend).lower():
            notes.append(GLOO_NOTE.format(asked=repr(backend)))
            backend = "gloo"
            kwargs.pop("device_id", None)  # the NPU the group was to be bound to
        original(backend, *args, **kwargs)  # type: ignore[arg-type]

    dist.init_process_group = init_process_group
    try:
        yield
    finally:
        dist.init_process_group = original


def ensure_group(timeout: float) -> None:
    """After the model file ran: the default group, if it did not make one after all."""
    if not dist.is_initialized():
        init_default_group(timeout)
