"""One rank's process group: a file written for Ascend asks for HCCL and gets gloo."""
from __future__ import annotations

import socket

import pytest
import torch
import torch.distributed as dist

from fxlab.distributed.environment import default_group


@pytest.fixture
def one_rank(monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for name, value in {"RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}.items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize(
    ("args", "kwargs", "asked"),
    [
        (("hccl",), {}, "'hccl'"),
        ((), {"backend": "cpu:gloo,npu:hccl"}, "'cpu:gloo,npu:hccl'"),
    ],
)
def test_an_hccl_group_in_the_model_file_is_made_with_gloo_and_noted(one_rank, tmp_path, args, kwargs, asked):
    model = tmp_path / "model.py"
    model.write_text("import torch.distributed as dist\ndist.init_process_group('hccl')\n")
    notes: list[str] = []
    with default_group(model, timeout=30, notes=notes):
        dist.init_process_group(*args, **kwargs)
        assert dist.get_backend() == "gloo"
        tensor = torch.ones(2)
        dist.all_reduce(tensor)
        assert tensor.tolist() == [1.0, 1.0]
    assert not dist.is_initialized()
    assert notes == [f"the model file's process group asks for {asked}: fxlab made it with gloo on CPU (no NPU here)"]
    assert dist.init_process_group.__module__ == "torch.distributed.distributed_c10d"  # put back


def test_a_gloo_group_asked_for_is_left_as_it_is(one_rank, tmp_path):
    model = tmp_path / "model.py"
    model.write_text("import torch.distributed as dist\ndist.init_process_group('gloo')\n")
    notes: list[str] = []
    with default_group(model, timeout=30, notes=notes):
        dist.init_process_group("gloo")
        assert dist.get_backend() == "gloo"
    assert notes == []
