"""Ranks started by torch.distributed's launcher: their environment and results, a rank
that fails (the others are stopped), and a rank that hangs (reported with where it was,
all stopped at the timeout). Each test starts two small processes."""
from __future__ import annotations

import os
import time

import torch
import torch.distributed as dist

from fxlab.distributed.launch import launch_ranks
from fxlab.errors import FxlabError

ENV = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR")


def _sum_ranks(reporter, mode: str):
    dist.init_process_group("gloo")
    try:
        rank = dist.get_rank()
        reporter.phase("reducing")
        if mode == "fail" and rank == 1:
            raise FxlabError("rank 1 cannot go on")
        if mode == "hang" and rank == 1:
            while True:
                time.sleep(0.05)
        x = torch.tensor([rank + 1.0])
        dist.all_reduce(x)
        reporter.phase("done")
        return {"sum": x.item(), **{k: os.environ[k] for k in ENV}}
    finally:
        dist.destroy_process_group()


def test_every_rank_gets_torchruns_environment_and_returns_its_result(tmp_path):
    result = launch_ranks(2, _sum_ranks, ("ok",), timeout=120, run_dir=tmp_path)
    assert not result.failures
    assert [result.results[r]["sum"] for r in (0, 1)] == [3.0, 3.0]
    assert [(result.results[r]["RANK"], result.results[r]["LOCAL_RANK"]) for r in (0, 1)] == [("0", "0"), ("1", "1")]
    assert {(r["WORLD_SIZE"], r["LOCAL_WORLD_SIZE"], r["MASTER_ADDR"]) for r in result.results.values()} == {("2", "2", "127.0.0.1")}


def test_a_failing_rank_is_reported_with_its_message_and_the_other_stopped(tmp_path):
    result = launch_ranks(2, _sum_ranks, ("fail",), timeout=120, run_dir=tmp_path)
    assert result.failures[1].message == "rank 1 cannot go on" and result.failures[1].kind == "error"
    assert 0 not in result.results  # stopped, waiting in its all_reduce
    assert result.seconds < 60


def test_a_hanging_rank_is_stopped_at_the_timeout_with_where_it_was(tmp_path):
    result = launch_ranks(2, _sum_ranks, ("hang",), timeout=8, run_dir=tmp_path)
    assert result.timed_out and result.seconds < 40
    hung = result.failures[1]
    assert hung.kind == "timeout" and "rank 1 did not finish within 8 s (it was reducing)" == hung.message
    assert "in _sum_ranks" in hung.log_tail and "test_launch.py" in hung.log_tail
